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
        guard self.perform(self.machine.withLock { $0.restartRequested() }) else { return }
        while true {
            if self.isFinished() {
                self.stop()
                return
            }
            let subscription = self.makeSubscription(self)
            guard self.perform(self.machine.withLock { $0.subscriptionMade(subscription) }) else { return }
        }
    }

    /// Does what the machine answered, after unlocking: returns whether to start a subscription now.
    private func perform(_ action: RestartLoopStateMachine.Action) -> Bool {
        switch action {
        case .none:
            return false
        case .start:
            return true
        case .dispose(let first, let second):
            first?.dispose()
            second?.dispose()
            return false
        case .disposeThenStart(let unwanted):
            unwanted?.dispose()
            return true
        }
    }

    /// A subscription failed: counts the retry and grows the wait (see
    /// ``RestartLoopStateMachine/failed(growingWaitBy:upTo:maxRetries:)``). The caller acts on the answer:
    /// ``restart(after:forRetry:on:)``, or the failure downstream.
    func failed(growingWaitBy increment: Double, upTo max: Double, maxRetries: Int) -> RestartLoopStateMachine.RetryAction {
        return self.machine.withLock { $0.failed(growingWaitBy: increment, upTo: max, maxRetries: maxRetries) }
    }

    /// Restarts after `delay` seconds of `scheduler`'s time, unless the loop stops first: retry `number`
    /// (as ``failed(growingWaitBy:upTo:maxRetries:)`` numbered it, so that waits stored out of order are
    /// told apart).
    func restart(after delay: Double, forRetry number: Int, on scheduler: some SignalScheduler) {
        let wait = scheduler.schedule(after: delay) { [self] in
            self.restart()
        }
        _ = self.perform(self.machine.withLock { $0.waitScheduled(wait, forRetry: number) })
    }

    /// Stops: disposes the current subscription and cancels a scheduled restart; later restarts do
    /// nothing.
    func stop() {
        _ = self.perform(self.machine.withLock { $0.stopped() })
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
