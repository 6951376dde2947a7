/// An object that lives on a ``Queue`` and is only touched there.
///
/// The object is created on the queue by `generate`, every access runs on the queue, and it is released
/// on the queue when the `QueueLocalObject` is released. This confines non-thread-safe state to one
/// serial queue while the wrapper itself is passed around freely.
///
/// ```swift
/// nonisolated final class Context { var count = 0 }  // not the main actor's: it lives on the queue
/// let context = QueueLocalObject(queue: Queue(), generate: { Context() })
/// context.with { $0.count += 1 }
/// let count = context.syncWith { $0.count }
/// ```
///
/// > Note: The queue must be serial; on a concurrent queue the object would be touched from several
/// > threads at once. A global concurrent queue (``Queue/concurrentDefaultQueue()``, a wrapped
/// > `DispatchQueue.global`) stops the process with a message; a concurrent queue made elsewhere and
/// > wrapped cannot be told from a serial one.
public final class QueueLocalObject<T: AnyObject> {
    /// The queue the object lives on.
    public let queue: Queue
    let box = QueueLocalBox<T>()

    /// Creates the object on `queue` (asynchronously, or inline when already on it).
    ///
    /// - Parameters:
    ///   - queue: A serial queue.
    ///   - generate: Makes the object; runs on `queue`.
    @preconcurrency public init(queue: Queue, generate: @escaping @Sendable () -> T) {
        if queue.isGlobalConcurrentQueue {
            misuse(
                "QueueLocalObject(queue:generate:): the queue must be serial, and \(queue.queue.label) is a global "
                    + "concurrent queue, where the object would be touched from several threads at once. Give it a "
                    + "serial queue of its own: Queue(name:)")
        }
        self.queue = queue
        let box = self.box
        Self.run(on: queue) {
            box.value = generate()
        }
    }

    deinit {
        let box = self.box
        Self.run(on: self.queue) {
            // Released here, on the queue.
            box.value = nil
        }
    }

    /// Runs `f` on `queue`: inline when already on it, otherwise asynchronously. Inline on any kind of
    /// queue, which `Queue.async` is not on a wrapped one (it may be concurrent): the object's queue is
    /// serial, so `init` on its own queue makes the object at once, as the documentation says.
    private static func run(on queue: Queue, _ f: @escaping @Sendable () -> Void) {
        if queue.isCurrent() {
            f()
        } else {
            queue.async(f)
        }
    }

    /// Runs `f` with the object on the queue, asynchronously (inline when already on the queue).
    ///
    /// - Parameter f: Receives the object; runs on the queue.
    @preconcurrency public func with(_ f: @escaping @Sendable (T) -> Void) {
        let box = self.box
        Self.run(on: self.queue) {
            if let value = box.value {
                f(value)
            }
        }
    }

    /// Runs `f` with the object on the queue and waits for its result.
    ///
    /// Runs inline when already on the queue (see `Queue.isCurrent()`), including inside nested
    /// `Queue.sync` blocks entered from the queue's work.
    ///
    /// ```swift
    /// let (disposable, control) = impl.syncWith { impl -> (Disposable, Control) in
    ///     (impl.start(), Control(id: impl.id))
    /// }
    /// ```
    ///
    /// The result is `sending`: in Swift 6 mode the compiler rejects a result that is still connected to
    /// the object (`let leaked = context.syncWith { $0 }`), because it would let the queue-confined object
    /// be used off its queue. Sendable results (`{ $0.count }`) and freshly made objects are accepted.
    /// In Swift 5 mode the check is not made.
    ///
    /// Pass a closure, not a function: a function (`context.syncWith(count(of:))`) does not convert to a
    /// closure with a `sending` result, an error in Swift 6 mode and a warning in Swift 5 mode. Write
    /// `context.syncWith { count(of: $0) }`. The check covers the result only: an object stored into a
    /// variable the closure captures (`context.syncWith { leaked = $0 }`) is not diagnosed.
    ///
    /// - Parameter f: Receives the object; runs on the queue while the caller waits.
    /// - Returns: What `f` returns.
    ///
    /// > Important: Traps, with a message naming `QueueLocalObject`, if the object is not there: called on
    /// > the queue from work that runs before the `generate` closure queued by `init` (the object is made
    /// > asynchronously unless `init` itself runs on the queue).
    public func syncWith<R>(_ f: (T) -> sending R) -> sending R {
        guard let result = self.withObjectOnQueue(f) else {
            misuse(
                "QueueLocalObject<\(T.self)>.syncWith: the object is not there; on its queue (\(self.queue.queue.label)), "
                    + "syncWith ran before the object's generate closure")
        }
        return result
    }

    /// Both forms of `syncWith`: runs `f` with the object on the queue, waits, and returns its result,
    /// or nil if the object is not there.
    func withObjectOnQueue<R>(_ f: (T) -> sending R) -> sending R? {
        let box = self.box
        var result: R?
        self.queue.sync {
            if let value = box.value {
                result = f(value)
            }
        }
        // Safe: `result` holds `f`'s `sending` result, disconnected from the object and from everything
        // else on the queue, and nothing but this line reads it (after `sync` has returned). The compiler
        // cannot follow the value through the closure passed to `sync`, so it is handed on unchecked.
        nonisolated(unsafe) let output = result.take()
        return output
    }

    /// The object, for code that already runs on the queue.
    ///
    /// Mirrors the original SwiftSignalKit: prefer ``with(_:)`` and ``syncWith(_:)->R``, which reach the
    /// object from anywhere. The caller must not keep the object, or use it after leaving the queue.
    ///
    /// - Returns: The object, or nil if it is not made yet (its `generate` closure is still queued).
    ///
    /// > Important: Traps, with a message naming `QueueLocalObject` and the queue, when called off the
    /// > queue (unlike the original, which checked only in debug builds): the object is not thread-safe.
    public func unsafeGet() -> T? {
        if !self.queue.isCurrent() {
            misuse("QueueLocalObject<\(T.self)>.unsafeGet() must be called on the object's queue (\(self.queue.queue.label))")
        }
        return self.box.value
    }

    /// A signal whose subscription runs `f` with the object on the queue.
    ///
    /// A subscription made on the queue runs `f` at once, on any kind of queue (the object's queue is
    /// serial), as ``with(_:)`` and `init` do; one made elsewhere hops to the queue first (see
    /// ``runOn(_:)-(Queue)``). If the object is gone by the time `f` would run, the subscription gets
    /// nothing.
    ///
    /// - Parameter f: Receives the object and the subscriber; runs on the queue.
    /// - Returns: A signal that subscribes on the queue.
    @preconcurrency public func signalWith<R, E>(_ f: @escaping @Sendable (T, Subscriber<R, E>) -> Disposable) -> Signal<R, E> {
        let box = self.box
        let queue = self.queue
        let withObject = Signal<R, E> { subscriber in
            if let value = box.value {
                return f(value, subscriber)
            }
            return EmptyDisposable
        }
        let hopping = withObject |> runOn(queue)
        return Signal { subscriber in
            // `runOn` runs inline only on the queues where `Queue.async` does, not on a wrapped one, which
            // may be concurrent; this queue is known to be serial.
            return (queue.isCurrent() ? withObject : hopping).subscribe(Forwarding(to: subscriber))
        }
    }
}

// Safe: the only mutable state is the object in `box`, which is created, used and released only inside
// work submitted to `queue`, a serial queue, so it is never touched by two threads at once.
extension QueueLocalObject: @unchecked Sendable {}

/// Holds the object; read and written only on the owning queue.
final class QueueLocalBox<T: AnyObject>: @unchecked Sendable {
    // Safe: see `QueueLocalObject`; `value` is only accessed on the owning serial queue.
    var value: T?
}
