/// Runs subscriptions one after another, restarting on request, without growing the stack.
///
/// A source that completes synchronously would otherwise restart from inside its own `start`, nesting
/// one stack frame per restart. Here a restart requested while a subscription is still starting is
/// recorded and run by the loop that is already on the stack, so 100,000 synchronous restarts take
/// constant stack depth.
final class RestartLoop: Sendable {
    private let machine = LockedState(RestartLoopStateMachine())
    private let makeSubscription: @Sendable (RestartLoop) -> Disposable
    private let isFinished: @Sendable () -> Bool

    /// - Parameters:
    ///   - isFinished: Whether the downstream has ended; checked before every restart, because while the
    ///     loop runs inside the generator a downstream disposal cannot call ``stop()`` yet.
    ///   - makeSubscription: Starts one subscription; it calls ``restart()`` to ask for another.
    init(isFinished: @escaping @Sendable () -> Bool, _ makeSubscription: @escaping @Sendable (RestartLoop) -> Disposable) {
        self.isFinished = isFinished
        self.makeSubscription = makeSubscription
    }

    /// Starts the first subscription.
    func begin() {
        self.restart()
    }

    /// Asks for a new subscription; runs it now, or after the one being started returns.
    func restart() {
        guard self.machine.withLock({ $0.restartRequested() }) else { return }
        while true {
            if self.isFinished() {
                self.stop()
                return
            }
            let subscription = self.makeSubscription(self)
            let (unwanted, again) = self.machine.withLock { $0.subscriptionMade(subscription) }
            unwanted?.dispose()
            if !again { return }
        }
    }

    /// Grows the retry wait by `increment` (up to `max`) and counts the retry.
    ///
    /// - Returns: The wait before this retry and how many retries there have been, this one included.
    func nextRetryDelay(increment: Double, max: Double) -> (delay: Double, count: Int) {
        return self.machine.withLock { $0.nextRetry(increment: increment, max: max) }
    }

    /// Restarts after `delay` seconds of `scheduler`'s time, unless the loop stops first.
    func restart(after delay: Double, on scheduler: some SignalScheduler) {
        let wait = scheduler.schedule(after: delay) { [self] in
            self.restart()
        }
        self.machine.withLock { $0.waitScheduled(wait) }?.dispose()
    }

    /// Counts an attempt that failed and returns how many have failed, this one included.
    func countFailure() -> Int {
        return self.machine.withLock { $0.countFailure() }
    }

    /// Stops: disposes the current subscription and cancels a scheduled restart; later restarts do
    /// nothing.
    func stop() {
        let (wait, current) = self.machine.withLock { $0.stopped() }
        wait?.dispose()
        current?.dispose()
    }
}

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

extension RestartLoop {
    /// A signal that runs `makeSubscription` through a loop and stops the loop on dispose.
    static func signal<T, E>(_ makeSubscription: @escaping @Sendable (Subscriber<T, E>, RestartLoop) -> Disposable) -> Signal<T, E> {
        return Signal { subscriber in
            let loop = RestartLoop(isFinished: { subscriber.isTerminated }) { loop in
                makeSubscription(subscriber, loop)
            }
            loop.begin()
            return ActionDisposable {
                loop.stop()
            }
        }
    }
}
