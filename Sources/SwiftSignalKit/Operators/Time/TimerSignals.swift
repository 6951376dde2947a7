/// A signal that sends 0, 1, 2, … every `period` seconds from its subscription, and never ends.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `interval`
/// with a `Duration`.
///
/// ```
/// interval(2):  --0-1-2-3-…
/// ```
///
/// ```swift
/// let heartbeat = interval(15, scheduler: Queue.concurrentDefaultQueue()) |> map { _ in "ping" }
/// ```
///
/// Each subscription has its own timer, stopped by disposing. `period` is checked when the signal is
/// made: 0 sends as often as the scheduler runs it, `+infinity` never sends, a value above 100 years
/// waits 100 years, and a negative value or NaN is a precondition failure naming the argument and the
/// value.
///
/// - Parameters:
///   - period: Seconds between values, and before the first.
///   - scheduler: Where the timer runs and values are sent; a ``Queue`` by default, a virtual-time
///     scheduler in tests.
/// - Returns: A cold signal of the firing count.
public func interval<S: SignalScheduler>(_ period: Double, scheduler: S = Queue.concurrentDefaultQueue()) -> Signal<Int, NoError> {
    _ = TimeIntervalValidation.wait(period, as: .interval, api: "interval(_:scheduler:)", argument: "period")
    return timerSignal(first: period, period: period, scheduler: scheduler)
}

/// A signal that sends 0 after `delay` seconds and completes; with a `period`, it goes on with 1, 2, …
/// every `period` seconds and never ends.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `timer`
/// with `Duration`s.
///
/// ```
/// timer(3):             ---(0|)
/// timer(3, period: 1):  ---0123…
/// ```
///
/// ```swift
/// let reminder = timer(60, scheduler: Queue.mainQueue()) |> map { _ in "still there?" }
/// ```
///
/// `delay` follows the rules for waits (negative means now, `+infinity` never, NaN is a precondition
/// failure); `period` those of ``interval(_:scheduler:)-(Double,_)``.
///
/// - Parameters:
///   - delay: Seconds before the first value.
///   - period: Seconds between later values; nil sends one value and completes.
///   - scheduler: Where the timer runs and values are sent; a ``Queue`` by default, a virtual-time
///     scheduler in tests.
/// - Returns: A cold signal of the firing count.
public func timer<S: SignalScheduler>(
    _ delay: Double, period: Double? = nil, scheduler: S = Queue.concurrentDefaultQueue()
)
    -> Signal<Int, NoError>
{
    let wait = TimeIntervalValidation.wait(delay, as: .delay, api: "timer(_:period:scheduler:)", argument: "delay")
    if let period {
        _ = TimeIntervalValidation.wait(period, as: .interval, api: "timer(_:period:scheduler:)", argument: "period")
    }
    guard case .seconds(let first) = wait else {
        return Signal { _ in EmptyDisposable }
    }
    return timerSignal(first: first, period: period, scheduler: scheduler)
}

/// Sends the firing count after `first` seconds, then every `period` seconds, or completes after the
/// first value when there is no period.
private func timerSignal<S: SignalScheduler>(first: Double, period: Double?, scheduler: S) -> Signal<Int, NoError> {
    return Signal { subscriber in
        let count = LockedState<Int>(0)
        let repeating = MetaDisposable()
        let next: @Sendable () -> Void = {
            let value = count.withLock { count -> Int in
                defer { count += 1 }
                return count
            }
            subscriber.putNext(value)
        }
        let firstFiring = scheduler.schedule(after: first) {
            next()
            guard let period else {
                subscriber.putCompletion()
                return
            }
            let timer = Timer(timeout: period, repeat: true, scheduler: scheduler) { _ in next() }
            repeating.set(ActionDisposable { timer.invalidate() })
            timer.start()
        }
        return ActionDisposable {
            firstFiring.dispose()
            repeating.dispose()
        }
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

/// A signal that sends 0, 1, 2, … every `period`: the `Duration` form of ``interval(_:scheduler:)``.
///
/// - Parameters:
///   - period: Time between values, and before the first; not negative.
///   - scheduler: Where the timer runs and values are sent.
/// - Returns: A cold signal of the firing count.
public func interval<S: SignalScheduler>(_ period: Duration, scheduler: S = Queue.concurrentDefaultQueue()) -> Signal<Int, NoError> {
    return interval(period.secondsForSignals(notNegative: "interval(_:scheduler:)", argument: "period"), scheduler: scheduler)
}

/// A signal that sends 0 after `delay` and completes, or goes on every `period`: the `Duration` form
/// of ``timer(_:period:scheduler:)``.
///
/// - Parameters:
///   - delay: Time before the first value.
///   - period: Time between later values (not negative); nil sends one value and completes.
///   - scheduler: Where the timer runs and values are sent.
/// - Returns: A cold signal of the firing count.
public func timer<S: SignalScheduler>(
    _ delay: Duration, period: Duration? = nil, scheduler: S = Queue.concurrentDefaultQueue()
) -> Signal<Int, NoError> {
    return timer(
        delay.secondsForSignals, period: period?.secondsForSignals(notNegative: "timer(_:period:scheduler:)", argument: "period"),
        scheduler: scheduler)
}
