/// One subscription of ``debounce(_:scheduler:)`` or ``throttle(_:scheduler:)``: runs the state
/// machine's actions outside its lock.
@usableFromInline final class DebounceThrottleStorage<T: Sendable, E: Sendable, S: SignalScheduler>: Disposable, SerialDeliveryHost {
    @usableFromInline let state: LockedState<DebounceThrottleStateMachine<T, E>>
    @usableFromInline let subscriber: Subscriber<T, E>
    @usableFromInline let scheduler: S
    @usableFromInline let interval: Double
    @usableFromInline let source = MetaDisposable()

    @inlinable init(mode: DebounceThrottleStateMachine<T, E>.Mode, interval: Double, scheduler: S, subscriber: Subscriber<T, E>) {
        self.state = LockedState(DebounceThrottleStateMachine(mode: mode))
        self.interval = interval
        self.scheduler = scheduler
        self.subscriber = subscriber
    }

    @inlinable func start(_ signal: Signal<T, E>) {
        self.source.set(
            signal.subscribe(
                Linked(to: self.subscriber),
                next: { [self] value in self.act(self.state.withLock { $0.valueArrived(value) }) },
                error: { [self] error in self.act(self.state.withLock { $0.sourceFailed(error) }) },
                completed: { [self] in self.act(self.state.withLock { $0.sourceCompleted() }) }))
    }

    /// Runs an action of the machine, after unlocking.
    @inlinable func act(_ action: DebounceThrottleStateMachine<T, E>.Action) {
        switch action {
        case .none:
            break
        case .release(let value):
            withExtendedLifetime(value) {}
        case .arm(let generation, let cancelling, let releasing):
            withExtendedLifetime(releasing) {}
            cancelling?.dispose()
            // The scheduler is called outside the lock, and its timers are released outside it: it may be
            // a user's own conformance.
            let timer = self.scheduler.schedule(after: self.interval) { [self] in
                self.act(self.state.withLock { $0.timerFired(generation) })
            }
            self.act(self.state.withLock { $0.timerScheduled(generation, timer) })
        case .cancel(let timer):
            timer.dispose()
        case .deliver:
            self.deliverQueued()
        case .fired(let timer, let deliver):
            // Released here, outside the lock.
            withExtendedLifetime(timer) {}
            if deliver {
                self.deliverQueued()
            }
        case .end(let timer, let dropped, let undelivered, let deliver):
            timer?.dispose()
            withExtendedLifetime((dropped, undelivered)) {}
            if deliver {
                self.deliverQueued()
            }
        }
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<T, E>> {
        return self.state.withLock { $0.delivery.step(resuming: resuming) }
    }

    @inlinable func deliver(_ event: SignalEvent<T, E>) {
        self.subscriber.put(event)
    }

    @usableFromInline var handOffScheduler: any SignalScheduler { self.scheduler }

    @inlinable func dispose() {
        self.act(self.state.withLock { $0.disposed() })
        self.source.dispose()
    }
}
