/// Runs a signal of signals one inner signal at a time, in the order they arrive.
///
/// Each inner signal starts when the previous one completes. The result fails on the first error, and
/// completes when the outer signal and every queued inner signal have completed.
///
/// ```swift
/// let writes = requests |> map { request in save(request) } |> queue
/// ```
///
/// - Parameter signal: The signal of signals.
/// - Returns: The concatenated signal.
@inlinable public func queue<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    return queueSignals(signal, mode: .queue)
}

/// Like ``queue(_:)``, but while an inner signal runs only the latest waiting one is kept.
///
/// - Parameter signal: The signal of signals.
/// - Returns: The throttled signal.
@inlinable public func throttled<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    return queueSignals(signal, mode: .throttle)
}

/// Maps each value to a signal and runs them one at a time (``map(_:)`` then ``queue(_:)``).
///
/// - Parameter f: Makes a signal from each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func mapToQueue<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        return signal |> map(f) |> queue
    }
}

/// Maps each value to a signal and runs them throttled (``map(_:)`` then ``throttled(_:)``).
///
/// - Parameter f: Makes a signal from each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func mapToThrottled<T, R, E>(
    _ f: @escaping @Sendable (T) -> Signal<R, E>
) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        return signal |> map(f) |> throttled
    }
}

@inlinable func queueSignals<T, E>(_ signal: Signal<Signal<T, E>, E>, mode: QueueOperatorStateMachine<T, E>.Mode) -> Signal<T, E> {
    return Signal { subscriber in
        let runner = QueueRunner(subscriber: subscriber, mode: mode)
        let outer = signal.subscribe(
            Linked(to: subscriber),
            next: { inner in
                if let first = runner.perform(runner.state.withLock { $0.outerSent(inner) }) {
                    runner.run(first)
                }
            },
            error: { error in
                runner.fail(error)
            },
            completed: {
                runner.perform(runner.state.withLock { $0.outerCompletedEvent() })
            })
        return ActionDisposable {
            runner.perform(runner.state.withLock { $0.terminate() })
            // The inner subscription first, then the outer one, as in the original library.
            runner.current.dispose()
            outer.dispose()
        }
    }
}
