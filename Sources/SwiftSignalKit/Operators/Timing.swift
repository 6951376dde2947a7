import Dispatch

/// Delays the *subscription* to the source by `timeout` seconds (values are not delayed one by one).
///
/// The source is started on `queue` when the timer fires; disposing before then cancels the timer and the
/// source never starts.
///
/// ```swift
/// let retryLater = request |> delay(2.0, queue: Queue.concurrentDefaultQueue())
/// ```
///
/// `timeout` is checked when the operator is made: 0 or a negative value subscribes as soon as `queue`
/// runs the timer, `+infinity` never subscribes, a value above 100 years waits 100 years, and NaN is a
/// precondition failure naming the argument and the value.
///
/// - Parameters:
///   - timeout: Seconds to wait before subscribing (monotonic clock).
///   - queue: Where the timer fires and the source starts.
/// - Returns: An operator for `|>`.
public func delay<T, E>(_ timeout: Double, queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "delay(_:queue:)", argument: "timeout")
    return { signal in
        return Signal { subscriber in
            guard case .seconds(let seconds) = wait else {
                // `+infinity`: the source is never started.
                return EmptyDisposable
            }
            let disposable = MetaDisposable()
            let timer = Timer(
                timeout: seconds, repeat: false,
                completion: {
                    disposable.set(signal.start(forwardingTo: subscriber))
                }, queue: queue)
            // Installed before the timer starts, so the timer's subscription always replaces it.
            disposable.set(
                ActionDisposable {
                    timer.invalidate()
                })
            timer.start()
            return disposable
        }
    }
}

/// Like ``delay(_:queue:)``, but measured on the wall clock, so time spent with the system suspended
/// counts towards the delay.
///
/// `timeout` is checked when the operator is made, as for ``delay(_:queue:)``: 0 or negative subscribes
/// as soon as possible, `+infinity` never, above 100 years waits 100 years, NaN is a precondition failure.
///
/// - Parameters:
///   - timeout: Seconds to wait before subscribing (wall clock).
///   - granularity: Kept for source compatibility; the wall-clock deadline makes polling unnecessary.
///   - queue: Where the source starts.
/// - Returns: An operator for `|>`.
public func suspendAwareDelay<T, E>(_ timeout: Double, granularity: Double = 4.0, queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, E>
{
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "suspendAwareDelay(_:granularity:queue:)", argument: "timeout")
    return { signal in
        return Signal { subscriber in
            guard case .seconds(let seconds) = wait else {
                // `+infinity`: the source is never started.
                return EmptyDisposable
            }
            let disposable = MetaDisposable()
            let cancelled = LockedState<Bool>(false)
            disposable.set(
                ActionDisposable {
                    cancelled.withLock { $0 = true }
                })
            queue.queue.asyncAfter(wallDeadline: .now() + seconds) {
                guard !cancelled.withLock({ $0 }) else { return }
                disposable.set(signal.start(forwardingTo: subscriber))
            }
            return disposable
        }
    }
}

/// Switches to `alternate` if the source sends nothing within `timeout` seconds.
///
/// The first event of the source (value, error or completion) cancels the timer for good. If the timer
/// fires first, the source is disposed and `alternate` is started; a source event racing with the timer
/// is dropped if the timer won.
///
/// `timeout` is checked when the operator is made: `+infinity` never times out (the result is the source
/// itself), 0 or a negative value times out as soon as `queue` runs the timer unless the source sends
/// first, a value above 100 years waits 100 years, and NaN is a precondition failure naming the argument
/// and the value.
///
/// - Parameters:
///   - timeout: Seconds to wait for the first event.
///   - queue: Where the timer fires and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
public func timeout<T, E>(_ timeout: Double, queue: Queue, alternate: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "timeout(_:queue:alternate:)", argument: "timeout")
    guard case .seconds(let seconds) = wait else {
        // `+infinity`: the source is never timed out.
        return { signal in signal }
    }
    return { signal in
        return Signal<T, E> { subscriber in
            let race = LockedState<TimeoutRace>(.waiting)
            let source = MetaDisposable()
            let fallback = MetaDisposable()
            let timer = Timer(
                timeout: seconds, repeat: false,
                completion: {
                    guard race.withLock({ $0.timerFired() }) else { return }
                    source.dispose()
                    fallback.set(alternate.start(forwardingTo: subscriber))
                }, queue: queue)
            timer.start()
            source.set(
                signal.start(
                    linkedTo: subscriber,
                    next: { value in
                        guard race.withLock({ $0.sourceEvent() }) else { return }
                        timer.invalidate()
                        subscriber.putNext(value)
                    },
                    error: { error in
                        guard race.withLock({ $0.sourceEvent() }) else { return }
                        timer.invalidate()
                        subscriber.putError(error)
                    },
                    completed: {
                        guard race.withLock({ $0.sourceEvent() }) else { return }
                        timer.invalidate()
                        subscriber.putCompletion()
                    }))
            let disposable = DisposableSet()
            disposable.add(ActionDisposable { timer.invalidate() })
            disposable.add(source)
            disposable.add(fallback)
            return disposable
        }
    }
}

/// Who won the race in ``timeout(_:queue:alternate:)``.
enum TimeoutRace: Sendable {
    case waiting
    case sourceWon
    case timedOut

    /// The source sent an event: returns whether to pass it on.
    mutating func sourceEvent() -> Bool {
        switch self {
        case .waiting:
            self = .sourceWon
            return true
        case .sourceWon:
            return true
        case .timedOut:
            return false
        }
    }

    /// The timer fired: returns whether to switch to the alternate.
    mutating func timerFired() -> Bool {
        switch self {
        case .waiting:
            self = .timedOut
            return true
        case .sourceWon, .timedOut:
            return false
        }
    }
}
