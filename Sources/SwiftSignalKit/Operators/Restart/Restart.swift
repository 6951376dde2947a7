import Dispatch

/// Subscribes to `signal` again each time it completes; errors end the result.
///
/// A source that completes synchronously is restarted in a loop, not recursively, so the stack does not
/// grow.
///
/// > Warning: A subscription cannot be disposed before its generator returns. A source that *always*
/// > completes synchronously therefore keeps `start` looping forever, and a downstream ``take(_:)`` cannot
/// > stop it; such a source must end the loop itself (with an error) or complete asynchronously.
///
/// - Parameter signal: The source.
/// - Returns: A signal that never completes on its own.
public func restart<T, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return RestartLoop.signal { subscriber, loop in
        return signal.start(next: { value in
            subscriber.putNext(value)
        }, error: { error in
            subscriber.putError(error)
        }, completed: {
            loop.restart()
        })
    }
}

/// Subscribes to the source again each time it completes, like ``restart(_:)``.
///
/// - Parameter latestValue: Ignored, as in the original library; kept for source compatibility.
/// - Returns: An operator for `|>`.
public func recurse<T, E>(_ latestValue: T?) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return restart(signal)
    }
}

/// Subscribes to `signal` again each time it fails; completion ends the result.
///
/// - Parameter signal: The source.
/// - Returns: A signal that cannot fail.
public func restartIfError<T, E>(_ signal: Signal<T, E>) -> Signal<T, NoError> {
    return RestartLoop.signal { subscriber, loop in
        return signal.start(next: { value in
            subscriber.putNext(value)
        }, error: { _ in
            loop.restart()
        }, completed: {
            subscriber.putCompletion()
        })
    }
}

/// Resubscribes after each failure, waiting longer each time: `delayIncrement`, twice that, and so on, up
/// to `maxDelay` seconds.
///
/// - Parameters:
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>` whose result cannot fail.
public func retry<T, E>(_ delayIncrement: Double, maxDelay: Double, onQueue queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, NoError> {
    return { signal in
        return RestartLoop.signal { subscriber, loop in
            return signal.start(next: { value in
                subscriber.putNext(value)
            }, error: { _ in
                let (delay, _) = loop.nextRetryDelay(increment: delayIncrement, max: maxDelay)
                queue.after(delay) {
                    loop.restart()
                }
            }, completed: {
                subscriber.putCompletion()
            })
        }
    }
}

/// Resubscribes after failures that `retryOnError` accepts, with growing waits, at most `maxRetries`
/// times; other failures, and the failure after the last retry, end the result.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - maxRetries: How many retries at most.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>`.
@preconcurrency public func retry<T, E>(retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Double, maxDelay: Double, maxRetries: Int, onQueue queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return RestartLoop.signal { subscriber, loop in
            return signal.start(next: { value in
                subscriber.putNext(value)
            }, error: { error in
                guard retryOnError(error) else {
                    subscriber.putError(error)
                    return
                }
                let (delay, attempt) = loop.nextRetryDelay(increment: delayIncrement, max: maxDelay)
                if attempt > maxRetries {
                    subscriber.putError(error)
                } else {
                    queue.after(delay) {
                        loop.restart()
                    }
                }
            }, completed: {
                subscriber.putCompletion()
            })
        }
    }
}
