import Foundation

/// The error type of a signal that cannot fail.
///
/// `NoError` is `Never`, so a `Signal<T, NoError>` has no error events at all, and the async bridges can
/// treat it as non-throwing. Code written against the original `enum NoError {}` compiles unchanged: the
/// name is the same and, like the original, it has no values.
public typealias NoError = Never

/// A type with no values, for signals that never emit a value (see ``ignoreValues(_:)``).
public enum NoValue: Sendable {}

/// Returns its argument unchanged. Useful as a mapping function.
///
/// Kept for source compatibility with the original SwiftSignalKit; in new code, `{ $0 }` says the same.
///
/// - Parameter a: Any value.
/// - Returns: `a`.
public func identity<A>(a: A) -> A {
    return a
}

precedencegroup PipeRight {
    associativity: left
    higherThan: DefaultPrecedence
}

infix operator |> : PipeRight

/// Applies a function to a value, left to right: `signal |> map { $0 + 1 } |> take(1)`.
///
/// - Parameters:
///   - value: The value to transform, usually a signal.
///   - function: The transformation, usually an operator such as `map { ... }`.
/// - Returns: `function(value)`.
public func |> <T, U>(value: T, function: ((T) -> U)) -> U {
    return function(value)
}

/// A cold stream of values of type `T` that ends with at most one error of type `E` or one completion.
///
/// A signal is a recipe: its generator runs once for every call to ``start(next:error:completed:)``,
/// synchronously, on the thread that calls `start`. Nothing happens until then.
///
/// ```swift
/// let numbers = Signal<Int, NoError> { subscriber in
///     subscriber.putNext(1)
///     subscriber.putNext(2)
///     subscriber.putCompletion()
///     return EmptyDisposable
/// }
/// let disposable = (numbers |> map { $0 * 10 }).start(next: { print($0) })
/// ```
///
/// The rules every subscription follows:
/// - At most one terminal event (error or completion); anything sent after it is dropped.
/// - A terminal event disposes the disposable that the generator returned, even when the terminal event
///   is sent from inside the generator, before `start` returns.
/// - `dispose()` never waits for another thread. No event sent after it returns reaches a callback; a
///   delivery that another thread had already begun may still run its callback (see ``Subscriber``).
///
/// > Note: A signal is `Sendable`: it holds only `@Sendable` closures (its generator, and a fused
/// > `map`/`filter` chain's), so it can be stored and started from any thread.
public final class Signal<T, E>: Sendable {
    @usableFromInline let generator: @Sendable (Subscriber<T, E>) -> Disposable
    /// What an operator or `start` applied next may fuse with (see ``SignalFusion``, with the operators
    /// that use it); nil for most signals.
    @usableFromInline let fusion: SignalFusion<T, E>?

    /// Creates a signal from a generator that runs once per subscription.
    ///
    /// - Parameter generator: Receives the subscriber, sends events to it (now or later, from any thread),
    ///   and returns the disposable that stops the work. Return ``EmptyDisposable`` when there is nothing
    ///   to stop.
    @preconcurrency public init(_ generator: @escaping @Sendable (Subscriber<T, E>) -> Disposable) {
        self.generator = generator
        self.fusion = nil
    }

    /// Creates a signal that the next operator may fuse with.
    @inlinable init(generator: @escaping @Sendable (Subscriber<T, E>) -> Disposable, fusion: SignalFusion<T, E>) {
        self.generator = generator
        self.fusion = fusion
    }

    /// Subscribes to the signal.
    ///
    /// The generator runs synchronously before this method returns, so a synchronous signal has already
    /// delivered all its events by then.
    ///
    /// - Parameters:
    ///   - next: Called for each value.
    ///   - error: Called once if the signal fails.
    ///   - completed: Called once if the signal completes.
    /// - Returns: A disposable that ends the subscription. Its `dispose()` never waits; no event sent after
    ///   it returns reaches a callback (a delivery already under way on another thread may still finish). When the subscription has
    ///   already ended by the time this method returns (a synchronous signal), this is the empty
    ///   disposable, since there is nothing left to end.
    @inlinable @discardableResult @preconcurrency public func start(
        next: (@Sendable (T) -> Void)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        // A `map` or `filter` signal starts with one subscriber that runs its stage and the callbacks.
        if let fusion = self.fusion {
            return fusion.start(next, error, completed, nil)
        }
        return self.subscribe(CallbacksOnly(), next: next, error: error, completed: completed)
    }

    /// Subscribes for a consumer that paces its producers: a producer that can wait (an async generator,
    /// `Signal(sequence)`) finds `demand` through the operators that pass it on (see ``SignalDemand``).
    /// Otherwise the same as ``start(next:error:completed:)``.
    @inlinable package func start(
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        pacedBy demand: any SignalDemand
    ) -> Disposable {
        if let fusion = self.fusion {
            return fusion.start(next, error, completed, demand)
        }
        return self.run(
            OperatorSubscriber(CallbacksOnly(), next: next, error: error, completed: completed, demand: demand))
    }

    /// Runs the generator for `subscriber` and returns the subscription's disposable: the subscriber, or
    /// the empty disposable when the subscriber has already terminated, whose `dispose()` could do nothing.
    /// Handing out the empty one saves whoever disposes it (usually a downstream subscriber, once it
    /// terminates) a call through the existential and a lock round trip, per stage of a synchronous chain.
    ///
    /// Not for a first-event-only subscriber (`get()`'s), whose gate is closed from the start: it starts
    /// with ``start(_:)``.
    @inlinable func run(_ subscriber: some Subscriber<T, E> & Disposable) -> Disposable {
        let disposable = self.generator(subscriber)
        // Synchronous generators (`single`, `complete`, ...) return the shared empty disposable: there is
        // nothing to store, and whether the subscriber has ended is one load of its gate, which closes in
        // the lock round trip that ends it, where the lock cost a round trip per stage. The empty
        // disposable is returned as it came: reading the global costs a `swift_once` check.
        if type(of: disposable) == _EmptyDisposable.self {
            return subscriber.admitsValues ? subscriber : disposable
        }
        if subscriber.assignDisposableReportingFinished(disposable) {
            return EmptyDisposable
        }
        return subscriber
    }

    /// Starts the signal with a subscriber of the library's own making that is also the subscription's
    /// disposable, for an owner that keeps the subscriber rather than the disposable returned
    /// (`FirstEventSubscriber`, `PromiseSource`): ``run(_:)`` without its answer, which would cost them
    /// a retain and a release.
    @inlinable package func start(_ subscriber: some Subscriber<T, E> & Disposable) {
        subscriber.assignDisposable(self.generator(subscriber))
    }

    /// Subscribes to the signal; the same as ``start(next:error:completed:)``.
    ///
    /// Kept for source compatibility with code that marks subscriptions it deliberately never disposes.
    ///
    /// - Parameters:
    ///   - next: Called for each value.
    ///   - error: Called once if the signal fails.
    ///   - completed: Called once if the signal completes.
    /// - Returns: A disposable that ends the subscription.
    @discardableResult @preconcurrency public func startStandalone(
        next: (@Sendable (T) -> Void)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        return self.start(next: next, error: error, completed: completed)
    }

    /// Subscribes to the signal and returns a ``StrictDisposable`` that reports, in debug builds, a
    /// subscription released without being disposed.
    ///
    /// - Parameters:
    ///   - next: Called for each value.
    ///   - error: Called once if the signal fails.
    ///   - completed: Called once if the signal completes.
    ///   - file: The file reported for a leaked subscription; defaults to the caller's.
    ///   - line: The line reported for a leaked subscription; defaults to the caller's.
    /// - Returns: A strict disposable; call `dispose()` on it before releasing it.
    @preconcurrency public func startStrict(
        next: (@Sendable (T) -> Void)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        file: String = #file,
        line: Int = #line
    ) -> Disposable {
        return self.start(next: next, error: error, completed: completed).strict(file: file, line: line)
    }

    /// A signal that sends `value`, then completes.
    ///
    /// - Parameter value: The value to send.
    /// - Returns: A synchronous single-value signal.
    @inlinable public static func single(_ value: T) -> Signal<T, E> where T: Sendable {
        return Signal<T, E> { subscriber in
            subscriber.putNext(value)
            subscriber.putCompletion()
            return EmptyDisposable
        }
    }

    /// A signal that completes at once without values.
    ///
    /// - Returns: An empty signal.
    public static func complete() -> Signal<T, E> {
        return Signal<T, E> { subscriber in
            subscriber.putCompletion()
            return EmptyDisposable
        }
    }

    /// A signal that fails at once with `error`.
    ///
    /// - Parameter error: The error to send.
    /// - Returns: A failing signal.
    public static func fail(_ error: E) -> Signal<T, E> where E: Sendable {
        return Signal<T, E> { subscriber in
            subscriber.putError(error)
            return EmptyDisposable
        }
    }

    /// A signal that never sends anything and never ends.
    ///
    /// - Returns: A silent signal.
    public static func never() -> Signal<T, E> {
        return Signal<T, E> { _ in
            return EmptyDisposable
        }
    }
}
