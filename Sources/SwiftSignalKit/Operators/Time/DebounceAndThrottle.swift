/// Sends a value only once the source has been quiet for `interval` seconds: each value restarts the
/// wait, and only the latest is sent.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer
/// `debounce(for:scheduler:)`.
///
/// ```
/// source:       ab-c-----d-|
/// debounce(2):  -----c-----(d|)
/// ```
///
/// When the source completes, the value still waiting is sent at once, then the completion. An error
/// drops the waiting value and is sent at once. Disposing cancels the wait.
///
/// ```swift
/// let queries = searchField |> debounce(0.3, scheduler: Queue.mainQueue())
/// ```
///
/// `interval` is checked when the operator is made: 0 or negative sends each value as soon as the
/// scheduler runs its wait (values sent meanwhile still replace it), `+infinity` sends only the last
/// value, on completion, a value above 100 years waits 100 years, and NaN is a precondition failure
/// naming the argument and the value.
///
/// > Note: Values are sent on the scheduler (after a wait) or on the thread that completes the source
/// > (the flush). Events from several threads are delivered one at a time, in the order the operator
/// > decided on them.
///
/// - Parameters:
///   - interval: Seconds of quiet before the latest value is sent.
///   - scheduler: Where the wait is measured and the values are sent; a ``Queue`` by default, a
///     virtual-time scheduler in tests.
/// - Returns: An operator for `|>`.
@inlinable public func debounce<T: Sendable, E: Sendable, S: SignalScheduler>(
    _ interval: Double, scheduler: S = Queue.concurrentDefaultQueue()
) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(interval, as: .delay, api: "debounce(_:scheduler:)", argument: "interval")
    return { signal in timedLatest(signal, mode: .debounce, wait: wait, scheduler: scheduler) }
}

/// Sends the latest value of each window of `interval` seconds when the window closes; the first value
/// after a quiet time opens a window (SSignalKit's `throttleOn:delay:`).
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer
/// `throttle(for:scheduler:)`.
///
/// ```
/// source:       ab--c----d--|
/// throttle(3):  ---b---c----(d|)
/// ```
///
/// Each value waits at most `interval` seconds, and at most one value is sent per window. When the
/// source completes, the value still waiting is sent at once, then the completion. An error drops the
/// waiting value and is sent at once. Unlike Rx's `throttle`, the first value of a window is not sent
/// at once: this is RxJS's `auditTime`.
///
/// ```swift
/// let progressUpdates = downloadProgress |> throttle(0.5, scheduler: Queue.mainQueue())
/// ```
///
/// `interval` is checked when the operator is made: 0 or negative closes each window as soon as the
/// scheduler runs it, `+infinity` sends only the last value, on completion, a value above 100 years
/// waits 100 years, and NaN is a precondition failure naming the argument and the value.
///
/// - Parameters:
///   - interval: Seconds from a window's first value to the sending of its latest.
///   - scheduler: Where windows are measured and values sent; a ``Queue`` by default, a virtual-time
///     scheduler in tests.
/// - Returns: An operator for `|>`.
@inlinable public func throttle<T: Sendable, E: Sendable, S: SignalScheduler>(
    _ interval: Double, scheduler: S = Queue.concurrentDefaultQueue()
) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(interval, as: .delay, api: "throttle(_:scheduler:)", argument: "interval")
    return { signal in timedLatest(signal, mode: .throttle, wait: wait, scheduler: scheduler) }
}

@inlinable func timedLatest<T: Sendable, E: Sendable, S: SignalScheduler>(
    _ signal: Signal<T, E>, mode: DebounceThrottleStateMachine<T, E>.Mode, wait: Wait, scheduler: S
) -> Signal<T, E> {
    return Signal { subscriber in
        let seconds: Double
        switch wait {
        case .seconds(let value):
            seconds = value
        case .never:
            // The timer never fires: only the completion flushes.
            seconds = .infinity
        }
        let storage = DebounceThrottleStorage(mode: mode, interval: seconds, scheduler: scheduler, subscriber: subscriber)
        storage.start(signal)
        return storage
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

/// Sends a value only once the source has been quiet for `interval`: the `Duration` form of
/// ``debounce(_:scheduler:)``.
///
/// ```swift
/// let queries = searchField |> debounce(for: .milliseconds(300), scheduler: Queue.mainQueue())
/// ```
///
/// - Parameters:
///   - interval: The quiet time before the latest value is sent.
///   - scheduler: Where the wait is measured and the values are sent.
/// - Returns: An operator for `|>`.
@inlinable public func debounce<T: Sendable, E: Sendable, S: SignalScheduler>(
    for interval: Duration, scheduler: S = Queue.concurrentDefaultQueue()
) -> (Signal<T, E>) -> Signal<T, E> {
    return debounce(interval.secondsForSignals, scheduler: scheduler)
}

/// Sends the latest value of each window of `interval` when the window closes: the `Duration` form of
/// ``throttle(_:scheduler:)``.
///
/// - Parameters:
///   - interval: From a window's first value to the sending of its latest.
///   - scheduler: Where windows are measured and values sent.
/// - Returns: An operator for `|>`.
@inlinable public func throttle<T: Sendable, E: Sendable, S: SignalScheduler>(
    for interval: Duration, scheduler: S = Queue.concurrentDefaultQueue()
) -> (Signal<T, E>) -> Signal<T, E> {
    return throttle(interval.secondsForSignals, scheduler: scheduler)
}
