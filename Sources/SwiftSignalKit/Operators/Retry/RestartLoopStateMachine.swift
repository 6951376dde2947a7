/// The state of a ``RestartLoop``, under its one lock. Every event returns what the loop does after
/// unlocking: an ``Action``, or, for a failure, a ``RetryAction`` (whether and when to retry shares
/// nothing with the subscriptions' bookkeeping).
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
        /// The retry that ``wait`` is for (0 before the first).
        var waitNumber = 0
        /// The wait before the last retry, grown by each ``failed(growingWaitBy:upTo:maxRetries:)``.
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

    /// What the loop does about a failure, after unlocking.
    enum RetryAction: Sendable, Equatable {
        /// Restart after `delay` seconds: retry number `number` (1 for the first).
        case retry(number: Int, after: Double)
        /// The failure was retry number `maxRetries + 1`: send it downstream.
        case giveUp
        /// Nothing: the loop has stopped (a failure racing the downstream's disposal).
        case none
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

    /// The wait before retry `number` was scheduled: disposes the wait it replaces (or itself, after a
    /// stop).
    ///
    /// Waits can arrive out of order: a wait may fire before `schedule(after:)` has returned it (a timer
    /// on another thread, a scheduling thread preempted), and its retry can fail and schedule the next
    /// wait before this one is stored. A wait for an earlier retry than the one stored has fired, then,
    /// and is handed back to dispose (which does nothing); storing it would dispose the later wait and
    /// cancel that retry for good.
    mutating func waitScheduled(_ wait: Disposable, forRetry number: Int) -> Action {
        return self.whileRunning { running in
            guard number > running.waitNumber else { return .dispose(wait, nil) }
            let replaced = running.wait
            running.wait = wait
            running.waitNumber = number
            return .dispose(replaced, nil)
        } ?? .dispose(wait, nil)
    }

    /// The subscription failed: counts the retry and grows the wait by `increment`, up to `max`; retry
    /// after that wait, unless there have been `maxRetries` retries already. After a stop, nothing.
    ///
    /// A caller that computes its own waits (``retry(_:maxAttempts:scheduler:when:)``'s backoff) passes
    /// 0 for both and uses the retry's number.
    mutating func failed(growingWaitBy increment: Double, upTo max: Double, maxRetries: Int) -> RetryAction {
        return self.whileRunning { running in
            running.retryDelay = Swift.min(max, running.retryDelay + increment)
            running.retryCount += 1
            guard running.retryCount <= maxRetries else { return .giveUp }
            return .retry(number: running.retryCount, after: running.retryDelay)
        } ?? .none
    }

    /// Stops the loop: disposes the wait and the subscription, the first time.
    mutating func stopped() -> Action {
        guard case .running(let running) = self.state else { return .none }
        self.state = .stopped
        return .dispose(running.wait, running.current)
    }
}
