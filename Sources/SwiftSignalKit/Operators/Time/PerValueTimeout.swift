/// Switches to `alternate` when the source leaves a gap of more than `interval` seconds: before its
/// first event, or after any value.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same
/// `timeout(perValue:)` with a `Duration`.
///
/// ```
/// source:              -a--b------c|
/// alternate:           #
/// timeout(perValue: 3) -a--b--#
/// ```
///
/// The wait starts at subscription, once the source has been subscribed to, and starts again after
/// each value has been delivered; on a virtual-time scheduler, where such ties are exact, an event
/// exactly `interval` after either passes (the timeout is decided at the end of the instant,
/// ``SignalScheduler/scheduleAtEndOfInstant(_:)``). When it runs out, the source is disposed and `alternate` is started; pass `.fail(error)` to fail instead. A source
/// event that races with the timer is dropped if the timer won. ``timeout(_:scheduler:alternate:)-(Double,_,_)``
/// bounds only the wait for the first event.
///
/// A disposal that races with the timer's firing may come too late to stop `alternate` from starting:
/// it then starts and is disposed at once, and nothing it sends reaches the subscriber, but what its
/// `start` does is done.
///
/// ```swift
/// let feed = quotes |> timeout(perValue: 30, scheduler: Queue.concurrentDefaultQueue(), alternate: .fail(.stalled))
/// ```
///
/// `interval` is checked when the operator is made: `+infinity` never times out (the result is the
/// source itself), 0 or negative times out as soon as the scheduler runs the wait unless the source
/// sends first, above 100 years waits 100 years, and NaN is a precondition failure naming the argument
/// and the value.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - interval: The longest gap, in seconds.
///   - scheduler: Where the gaps are measured and `alternate` starts; a ``Queue`` by default, a
///     virtual-time scheduler in tests.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E, S: SignalScheduler>(
    perValue interval: Double, scheduler: S = Queue.concurrentDefaultQueue(), alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(interval, as: .delay, api: "timeout(perValue:scheduler:alternate:)", argument: "interval")
    guard case .seconds(let seconds) = wait else {
        return { signal in signal }
    }
    return { signal in
        return Signal { subscriber in
            let storage = TimeoutStorage(
                mode: .everyGap, seconds: seconds, scheduler: scheduler, alternate: alternate, subscriber: subscriber)
            storage.start(signal)
            return ActionDisposable {
                storage.dispose()
            }
        }
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

/// Switches to `alternate` when the source leaves a gap longer than `interval`: the `Duration` form of
/// ``timeout(perValue:scheduler:alternate:)``.
///
/// - Parameters:
///   - interval: The longest gap.
///   - scheduler: Where the gaps are measured and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E, S: SignalScheduler>(
    perValue interval: Duration, scheduler: S = Queue.concurrentDefaultQueue(), alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    return timeout(perValue: interval.secondsForSignals, scheduler: scheduler, alternate: alternate)
}
