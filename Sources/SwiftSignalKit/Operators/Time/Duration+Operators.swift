// Every API of the core that takes a number of seconds as `Double` also takes a `Duration`, here, in one
// place: the form to prefer in new code, since the async code around a signal measures time in
// `Duration` (`Task.sleep(for:)`, clocks). The `Double` forms stay for code written against the original
// SwiftSignalKit. Each `Duration` form converts to seconds and calls its `Double` form, so the two share
// every rule (zero, negative and huge waits) and every precondition message. A `Duration` cannot be NaN
// or infinite; the longest wait is still 100 years.
//
// Labels: where Combine has the operator, the `Duration` form takes Combine's label (`delay(for:)`,
// `debounce(for:)`, `throttle(for:)`, an unlabelled `timeout`); elsewhere it keeps the `Double` form's.

extension Duration {
    /// The duration as the seconds the `Double` forms take.
    @usableFromInline package var secondsForSignals: Double {
        let (seconds, attoseconds) = self.components
        // Divided, not multiplied by 1e-18: division rounds once, so 300 ms is exactly the `Double` 0.3.
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension Queue {
    /// Runs `f` on the queue after `delay`: the `Duration` form of `after(_:_:)`.
    ///
    /// ```swift
    /// queue.after(.milliseconds(250)) { flush() }
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long to wait; zero or negative runs `f` as soon as the queue gets to it.
    ///   - f: The work.
    @preconcurrency public func after(_ delay: Duration, _ f: @escaping @Sendable () -> Void) {
        self.after(delay.secondsForSignals, f)
    }
}

extension SignalScheduler {
    /// Runs `action` after `delay`, unless the returned disposable is disposed first: the `Duration`
    /// form of `schedule(after:_:)`, for every scheduler.
    ///
    /// - Parameters:
    ///   - delay: How long to wait; zero or negative runs the action as soon as possible.
    ///   - action: The work.
    /// - Returns: A disposable that cancels the action if it has not started.
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Disposable {
        return self.schedule(after: delay.secondsForSignals, action)
    }
}

extension Timer {
    /// Creates a timer whose handler takes no arguments: the `Duration` form of
    /// `init(timeout:repeat:completion:queue:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`.
    ///   - queue: Where the handler runs.
    @preconcurrency public convenience init(timeout: Duration, `repeat`: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.init(timeout: timeout.secondsForSignals, repeat: `repeat`, completion: completion, queue: queue)
    }

    /// Creates a timer whose handler receives the timer: the `Duration` form of
    /// `init(timeout:repeat:completion:queue:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`; it may call ``invalidate()``.
    ///   - queue: Where the handler runs.
    @preconcurrency public convenience init(
        timeout: Duration, `repeat`: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue
    ) {
        self.init(timeout: timeout.secondsForSignals, repeat: `repeat`, completion: completion, queue: queue)
    }

    /// Creates a timer that fires on a scheduler: the `Duration` form of
    /// `init(timeout:repeat:scheduler:completion:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - scheduler: Where the handler runs.
    ///   - completion: The handler; it may call ``invalidate()``.
    public convenience init(
        timeout: Duration, `repeat`: Bool, scheduler: some SignalScheduler, completion: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(timeout: timeout.secondsForSignals, repeat: `repeat`, scheduler: scheduler, completion: completion)
    }
}

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

/// A signal that sends 0, 1, 2, … every `period`: the `Duration` form of ``interval(_:scheduler:)``.
///
/// - Parameters:
///   - period: Time between values, and before the first; not negative.
///   - scheduler: Where the timer runs and values are sent.
/// - Returns: A cold signal of the firing count.
public func interval<S: SignalScheduler>(_ period: Duration, scheduler: S = Queue.concurrentDefaultQueue()) -> Signal<Int, NoError> {
    return interval(period.secondsForSignals, scheduler: scheduler)
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
    return timer(delay.secondsForSignals, period: period?.secondsForSignals, scheduler: scheduler)
}

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
    return retry(delayIncrement.secondsForSignals, maxDelay: maxDelay.secondsForSignals, onQueue: queue)
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
    return retry(delayIncrement.secondsForSignals, maxDelay: maxDelay.secondsForSignals, scheduler: scheduler)
}

/// Resubscribes after failures that `retryOnError` accepts, at most `maxRetries` times: the `Duration`
/// form of ``retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)``.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - maxRetries: How many retries at most.
///   - queue: Where the retries are scheduled.
/// - Returns: An operator for `|>`.
@preconcurrency public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Duration, maxDelay: Duration, maxRetries: Int, onQueue queue: Queue
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return retry(
        retryOnError: retryOnError, delayIncrement: delayIncrement.secondsForSignals, maxDelay: maxDelay.secondsForSignals,
        maxRetries: maxRetries, onQueue: queue)
}

/// Resubscribes after failures that `retryOnError` accepts, at most `maxRetries` times, on any
/// scheduler: the `Duration` form of ``retry(retryOnError:delayIncrement:maxDelay:maxRetries:scheduler:)``.
///
/// - Parameters:
///   - retryOnError: Whether an error is worth retrying.
///   - delayIncrement: Added to the wait after each failure; not negative.
///   - maxDelay: The longest wait; not negative.
///   - maxRetries: How many retries at most.
///   - scheduler: Where the waits are measured and the retries start.
/// - Returns: An operator for `|>`.
public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool, delayIncrement: Duration, maxDelay: Duration, maxRetries: Int,
    scheduler: some SignalScheduler
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return retry(
        retryOnError: retryOnError, delayIncrement: delayIncrement.secondsForSignals, maxDelay: maxDelay.secondsForSignals,
        maxRetries: maxRetries, scheduler: scheduler)
}

extension RetryBackoff {
    /// Exponential backoff: the `Duration` form of
    /// `exponential(initial:multiplier:maxDelay:jitter:random:)`.
    ///
    /// ```swift
    /// let backoff = RetryBackoff.exponential(initial: .milliseconds(100), maxDelay: .seconds(10))
    /// ```
    ///
    /// - Parameters:
    ///   - initial: The first bound; not negative.
    ///   - multiplier: The growth of the bound; finite and ≥ 1.
    ///   - maxDelay: The largest bound; not negative. (For no cap, use the `Double` form with `.infinity`.)
    ///   - jitter: How waits are drawn below the bound.
    ///   - random: The source of numbers from 0 to 1 for the jitter.
    /// - Returns: The backoff.
    public static func exponential(
        initial: Duration, multiplier: Double = 2, maxDelay: Duration, jitter: Jitter = .full,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) -> RetryBackoff {
        return .exponential(
            initial: initial.secondsForSignals, multiplier: multiplier, maxDelay: maxDelay.secondsForSignals, jitter: jitter, random: random
        )
    }
}
