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
            signal.start(
                linkedTo: self.subscriber,
                next: { [self] value in self.valueArrived(value) },
                error: { [self] error in self.end(self.state.withLock { $0.sourceFailed(error) }) },
                completed: { [self] in self.end(self.state.withLock { $0.sourceCompleted() }) }))
    }

    @inlinable func valueArrived(_ value: T) {
        switch self.state.withLock({ $0.valueArrived(value) }) {
        case .none(let dropped):
            withExtendedLifetime(dropped) {}
        case .arm(let generation, let cancel, let dropped):
            withExtendedLifetime(dropped) {}
            cancel?.dispose()
            // The scheduler is called outside the lock: it may be a user's own conformance.
            let timer = self.scheduler.schedule(after: self.interval) { [self] in
                if self.state.withLock({ $0.timerFired(generation) }) {
                    self.deliverQueued()
                }
            }
            self.state.withLock { $0.timerScheduled(generation, timer) }?.dispose()
        }
    }

    @inlinable func end(_ action: DebounceThrottleStateMachine<T, E>.EndAction) {
        action.cancel?.dispose()
        withExtendedLifetime((action.dropped, action.undelivered)) {}
        if action.deliver {
            self.deliverQueued()
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
        self.end(self.state.withLock { $0.disposed() })
        self.source.dispose()
    }
}
