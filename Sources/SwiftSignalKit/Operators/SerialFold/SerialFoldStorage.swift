import Dispatch

/// The shared state of one subscription to a serialising fold (``scan(_:_:)``, ``buffer(count:)``,
/// ``distinct(by:)``): runs ``SerialFoldStateMachine``'s actions.
///
/// `step` and `finish` are the operator's: they run outside the lock, one input at a time, on the thread
/// that holds the drainer's role, with the fold's state passed `inout` (it is owned by that thread while
/// it works, so mutating it copies nothing).
final class SerialFoldStorage<State: Sendable, T: Sendable, R, E: Sendable>: Sendable {
    typealias Machine = SerialFoldStateMachine<State, T, E>

    private let machine: LockedState<Machine>
    private let subscriber: Subscriber<R, E>
    /// Handles a value: updates the state, and returns the value to send, if any.
    private let step: @Sendable (inout State, T) -> R?
    /// Handles completion: returns a last value to send before completing, if any.
    private let finish: @Sendable (inout State) -> R?

    init(
        initialState: State,
        subscriber: Subscriber<R, E>,
        step: @escaping @Sendable (inout State, T) -> R?,
        finish: @escaping @Sendable (inout State) -> R?
    ) {
        self.machine = LockedState(Machine(initialState: initialState))
        self.subscriber = subscriber
        self.step = step
        self.finish = finish
    }

    /// Starts `signal` into this storage; the result is the subscription's disposable, which also drops
    /// the queued inputs and the fold's state.
    func start(_ signal: Signal<T, E>) -> Disposable {
        // The source's callbacks own the storage; the cycle through the subscriber is broken when the
        // subscription terminates or is disposed.
        let source = signal.start(
            linkedTo: self.subscriber,
            next: { value in
                self.received(.value(value))
            },
            error: { error in
                self.received(.error(error))
            },
            completed: {
                self.received(.completion)
            })
        return ActionDisposable {
            let dropped = self.machine.withLock { $0.disposed() }
            source.dispose()
            // The parked state and the queued values are released here, outside the lock.
            withExtendedLifetime(dropped) {}
        }
    }

    private func received(_ input: SerialFoldInput<T, E>) {
        var owned: State?
        switch self.machine.withLock({ $0.received(input, owned: &owned) }) {
        case .process(let input):
            self.drain(first: input, owned: &owned, allowance: serialDeliveryAllowance)
        case .none:
            break
        }
    }

    /// The drainer's loop: handles `first`, then whatever was queued meanwhile, until the queue is empty,
    /// the subscription ends, or the allowance runs out (then a Dispatch task takes over).
    private func drain(first: SerialFoldInput<T, E>, owned: inout State?, allowance: Int) {
        var input = first
        var remaining = allowance
        while true {
            self.handle(input, owned: &owned)
            remaining -= 1
            switch self.machine.withLock({ $0.stepFinished(owned: &owned, mayContinue: remaining > 0) }) {
            case .process(let next):
                input = next
            case .handOff:
                DispatchQueue.global().async {
                    self.resumeDrain()
                }
                return
            case .idle:
                return
            case .stop:
                // The state is released here, outside the lock.
                owned = nil
                return
            }
        }
    }

    /// A Dispatch task that took over the drainer's role.
    private func resumeDrain() {
        var owned: State?
        switch self.machine.withLock({ $0.resume(owned: &owned) }) {
        case .process(let input):
            self.drain(first: input, owned: &owned, allowance: .max)
        case .stop:
            break
        }
    }

    private func handle(_ input: SerialFoldInput<T, E>, owned: inout State?) {
        switch input {
        case .value(let value):
            if let output = self.step(&owned!, value) {
                self.subscriber.putNext(output)
            }
        case .error(let error):
            self.subscriber.putError(error)
        case .completion:
            if let output = self.finish(&owned!) {
                self.subscriber.putNext(output)
            }
            self.subscriber.putCompletion()
        }
    }
}
