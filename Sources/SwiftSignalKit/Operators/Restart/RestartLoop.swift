/// Runs subscriptions one after another, restarting on request, without growing the stack.
///
/// A source that completes synchronously would otherwise restart from inside its own `start`, nesting
/// one stack frame per restart. Here a restart requested while a subscription is still starting is
/// recorded and run by the loop that is already on the stack, so 100,000 synchronous restarts take
/// constant stack depth.
final class RestartLoop: Sendable {
    private struct State: Sendable {
        var isDisposed = false
        /// A subscription is being started by some thread, which will check `restartRequested` after.
        var isStarting = false
        var restartRequested = false
    }

    private let state = LockedState<State>(State())
    /// The wait before the next retry and the number of retries so far, for the `retry` operators.
    private let retries = LockedState<(delay: Double, count: Int)>((0, 0))
    private let current = MetaDisposable()
    /// The wait before a scheduled restart, cancelled by ``stop()``.
    private let pendingWait = MetaDisposable()
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
        let startNow = self.state.withLock { state -> Bool in
            if state.isDisposed { return false }
            if state.isStarting {
                state.restartRequested = true
                return false
            }
            state.isStarting = true
            return true
        }
        guard startNow else { return }
        while true {
            if self.isFinished() {
                self.stop()
                return
            }
            self.current.set(self.makeSubscription(self))
            let again = self.state.withLock { state -> Bool in
                if state.restartRequested && !state.isDisposed {
                    state.restartRequested = false
                    return true
                }
                state.isStarting = false
                return false
            }
            if !again { return }
        }
    }

    /// Grows the retry wait by `increment` (up to `max`) and counts the retry.
    ///
    /// - Returns: The wait before this retry and how many retries there have been, this one included.
    func nextRetryDelay(increment: Double, max: Double) -> (delay: Double, count: Int) {
        return self.retries.withLock { retries in
            retries.delay = Swift.min(max, retries.delay + increment)
            retries.count += 1
            return retries
        }
    }

    /// Restarts after `delay` seconds of `scheduler`'s time, unless the loop stops first.
    func restart(after delay: Double, on scheduler: some SignalScheduler) {
        self.pendingWait.set(
            scheduler.schedule(after: delay) { [self] in
                self.restart()
            })
    }

    /// Counts an attempt that failed and returns how many have failed, this one included.
    func countFailure() -> Int {
        return self.retries.withLock { retries in
            retries.count += 1
            return retries.count
        }
    }

    /// Stops: disposes the current subscription and cancels a scheduled restart; later restarts do
    /// nothing.
    func stop() {
        self.state.withLock { $0.isDisposed = true }
        self.pendingWait.dispose()
        self.current.dispose()
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
