/// The state of a ``RestartLoop``, under its one lock. Every event returns an ``Action``, what the loop
/// does after unlocking; ``nextRetry(increment:max:)`` and ``countFailure()`` return counts.
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

    /// What the loop does after unlocking.
    enum Action: Sendable {
        /// Nothing.
        case none
        /// Start a subscription: the caller is the one that runs them.
        case start
        /// Dispose what is given (a replaced or unwanted subscription or wait).
        case dispose(Disposable?, Disposable?)
        /// Dispose what is given, then start another subscription at once (one was asked for while the
        /// last one started).
        case disposeThenStart(Disposable?)
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

    /// A restart was asked for: ``Action/start`` if the caller starts the subscription now.
    mutating func restartRequested() -> Action {
        return self.whileRunning { $0.trampoline.ask() ? .start : .none } ?? .none
    }

    /// The starting thread made `subscription`: disposes the one it replaces (or itself, after a stop),
    /// and starts another at once if one was asked for meanwhile.
    mutating func subscriptionMade(_ subscription: Disposable) -> Action {
        return self.whileRunning { running in
            let replaced = running.current
            running.current = subscription
            return running.trampoline.startReturned() ? .disposeThenStart(replaced) : .dispose(replaced, nil)
        } ?? .dispose(subscription, nil)
    }

    /// A wait before a retry was scheduled: disposes the wait it replaces (or itself, after a stop).
    mutating func waitScheduled(_ wait: Disposable) -> Action {
        return self.whileRunning { running in
            let replaced = running.wait
            running.wait = wait
            return .dispose(replaced, nil)
        } ?? .dispose(wait, nil)
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

    /// Stops the loop: disposes the wait and the subscription, the first time.
    mutating func stopped() -> Action {
        guard case .running(let running) = self.state else { return .none }
        self.state = .stopped
        return .dispose(running.wait, running.current)
    }
}
