import Dispatch

/// Delays the *subscription* to the source by `timeout` seconds (values are not delayed one by one).
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer `delay(for:queue:)`.
///
/// The source is started on `queue` when the timer fires; disposing before then cancels the timer and the
/// source never starts. A disposal that races with the timer's firing may come too late to stop the
/// start: the source then starts and is disposed at once, and what it sends after that disposal does not
/// reach the subscriber.
///
/// ```swift
/// let retryLater = request |> delay(2.0, queue: Queue.concurrentDefaultQueue())
/// ```
///
/// `timeout` is checked when the operator is made: 0 or a negative value subscribes as soon as `queue`
/// runs the timer, `+infinity` never subscribes, a value above 100 years waits 100 years, and NaN is a
/// precondition failure naming the argument and the value.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - timeout: Seconds to wait before subscribing (monotonic clock).
///   - queue: Where the timer fires and the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func delay<T, E>(_ timeout: Double, queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "delay(_:queue:)", argument: "timeout")
    return { signal in delayed(signal, by: wait, on: queue) }
}

/// Delays the *subscription* to the source by `timeout` seconds of `scheduler`'s time.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer
/// `delay(for:scheduler:)`.
///
/// ```
/// source:   abc|
/// delay(2): --abc|
/// ```
///
/// Like ``delay(_:queue:)``, on any ``SignalScheduler``: a ``Queue`` in production, a virtual-time
/// scheduler in tests. The argument rules are the same.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - timeout: Seconds to wait before subscribing.
///   - scheduler: Where the wait is measured and the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func delay<T, E>(_ timeout: Double, scheduler: some SignalScheduler) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "delay(_:scheduler:)", argument: "timeout")
    return { signal in delayed(signal, by: wait, on: scheduler) }
}

@inlinable func delayed<T, E>(_ signal: Signal<T, E>, by wait: Wait, on scheduler: some SignalScheduler) -> Signal<T, E> {
    return Signal { subscriber in
        guard case .seconds(let seconds) = wait else {
            // `+infinity`: the source is never started.
            return EmptyDisposable
        }
        let forwarder = SerialForwarder(subscriber: subscriber, scheduler: scheduler)
        let source = MetaDisposable()
        let pending = scheduler.schedule(after: seconds) {
            source.set(forwarder.start(signal))
        }
        // The wait is cancelled first; a source started meanwhile is disposed by `source`, whose later
        // `set` disposes what it is given.
        return ActionDisposable {
            pending.dispose()
            source.dispose()
            forwarder.dispose()
        }
    }
}

/// Like ``delay(_:queue:)``, but measured on the wall clock, so time spent with the system suspended
/// counts towards the delay.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same
/// `suspendAwareDelay` with a `Duration`.
///
/// `timeout` is checked when the operator is made, as for ``delay(_:queue:)``: 0 or negative subscribes
/// as soon as possible, `+infinity` never, above 100 years waits 100 years, NaN is a precondition failure.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - timeout: Seconds to wait before subscribing (wall clock).
///   - granularity: Kept for source compatibility; the wall-clock deadline makes polling unnecessary.
///   - queue: Where the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func suspendAwareDelay<T, E>(
    _ timeout: Double, granularity: Double = 4.0, queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "suspendAwareDelay(_:granularity:queue:)", argument: "timeout")
    return { signal in
        return Signal { subscriber in
            guard case .seconds(let seconds) = wait else {
                // `+infinity`: the source is never started.
                return EmptyDisposable
            }
            let forwarder = SerialForwarder(subscriber: subscriber, scheduler: queue)
            let source = MetaDisposable()
            let pending = queue.scheduleOnce({ source.set(forwarder.start(signal)) }) { timer in
                timer.schedule(wallDeadline: DispatchWallTime.now() + seconds)
            }
            return ActionDisposable {
                pending.dispose()
                source.dispose()
                forwarder.dispose()
            }
        }
    }
}

/// Switches to `alternate` if the source sends nothing within `timeout` seconds.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `timeout`
/// with a `Duration`.
///
/// The first event of the source (value, error or completion) cancels the timer for good, and releases
/// `alternate` (and what it captures). If the timer fires first, the source is disposed and `alternate`
/// is started; a source event racing with the timer is dropped if the timer won.
///
/// The wait starts when the source's `start` returns: a source that blocks in `start` is not timed out
/// while it blocks, and the wait is measured from its return. A disposal that races with the timer's
/// firing may come too late to stop `alternate` from starting (a disposal never waits for the timer's
/// thread): `alternate` then starts and is disposed at once, and nothing it sends reaches the
/// subscriber, but what its `start` does (a fallback request, say) is done.
///
/// `timeout` is checked when the operator is made: `+infinity` never times out (the result is the source
/// itself), 0 or a negative value times out as soon as `queue` runs the timer unless the source sends
/// first, a value above 100 years waits 100 years, and NaN is a precondition failure naming the argument
/// and the value.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - timeout: Seconds to wait for the first event.
///   - queue: Where the timer fires and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E>(_ timeout: Double, queue: Queue, alternate: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "timeout(_:queue:alternate:)", argument: "timeout")
    return { signal in timingOut(signal, after: wait, on: queue, alternate: alternate) }
}

/// Switches to `alternate` if the source sends nothing within `timeout` seconds of `scheduler`'s time.
///
/// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same `timeout`
/// with a `Duration`.
///
/// ```
/// source:      ----a-b|
/// alternate:   x|
/// timeout(2):  --x|
/// ```
///
/// Like ``timeout(_:queue:alternate:)-(Double,_,_)``, on any ``SignalScheduler``: a ``Queue`` in production, a
/// virtual-time scheduler in tests. "Within" includes the end: on a virtual-time scheduler, a first event
/// exactly `timeout` after the subscription passes, however many actions at that instant it takes to
/// arrive (the timeout is decided at the end of the instant,
/// ``SignalScheduler/scheduleAtEndOfInstant(_:)``), unless another operator decides it at the end of
/// that instant too, after this one (the alternate of an inner `timeout` whose wait was armed later, as
/// on a real queue, where that wait also ends later). Only the wait for the first event is bounded; see
/// ``timeout(perValue:scheduler:alternate:)-(Double,_,_)`` for a bound on every gap.
///
/// > Note: Events from several threads are delivered one at a time, in the order the operator decided
/// > on them, never while it holds its lock; see the Threading and disposal article, "Ordering".
///
/// - Parameters:
///   - timeout: Seconds to wait for the first event.
///   - scheduler: Where the wait is measured and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E>(
    _ timeout: Double, scheduler: some SignalScheduler, alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(timeout, as: .delay, api: "timeout(_:scheduler:alternate:)", argument: "timeout")
    return { signal in timingOut(signal, after: wait, on: scheduler, alternate: alternate) }
}

@inlinable func timingOut<T, E>(
    _ signal: Signal<T, E>, after wait: Wait, on scheduler: some SignalScheduler, alternate: Signal<T, E>
)
    -> Signal<T, E>
{
    guard case .seconds(let seconds) = wait else {
        // `+infinity`: the source is never timed out.
        return signal
    }
    return Signal<T, E> { subscriber in
        let storage = TimeoutStorage(
            mode: .firstEvent, seconds: seconds, scheduler: scheduler, alternate: alternate, subscriber: subscriber)
        storage.start(signal)
        return ActionDisposable {
            storage.dispose()
        }
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

/// Delays the subscription to the source by `duration`: the `Duration` form of
/// ``delay(_:queue:)``.
///
/// ```swift
/// let retryLater = request |> delay(for: .seconds(2), queue: Queue.concurrentDefaultQueue())
/// ```
///
/// - Parameters:
///   - duration: How long to wait before subscribing (monotonic clock).
///   - queue: Where the timer fires and the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func delay<T, E>(for duration: Duration, queue: Queue) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return delay(duration.secondsForSignals, queue: queue)
}

/// Delays the subscription to the source by `duration` of `scheduler`'s time: the `Duration` form of
/// ``delay(_:scheduler:)``.
///
/// - Parameters:
///   - duration: How long to wait before subscribing.
///   - scheduler: Where the wait is measured and the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func delay<T, E>(for duration: Duration, scheduler: some SignalScheduler) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return delay(duration.secondsForSignals, scheduler: scheduler)
}

/// Delays the subscription by `timeout` of wall-clock time: the `Duration` form of
/// ``suspendAwareDelay(_:granularity:queue:)``.
///
/// - Parameters:
///   - timeout: How long to wait before subscribing (wall clock).
///   - granularity: Kept for source compatibility, as in the `Double` form.
///   - queue: Where the source starts.
/// - Returns: An operator for `|>`.
@inlinable public func suspendAwareDelay<T, E>(
    _ timeout: Duration, granularity: Duration = .seconds(4), queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return suspendAwareDelay(timeout.secondsForSignals, granularity: granularity.secondsForSignals, queue: queue)
}

/// Switches to `alternate` if the source sends nothing within `timeout`: the `Duration` form of
/// ``timeout(_:queue:alternate:)``.
///
/// - Parameters:
///   - timeout: How long to wait for the first event.
///   - queue: Where the timer fires and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E>(_ timeout: Duration, queue: Queue, alternate: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    return SwiftSignalKit.timeout(timeout.secondsForSignals, queue: queue, alternate: alternate)
}

/// Switches to `alternate` if the source sends nothing within `timeout` of `scheduler`'s time: the
/// `Duration` form of ``timeout(_:scheduler:alternate:)``.
///
/// ```swift
/// let reply = request |> timeout(.seconds(5), scheduler: Queue.concurrentDefaultQueue(), alternate: .fail(.timedOut))
/// ```
///
/// - Parameters:
///   - timeout: How long to wait for the first event.
///   - scheduler: Where the wait is measured and `alternate` starts.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
@inlinable public func timeout<T, E>(
    _ timeout: Duration, scheduler: some SignalScheduler, alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    return SwiftSignalKit.timeout(timeout.secondsForSignals, scheduler: scheduler, alternate: alternate)
}
