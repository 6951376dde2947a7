/// A hot, replaying holder of the latest value of a signal.
///
/// ``set(_:)`` subscribes the promise to a signal (disposing the previous one first); ``get()`` returns a
/// signal that replays the latest value, then sends each new one. The signal from ``get()`` never
/// completes.
///
/// ```swift
/// let user = Promise<String>()
/// user.set(.single("ada"))
/// let disposable = user.get().start(next: { print($0) }) // prints "ada"
/// user.set(.single("grace"))                              // prints "grace"
/// ```
///
/// Ordering: every subscriber sees values in the order they were published, once each, even when
/// ``set(_:)`` and the sources run on different threads; a value from a source that has been replaced is
/// dropped. A new subscriber receives the current value synchronously, before `start` returns, also
/// from inside a callback of this promise and while another thread is delivering.
///
/// Where callbacks run: on the thread that publishes, or on whichever publishing thread is already
/// delivering. A `set` (or a new subscription) delivers at most 64 values that other threads published
/// meanwhile; the rest then reach subscribers, still in order, on a Dispatch global thread, so that no
/// caller is kept delivering for other threads without end. Values that a subscriber's callback sets on
/// the delivering thread do not count (when other threads' values reach the bound, the rest go on in
/// order, fed-back values included, on the Dispatch thread). See the
/// Threading and disposal article, "Ordering". When values
/// are published from several threads at once, delivery may happen on whichever of those threads is
/// already delivering.
///
/// > Note: The promise keeps its source subscription until it is released or ``set(_:)`` again. The
/// > signal from ``get()`` keeps the promise alive while subscribed.
public final class Promise<T: Sendable>: Sendable {
    @usableFromInline let core: ReplayingFanOut<T>
    @usableFromInline let initializer: LockedState<Signal<T, NoError>?>
    private let deinitHandler = LockedState<(@Sendable () -> Void)?>(nil)

    /// A closure run when the promise is released.
    @preconcurrency public var onDeinit: (@Sendable () -> Void)? {
        get { self.deinitHandler.withLock { $0 } }
        set {
            let previous = self.deinitHandler.withLock { handler -> (@Sendable () -> Void)? in
                let previous = handler
                handler = newValue
                return previous
            }
            withExtendedLifetime(previous) {}
        }
    }

    /// Creates a promise that subscribes to `initializeOnFirstAccess` when first subscribed to.
    ///
    /// The first ``get()`` sets `initializeOnFirstAccess` as the source whatever was set before it, as in
    /// the original: a ``set(_:)`` made before anyone subscribes is replaced then, after its value, if
    /// it had one, reached that first subscriber.
    ///
    /// - Parameter initializeOnFirstAccess: The source to set lazily, or nil.
    public init(initializeOnFirstAccess: Signal<T, NoError>?) {
        self.core = ReplayingFanOut(value: nil)
        self.initializer = .init(initializeOnFirstAccess)
    }

    /// Creates a promise holding `value`.
    ///
    /// - Parameter value: The initial value, replayed to subscribers.
    public init(_ value: T) {
        self.core = ReplayingFanOut(value: value)
        self.initializer = .init(nil)
    }

    /// Creates an empty promise.
    public init() {
        self.core = ReplayingFanOut(value: nil)
        self.initializer = .init(nil)
    }

    deinit {
        let source = self.core.takeSource()
        self.deinitHandler.withLock { $0 }?()
        source.map { unsafeDowncast($0, to: PromiseSource<T>.self) }?.dispose()
    }

    /// Subscribes the promise to `signal`, replacing (and first disposing) the previous source.
    ///
    /// The latest value is cleared; subscribers receive the new source's values as they arrive.
    ///
    /// - Parameter signal: The new source.
    ///
    /// Always inlined: `set` starts `signal` before it returns, so inlined into its caller, a source
    /// built there (`promise.set(.single(value))`) keeps its closure on the stack instead of the heap.
    @inlinable @inline(__always) public func set(_ signal: Signal<T, NoError>) {
        // The new source is registered before it starts, so that a concurrent `set` or the promise's
        // deinit finds and disposes it; values it sends after being replaced are dropped by the
        // generation check.
        let (source, previous, cleared) = self.core.replaceSource { generation in
            PromiseSource(PublishingToPromise(core: self.core, generation: generation))
        }
        withExtendedLifetime(cleared) {}
        // Only `PromiseSource<T>` objects are stored as the source.
        previous.map { unsafeDowncast($0, to: PromiseSource<T>.self) }?.dispose()
        signal.start(source)
    }

    /// A signal of the latest value followed by every new one. It never completes.
    ///
    /// There is no current value between a ``set(_:)`` and the new source's first value (``set(_:)``
    /// clears it): a subscriber that arrives then gets nothing at once, and gets the new source's values
    /// as they arrive.
    ///
    /// - Returns: A signal that replays the current value (if any) on subscription, synchronously.
    @inlinable public func get() -> Signal<T, NoError> {
        return Signal { subscriber in
            let initializer = self.initializer.withLock { pending -> Signal<T, NoError>? in
                let initializer = pending
                pending = nil
                return initializer
            }
            let key = self.core.subscribe(subscriber)
            if let initializer {
                self.set(initializer)
            }
            return FanOutMembership(key: key) { [self] key in
                self.core.unsubscribe(key)
            }
        }
    }
}

/// A hot, replaying holder of a value that you set directly.
///
/// ```swift
/// let isOnline = ValuePromise(false, ignoreRepeated: true)
/// let disposable = isOnline.get().start(next: { print($0) }) // prints false
/// isOnline.set(true)                                          // prints true
/// isOnline.set(true)                                          // ignored: repeated
/// ```
///
/// Ordering follows ``Promise``: each subscriber sees values in the order they were set.
public final class ValuePromise<T: Equatable & Sendable>: Sendable {
    @usableFromInline let core: ReplayingFanOut<T>

    /// Whether setting a value equal to the current one is ignored.
    public let ignoreRepeated: Bool

    /// Creates a promise holding `value`.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - ignoreRepeated: Whether to ignore values equal to the current one.
    public init(_ value: T, ignoreRepeated: Bool = false) {
        self.core = ReplayingFanOut(value: value)
        self.ignoreRepeated = ignoreRepeated
    }

    /// Creates an empty promise.
    ///
    /// - Parameter ignoreRepeated: Whether to ignore values equal to the current one.
    public init(ignoreRepeated: Bool = false) {
        self.core = ReplayingFanOut(value: nil)
        self.ignoreRepeated = ignoreRepeated
    }

    /// Sets the value and sends it to every subscriber (unless repeated and ``ignoreRepeated`` is set).
    ///
    /// The comparison (your `==`) runs outside the lock. When another `set` came in meanwhile, `set`
    /// compares again with the newer value, so a slow `==` beside many concurrent `set`s may run several
    /// times, and an `==` that sets this promise itself never lets `set` return.
    ///
    /// - Parameter value: The new value.
    @inlinable public func set(_ value: T) {
        guard self.ignoreRepeated else {
            self.core.publish(value)
            return
        }
        while true {
            let (current, version) = self.core.current()
            if let current, current == value {
                return
            }
            // Publishes only if no other `set` happened since the comparison; otherwise compare again.
            if self.core.publish(value, ifGeneration: version, advancing: true) {
                return
            }
        }
    }

    /// A signal of the current value followed by every new one. It never completes.
    ///
    /// - Returns: A signal that replays the current value (if any) on subscription, synchronously.
    @inlinable public func get() -> Signal<T, NoError> {
        return Signal { subscriber in
            let key = self.core.subscribe(subscriber)
            return FanOutMembership(key: key) { [self] key in
                self.core.unsubscribe(key)
            }
        }
    }
}

/// The subscription of a ``Promise`` to the signal it was set to. It is its own disposable, and its
/// value callback captures only itself (see ``ValueStage``), so a `set` costs one object for the
/// subscription.
@usableFromInline typealias PromiseSource<T: Sendable> = OperatorSubscriber<PublishingToPromise<T>>

/// What a ``PromiseSource`` does: publishes each value to the promise's subscribers unless a later `set`
/// replaced this source.
@usableFromInline struct PublishingToPromise<T: Sendable>: ValueStage {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = NoError

    @usableFromInline let core: ReplayingFanOut<T>
    @usableFromInline let generation: UInt64

    @inlinable init(core: ReplayingFanOut<T>, generation: UInt64) {
        self.core = core
        self.generation = generation
    }

    @inlinable func receive(_ value: T, by subscriber: Subscriber<T, NoError>) {
        self.core.publish(value, ifGeneration: self.generation)
    }
}
