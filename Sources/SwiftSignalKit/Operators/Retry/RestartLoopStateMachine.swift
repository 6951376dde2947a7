/// The state of a ``RestartLoop``, under its one lock. Every event returns what to dispose after
/// unlocking.
///
/// Impossible transitions trap (see ``StartTrampoline``); an event that arrives after ``stopped()``
/// is a benign race (a retry deciding while the downstream disposes) and is answered with what to
/// dispose, or with nothing to do.
struct RestartLoopStateMachine: Sendable {
    /// What a running loop holds.
    struct Running: Sendable {
        /// Whether a subscription is being started, and whether another was asked for meanwhile.
        var trampoline = StartTrampoline()
        /// The subscription made last.
        var current: Disposable?
        /// The scheduled wait before a retry.
        var wait: Disposable?
        /// The wait before the last retry, grown by each ``nextRetry(increment:max:)``.
        var retryDelay: Double = 0
        /// Retries (or failures) so far.
        var retryCount = 0
    }

    enum State: Sendable {
        case running(Running)
        /// Stopped for good: later subscriptions and waits are disposed at once.
        case stopped
    }

    private(set) var state = State.running(Running())

    /// Runs `body` on the running state; nil once stopped.
    private mutating func whileRunning<Result>(_ body: (inout Running) -> Result) -> Result? {
        guard case .running(var running) = self.state else { return nil }
        // Taken out, changed and put back; `.stopped` in between only inside this call, under the lock.
        self.state = .stopped
        defer { self.state = .running(running) }
        return body(&running)
    }

    /// A restart was asked for: returns whether the caller starts the subscription now.
    mutating func restartRequested() -> Bool {
        return self.whileRunning { $0.trampoline.ask() } ?? false
    }

    /// The starting thread made `subscription`: returns the subscription to dispose (the one it
    /// replaces, or itself after a stop) and whether to start another at once.
    mutating func subscriptionMade(_ subscription: Disposable) -> (unwanted: Disposable?, again: Bool) {
        return self.whileRunning { running in
            let replaced = running.current
            running.current = subscription
            return (replaced, running.trampoline.startReturned())
        } ?? (subscription, false)
    }

    /// A wait before a retry was scheduled: returns the wait to dispose (the one it replaces, or itself
    /// after a stop).
    mutating func waitScheduled(_ wait: Disposable) -> Disposable? {
        return self.whileRunning { running in
            let replaced = running.wait
            running.wait = wait
            return replaced
        } ?? wait
    }

    /// Grows the wait by `increment`, up to `max`, and counts the retry; after a stop, (0, 0): the
    /// retry that follows schedules a wait that ``waitScheduled(_:)`` disposes at once.
    mutating func nextRetry(increment: Double, max: Double) -> (delay: Double, count: Int) {
        return self.whileRunning { running in
            running.retryDelay = Swift.min(max, running.retryDelay + increment)
            running.retryCount += 1
            return (running.retryDelay, running.retryCount)
        } ?? (0, 0)
    }

    /// Counts a failure; after a stop, 0.
    mutating func countFailure() -> Int {
        return self.whileRunning { running in
            running.retryCount += 1
            return running.retryCount
        } ?? 0
    }

    /// Stops the loop: returns the wait and the subscription to dispose.
    mutating func stopped() -> (wait: Disposable?, current: Disposable?) {
        guard case .running(let running) = self.state else { return (nil, nil) }
        self.state = .stopped
        return (running.wait, running.current)
    }
}
