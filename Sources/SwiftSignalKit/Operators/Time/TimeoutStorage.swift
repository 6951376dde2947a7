/// One subscription to a timeout: runs ``TimeoutStateMachine``'s actions outside its lock.
@usableFromInline final class TimeoutStorage<T, E, S: SignalScheduler>: SerialDeliveryHost, @unchecked Sendable {
    // Safe: the mutable state is the machine, behind its lock; the other stored properties are
    // immutable and Sendable or thread-safe. Values of non-Sendable types cross threads here as they
    // would without the operator (see ``SerialForwarder``).
    @usableFromInline let machine: LockedState<TimeoutStateMachine<T, E>>
    @usableFromInline let subscriber: Subscriber<T, E>
    @usableFromInline let scheduler: S
    @usableFromInline let seconds: Double
    @usableFromInline let source = MetaDisposable()
    @usableFromInline let fallback = MetaDisposable()

    @inlinable init(
        mode: TimeoutStateMachine<T, E>.Mode, seconds: Double, scheduler: S, alternate: Signal<T, E>, subscriber: Subscriber<T, E>
    ) {
        self.machine = LockedState(TimeoutStateMachine(mode: mode, alternate: alternate))
        self.seconds = seconds
        self.scheduler = scheduler
        self.subscriber = subscriber
    }

    /// Starts the source, then the first wait (see ``arm(after:)`` for how a wait's end ties with an
    /// event due at the same instant). A value the source sends synchronously has moved the machine on
    /// by the time the wait is armed, and the machine cancels that wait's timer at once
    /// (``TimeoutStateMachine/timerArmed(after:_:)``).
    @inlinable func start(_ signal: Signal<T, E>) {
        defer { self.arm(after: 0) }
        self.source.set(
            signal.subscribe(
                Linked(to: self.subscriber),
                next: { value in self.perform(self.machine.withLock { $0.sourceSent(.Next(value)) }) },
                error: { error in self.perform(self.machine.withLock { $0.sourceSent(.Error(error)) }) },
                completed: { self.perform(self.machine.withLock { $0.sourceSent(.Completion) }) }))
    }

    @inlinable func dispose() {
        self.perform(self.machine.withLock { $0.disposed() })
    }

    /// Starts the wait that follows value `generation` (0: the subscription).
    ///
    /// When the wait ends, the timeout is decided at the end of that instant
    /// (``SignalScheduler/scheduleAtEndOfInstant(_:)``): on a virtual-time scheduler an event due then
    /// arrives first and passes, whenever its source scheduled it (a repeating timer schedules its next
    /// firing after delivering one, a `delay` only once the one before it has fired) and however many
    /// actions it takes to arrive (`deliverOn` hops, an async task's `send` on a timeline). That is "a
    /// gap of more than the interval". On a `Queue` it costs one more dispatch, and only when a wait
    /// runs out.
    @inlinable func arm(after generation: UInt64) {
        // The scheduler is called outside the lock: it may be a user's own conformance.
        let scheduler = self.scheduler
        let timer = scheduler.schedule(after: self.seconds) {
            scheduler.scheduleAtEndOfInstant {
                self.perform(self.machine.withLock { $0.timerFired(after: generation) })
            }
        }
        self.perform(self.machine.withLock { $0.timerArmed(after: generation, timer) })
    }

    /// Runs an action of the machine, after unlocking.
    @inlinable func perform(_ action: TimeoutStateMachine<T, E>.Action) {
        switch action {
        case .none:
            break
        case .deliver(let item, let timer):
            timer?.dispose()
            self.deliverSerially(startingWith: item)
        case .cancel(let timer):
            timer.dispose()
        case .release(let event, let timer):
            timer?.dispose()
            withExtendedLifetime(event) {}
        case .switchToAlternate(let timer, let alternate):
            // Released here, outside the lock.
            withExtendedLifetime(timer) {}
            self.switchToAlternate(alternate)
        case .tearDown(let timer, let undelivered, let alternate):
            timer?.dispose()
            self.source.dispose()
            self.fallback.dispose()
            // Released here, outside the lock.
            withExtendedLifetime((undelivered, alternate)) {}
        case .retiringAlternate(let alternate, let then):
            self.perform(then)
            // Released here, outside the lock, after the event it gave way to.
            withExtendedLifetime(alternate) {}
        }
    }

    /// The timer won: disposes the source and starts `alternate`.
    @inlinable func switchToAlternate(_ alternate: Signal<T, E>) {
        self.source.dispose()
        // The source's disposable is user code, and may take its time: a disposal of the whole
        // subscription meanwhile must not start the alternate after it returned.
        guard self.machine.withLock({ $0.isTimedOut }) else { return }
        self.fallback.set(
            alternate.subscribe(
                Linked(to: self.subscriber),
                next: { value in self.perform(self.machine.withLock { $0.alternateSent(.Next(value)) }) },
                error: { error in self.perform(self.machine.withLock { $0.alternateSent(.Error(error)) }) },
                completed: { self.perform(self.machine.withLock { $0.alternateSent(.Completion) }) }))
    }

    @usableFromInline var handOffScheduler: any SignalScheduler { self.scheduler }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<TimeoutStateMachine<T, E>.Item> {
        return self.machine.withLock { $0.nextDelivery(resuming: resuming) }
    }

    @inlinable func deliver(_ item: TimeoutStateMachine<T, E>.Item) {
        self.subscriber.put(item.event)
        if let generation = item.startsWait {
            // The wait after a value starts once the value has been delivered.
            self.arm(after: generation)
        }
    }
}
