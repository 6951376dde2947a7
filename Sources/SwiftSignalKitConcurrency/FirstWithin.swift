import SwiftSignalKit

/// How a wait for a signal's first value within a deadline ended: see
/// `Signal.first(within:scheduler:isolation:)`.
///
/// Each way a wait can end has its own case, so a caller that cancelled (a client that disconnected)
/// is never reported as a backend that was too slow:
///
/// ```swift
/// func quoteResponse() async throws -> HTTPResponse {
///     switch try await quotes.first(within: .seconds(2)) {
///     case .value(let quote): return .ok(quote)
///     case .empty: return .notFound
///     case .timedOut: return .gatewayTimeout
///     case .cancelled: return .clientClosedRequest
///     }
/// }
/// ```
///
/// The signal's own error is thrown, typed, not folded into a case.
public enum FirstValueOutcome<T> {
    /// The signal's first value.
    case value(T)
    /// The signal completed without a value.
    case empty
    /// The deadline passed before the signal sent anything.
    case timedOut
    /// The awaiting task was cancelled before the signal sent anything and before the deadline (or
    /// before the call). A cancellation while the signal's `start` runs counts from when it returns.
    case cancelled

    /// The value, or nil for the three other outcomes.
    public var value: T? {
        if case .value(let value) = self { return value }
        return nil
    }
}

extension FirstValueOutcome: Sendable where T: Sendable {}
extension FirstValueOutcome: Equatable where T: Equatable {}
extension FirstValueOutcome: Hashable where T: Hashable {}

extension Signal where E: Error, T: Sendable {
    /// Waits at most `timeout` for the signal's first value, then disposes the subscription, and says
    /// which of value, empty completion, timeout or cancellation happened first.
    ///
    /// ```swift
    /// let outcome = try await legacyClient.profile(id).first(within: .seconds(2))
    /// guard case .value(let profile) = outcome else { return fallback(outcome) }
    /// show(profile)
    /// ```
    ///
    /// - The signal is started when the call is made. The first of: its first event, the deadline, the
    ///   task's cancellation, ends the wait, and the subscription is disposed at once, before the call
    ///   returns. Later events are dropped. An event the signal has sent is the outcome even when the
    ///   deadline passes or the task is cancelled while the source's disposable runs: a slow disposable
    ///   delays the return, never changes the outcome.
    /// - A value the signal sends while it starts (a cached value, `single`) is returned without waiting
    ///   and without a timer, whatever `timeout` is.
    /// - `timeout` follows the library's rules for waits: zero or negative times out once `scheduler`
    ///   has run the timer and the end of that instant (on a `Queue`, one more action) unless the signal
    ///   has answered by then, and a wait above 100
    ///   years waits 100 years. It is measured from the end of the signal's `start`: a generator that
    ///   blocks its caller delays the deadline by as long.
    /// - A cancellation that comes before the first event and the deadline gives `.cancelled`, never
    ///   `.timedOut` (the deadline passes at the end of its instant, so on virtual time a cancellation
    ///   at that instant comes first); a deadline that passed first stays `.timedOut`, even if the task is cancelled
    ///   while the subscription is being disposed. A task cancelled before the call never starts the
    ///   signal. The signal's `start` runs on the calling task: a cancellation while it runs is seen
    ///   when it returns, so an event the signal sent by then is the outcome.
    ///
    /// Give a `VirtualTimeScheduler` as `scheduler` to test the deadline without waiting. "Within"
    /// includes the deadline: there, a value due exactly at it is the outcome, not `.timedOut` (the
    /// deadline is decided at the end of its instant, `scheduleAtEndOfInstant(_:)`). Only the
    /// scheduler's clock passes the deadline: awaited with nothing moving that clock (no `run`, no
    /// `advance(by:)`), the call waits for a value or the task's cancellation.
    ///
    /// On a real clock there is no common instant: a value that falls due together with the deadline
    /// (a timer of the same length, a `delay` as long as `timeout`) races it, and either can win. On
    /// the default scheduler, a concurrent queue, the end of the instant is one more action that runs
    /// beside the value's delivery rather than after it, so such a race goes either way about as
    /// often. The deadline is a timer, so it passes when the scheduler runs that timer, which under
    /// load can be a few milliseconds after `timeout`; a value sent before then is still the outcome.
    /// Leave a margin between the slowest answer you accept and `timeout`.
    ///
    /// - Parameters:
    ///   - timeout: The longest wait.
    ///   - scheduler: Where the deadline is measured; a ``Queue`` by default.
    ///   - isolation: Where the call runs; defaults to the caller's actor.
    /// - Returns: What happened first.
    /// - Throws: The signal's error, typed, if it fails before sending a value.
    public func first(
        within timeout: Duration, scheduler: some SignalScheduler = Queue.concurrentDefaultQueue(),
        isolation: isolated (any Actor)? = #isolation
    ) async throws(E) -> FirstValueOutcome<T> {
        switch await self.firstOutcome(within: timeout, scheduler: scheduler, isolation: isolation) {
        case .value(let value):
            return .value(value)
        case .failure(let error):
            throw error
        case .completed:
            return .empty
        case .timedOut:
            return .timedOut
        case .cancelled:
            return .cancelled
        }
    }

    func firstOutcome(
        within timeout: Duration, scheduler: some SignalScheduler, isolation: isolated (any Actor)?
    ) async -> FirstEvent<T, E> {
        if Task.isCancelled { return .cancelled }
        let waiter = FirstValueWaiter<T, E>.started(on: self)
        if let outcome = waiter.takeEarlyOutcome() {
            return outcome
        }
        // Armed only now, so an answer given while starting needs no timer; and inside the wait's
        // cancellation handler, so that a cancellation is recorded when it happens, before or after the
        // deadline and the first event: whichever of the three comes first is the outcome. A task
        // cancelled before then is given up as the handler is installed, and gets no timer.
        return await waiter.waitForOutcome(
            isolation: isolation,
            whileWaiting: {
                if Task.isCancelled { return nil }
                // Decided at the end of the deadline's instant: on virtual time, a value due exactly
                // then arrives first, as for `timeout`.
                return scheduler.schedule(after: timeout) {
                    scheduler.scheduleAtEndOfInstant { waiter.giveUp(with: .timedOut) }
                }
            })
    }
}
