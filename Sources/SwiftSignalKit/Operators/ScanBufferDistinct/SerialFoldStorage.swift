/// The shared state of one subscription to a serialising fold (``scan(_:_:)``, ``buffer(count:)``,
/// ``distinct(by:)``): runs ``SerialFoldStateMachine``'s actions.
///
/// `step` and `finish` are the operator's: they run outside the lock, one event at a time, on the thread
/// that holds the deliverer's role, with the fold's state passed `inout`.
///
/// Inlinable, as the operators that make it are, so that it is specialised for the client's types:
/// unspecialised, each event looked up generic types (`SignalEvent<T, E>`, the state machine, the
/// delivery step) in the runtime's shared tables, whose reader counts every thread writes.
@usableFromInline final class SerialFoldStorage<State: Sendable, T: Sendable, R, E: Sendable>: SerialDeliveryHost {
    @usableFromInline typealias Machine = SerialFoldStateMachine<T, E>

    @usableFromInline let machine = LockedState(Machine())
    @usableFromInline let subscriber: Subscriber<R, E>
    /// The fold's state. Safe without a lock: only the thread holding the ``SerialDelivery``'s
    /// deliverer role reads or writes it (the role passes from thread to thread under the machine's
    /// lock, which orders the accesses), and it is released once, either by the disposing thread when
    /// nobody delivers and nobody can start to, or by the last deliverer after disposal.
    @usableFromInline nonisolated(unsafe) var state: State?
    /// Handles a value: updates the state, and returns the value to send, if any.
    @usableFromInline let step: @Sendable (inout State, T) -> R?
    /// Handles completion: returns a last value to send before completing, if any.
    @usableFromInline let finish: @Sendable (inout State) -> R?

    @inlinable init(
        initialState: State,
        subscriber: Subscriber<R, E>,
        step: @escaping @Sendable (inout State, T) -> R?,
        finish: @escaping @Sendable (inout State) -> R?
    ) {
        self.state = initialState
        self.subscriber = subscriber
        self.step = step
        self.finish = finish
    }

    /// Starts `signal` into this storage; the result is the subscription's disposable, which also drops
    /// the queued events and the fold's state.
    @inlinable func start(_ signal: Signal<T, E>) -> Disposable {
        // The source's callbacks own the storage; the cycle through the subscriber is broken when the
        // subscription terminates or is disposed.
        let source = signal.subscribe(
            Linked(to: self.subscriber),
            next: { value in
                self.received(.Next(value))
            },
            error: { error in
                self.received(.Error(error))
            },
            completed: {
                self.received(.Completion)
            })
        return ActionDisposable {
            let action = self.machine.withLock { $0.disposed() }
            source.dispose()
            if case .tearDown(let undelivered, let releasingState) = action {
                // Released here, outside the lock.
                withExtendedLifetime(undelivered) {}
                if releasingState {
                    self.state = nil
                }
            }
        }
    }

    @inlinable func received(_ event: SignalEvent<T, E>) {
        self.act(self.machine.withLock { $0.received(event) })
    }

    /// Runs an action of the machine, after unlocking; the deliverer's own actions go through
    /// ``nextDelivery(resuming:)``.
    @inlinable func act(_ action: Machine.Action) {
        switch action {
        case .handle(let event):
            self.deliverSerially(startingWith: event)
        case .none, .handOff:
            break
        case .drop(let event):
            withExtendedLifetime(event) {}
        case .releaseState:
            self.state = nil
        }
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<T, E>> {
        switch self.machine.withLock({ $0.nextDelivery(resuming: resuming) }) {
        case .handle(let event):
            return .deliver(event)
        case .handOff:
            return .handOff
        case .releaseState:
            // This deliverer was the last one, after disposal: the state is released outside the lock.
            self.state = nil
            return .idle
        case .none, .drop:
            return .idle
        }
    }

    @inlinable func deliver(_ event: SignalEvent<T, E>) {
        switch event {
        case .Next(let value):
            guard self.state != nil else { return }
            if let output = self.step(&self.state!, value) {
                self.subscriber.putNext(output)
            }
        case .Error(let error):
            self.subscriber.putError(error)
        case .Completion:
            if self.state != nil, let output = self.finish(&self.state!) {
                self.subscriber.putNext(output)
            }
            self.subscriber.putCompletion()
        }
    }
}
