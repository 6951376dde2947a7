import Dispatch

/// Subscribes to `signal` again each time it completes; errors end the result.
///
/// A source that completes synchronously is restarted in a loop, not recursively, so the stack does not
/// grow.
///
/// The loop checks before every restart whether the subscriber downstream has ended, so a source that
/// always completes synchronously can be stopped by a downstream operator such as ``take(_:)`` even
/// though `start` has not returned yet.
///
/// > Warning: That check follows the chain of library operators. A hand-written generator between the
/// > loop and the operator that ends it breaks the chain; then a source that always completes
/// > synchronously keeps `start` looping until it fails.
///
/// > Warning: Nor can a disposal made inside a callback stop that loop: the disposable it disposes (a
/// > `MetaDisposable` that is given `start`'s result, say) holds nothing until `start` returns, so
/// > `start` spins, restarting the source. End such a loop inside the chain, with ``take(_:)`` or
/// > ``take(until:)-(Signal<U,F>)`` downstream.
///
/// - Parameter signal: The source.
/// - Returns: A signal that never completes on its own.
public func restart<T, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return RestartLoop.signal { subscriber, loop in
        return signal.subscribe(
            Forwarding(to: subscriber),
            completed: {
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
/// A source that fails synchronously is restarted in a loop, as in ``restart(_:)``, with its two
/// warnings: end such a loop inside the chain (``take(_:)`` downstream), not with a disposal made inside
/// a callback before `start` has returned.
///
/// - Parameter signal: The source.
/// - Returns: A signal that cannot fail.
public func restartIfError<T, E>(_ signal: Signal<T, E>) -> Signal<T, NoError> {
    return RestartLoop.signal { subscriber, loop in
        return signal.subscribe(
            ForwardingValues(to: subscriber),
            error: { _ in
                loop.restart()
            },
            completed: {
                subscriber.putCompletion()
            })
    }
}

/// Resubscribes after each failure, waiting longer each time: `delayIncrement`, twice that, and so on, up
/// to `maxDelay` seconds.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `retry`
/// with `Duration`s.
///
/// The waits are checked when the operator is made: `delayIncrement` and `maxDelay` must not be NaN or
/// negative (a precondition failure naming the argument and the value); `maxDelay: .infinity` means no
/// cap; a wait above 100 years waits 100 years; a wait of `+infinity` (both arguments infinite) means the
/// source is never retried.
///
/// - Parameters:
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>` whose result cannot fail.
public func retry<T, E>(_ delayIncrement: Double, maxDelay: Double, onQueue queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, NoError>
{
    checkRetryDelays(increment: delayIncrement, maxDelay: maxDelay, api: "retry(_:maxDelay:onQueue:)")
    return { signal in retrying(signal, increment: delayIncrement, maxDelay: maxDelay, scheduler: queue) }
}

/// Resubscribes after each failure, waiting longer each time, on any ``SignalScheduler``: the
/// ``retry(_:maxDelay:onQueue:)-(Double,_,_)`` of virtual-time tests. Disposing cancels a wait in progress.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `retry`
/// with `Duration`s.
///
/// ```
/// source (each attempt):  -#   (fails 1 s after each start)
/// retry(1, maxDelay: 2):  starts the source at 0, 2, 5, 8, 11, …: waits of 1, 2, 2, … after each
///                         failure, which is not sent
/// ```
///
/// - Parameters:
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - scheduler: Where the waits are measured and the retries start.
/// - Returns: An operator for `|>` whose result cannot fail.
public func retry<T, E>(
    _ delayIncrement: Double, maxDelay: Double, scheduler: some SignalScheduler
) -> (_ signal: Signal<T, E>) -> Signal<
    T, NoError
> {
    checkRetryDelays(increment: delayIncrement, maxDelay: maxDelay, api: "retry(_:maxDelay:scheduler:)")
    return { signal in retrying(signal, increment: delayIncrement, maxDelay: maxDelay, scheduler: scheduler) }
}

private func retrying<T, E>(
    _ signal: Signal<T, E>, increment: Double, maxDelay: Double, scheduler: some SignalScheduler
) -> Signal<
    T, NoError
> {
    return RestartLoop.signal { subscriber, loop in
        return signal.subscribe(
            ForwardingValues(to: subscriber),
            error: { _ in
                switch loop.failed(growingWaitBy: increment, upTo: maxDelay, maxRetries: .max) {
                case .retry(let number, let delay):
                    loop.restart(after: delay, forRetry: number, on: scheduler)
                case .giveUp, .none:
                    // No limit, so no give-up: only a stop, after which nothing is sent.
                    break
                }
            },
            completed: {
                subscriber.putCompletion()
            })
    }
}

/// Resubscribes after failures that `retryOnError` accepts, with growing waits, at most `maxRetries`
/// times; other failures, and the failure after the last retry, end the result.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `retry`
/// with `Duration`s.
///
/// The waits are checked when the operator is made, as for ``retry(_:maxDelay:onQueue:)-(Double,_,_)``.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - maxRetries: How many retries at most; 0 or a negative number retries never.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>`.
@preconcurrency public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Double, maxDelay: Double, maxRetries: Int, onQueue queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    checkRetryDelays(increment: delayIncrement, maxDelay: maxDelay, api: "retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)")
    return { signal in
        retrying(
            signal, retryOnError: retryOnError, increment: delayIncrement, maxDelay: maxDelay, maxRetries: maxRetries, scheduler: queue)
    }
}

/// Resubscribes after failures that `retryOnError` accepts, with growing waits, at most `maxRetries`
/// times, on any ``SignalScheduler``: the ``retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)-(_,Double,_,_,_)``
/// of virtual-time tests. Disposing cancels a wait in progress.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `retry`
/// with `Duration`s.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Seconds added to the wait after each failure.
///   - maxDelay: The longest wait, in seconds.
///   - maxRetries: How many retries at most; 0 or a negative number retries never.
///   - scheduler: Where the waits are measured and the retries start.
/// - Returns: An operator for `|>`.
public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Double, maxDelay: Double, maxRetries: Int,
    scheduler: some SignalScheduler
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    checkRetryDelays(
        increment: delayIncrement, maxDelay: maxDelay, api: "retry(retryOnError:delayIncrement:maxDelay:maxRetries:scheduler:)")
    return { signal in
        retrying(
            signal, retryOnError: retryOnError, increment: delayIncrement, maxDelay: maxDelay, maxRetries: maxRetries, scheduler: scheduler)
    }
}

private func retrying<T, E>(
    _ signal: Signal<T, E>, retryOnError: @escaping @Sendable (E) -> Bool, increment: Double, maxDelay: Double, maxRetries: Int,
    scheduler: some SignalScheduler
) -> Signal<T, E> {
    return RestartLoop.signal { subscriber, loop in
        return signal.subscribe(
            Forwarding(to: subscriber),
            error: { error in
                guard retryOnError(error) else {
                    subscriber.putError(error)
                    return
                }
                switch loop.failed(growingWaitBy: increment, upTo: maxDelay, maxRetries: maxRetries) {
                case .retry(let number, let delay):
                    loop.restart(after: delay, forRetry: number, on: scheduler)
                case .giveUp:
                    subscriber.putError(error)
                case .none:
                    break
                }
            },
            completed: {
                subscriber.putCompletion()
            })
    }
}

/// Traps, naming the argument and the value, when a retry wait is NaN or negative. The waits computed from
/// them go through `SignalScheduler.schedule(after:_:)`, which clamps huge values and never runs work
/// after `+infinity`.
private func checkRetryDelays(increment: Double, maxDelay: Double, api: String) {
    _ = TimeIntervalValidation.wait(increment, as: .interval, api: api, argument: "delayIncrement")
    _ = TimeIntervalValidation.wait(maxDelay, as: .cap, api: api, argument: "maxDelay")
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

/// Resubscribes after each failure, waiting longer each time: the `Duration` form of
/// ``retry(_:maxDelay:onQueue:)``.
///
/// - Parameters:
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>` whose result cannot fail.
public func retry<T, E>(
    _ delayIncrement: Duration, maxDelay: Duration, onQueue queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<
    T, NoError
> {
    let api = "retry(_:maxDelay:onQueue:)"
    return retry(
        delayIncrement.secondsForSignals(notNegative: api, argument: "delayIncrement"),
        maxDelay: maxDelay.secondsForSignals(notNegative: api, argument: "maxDelay"), onQueue: queue)
}

/// Resubscribes after each failure, waiting longer each time, on any scheduler: the `Duration` form of
/// ``retry(_:maxDelay:scheduler:)``.
///
/// - Parameters:
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - scheduler: Where the waits are measured and the retries start.
/// - Returns: An operator for `|>` whose result cannot fail.
public func retry<T, E>(
    _ delayIncrement: Duration, maxDelay: Duration, scheduler: some SignalScheduler
) -> (_ signal: Signal<T, E>) -> Signal<T, NoError> {
    let api = "retry(_:maxDelay:scheduler:)"
    return retry(
        delayIncrement.secondsForSignals(notNegative: api, argument: "delayIncrement"),
        maxDelay: maxDelay.secondsForSignals(notNegative: api, argument: "maxDelay"), scheduler: scheduler)
}

/// Resubscribes after failures that `retryOnError` accepts, at most `maxRetries` times: the `Duration`
/// form of ``retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)``.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - maxRetries: How many retries at most; 0 or a negative number retries never.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>`.
@preconcurrency public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Duration, maxDelay: Duration, maxRetries: Int, onQueue queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let api = "retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)"
    return retry(
        retryOnError: retryOnError, delayIncrement: delayIncrement.secondsForSignals(notNegative: api, argument: "delayIncrement"),
        maxDelay: maxDelay.secondsForSignals(notNegative: api, argument: "maxDelay"), maxRetries: maxRetries, onQueue: queue)
}

/// Resubscribes after failures that `retryOnError` accepts, at most `maxRetries` times, on any
/// scheduler: the `Duration` form of ``retry(retryOnError:delayIncrement:maxDelay:maxRetries:scheduler:)``.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - maxRetries: How many retries at most; 0 or a negative number retries never.
///   - scheduler: Where the waits are measured and the retries start.
/// - Returns: An operator for `|>`.
public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Duration, maxDelay: Duration, maxRetries: Int,
    scheduler: some SignalScheduler
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let api = "retry(retryOnError:delayIncrement:maxDelay:maxRetries:scheduler:)"
    return retry(
        retryOnError: retryOnError, delayIncrement: delayIncrement.secondsForSignals(notNegative: api, argument: "delayIncrement"),
        maxDelay: maxDelay.secondsForSignals(notNegative: api, argument: "maxDelay"), maxRetries: maxRetries, scheduler: scheduler)
}
