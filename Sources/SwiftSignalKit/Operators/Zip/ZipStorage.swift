import Dispatch

/// The shared state of one ``zip(_:_:)`` subscription: runs ``ZipStateMachine``'s actions and sends
/// rows outside the lock, one thread at a time.
///
/// `Element` is the type the buffers hold: the sources' common type for the array form, `any Sendable`
/// for the tuple forms, whose `combine` casts each element back to its source's type.
final class ZipStorage<Element: Sendable, R, E: Sendable>: Sendable {
    private let machine: LockedState<ZipStateMachine<Element, E>>
    private let subscriber: Subscriber<R, E>
    /// Builds the result from a row; runs outside the lock.
    private let combine: @Sendable ([Element]) -> R

    init(arity: Int, subscriber: Subscriber<R, E>, combine: @escaping @Sendable ([Element]) -> R) {
        self.machine = LockedState(ZipStateMachine(arity: arity))
        self.subscriber = subscriber
        self.combine = combine
    }

    /// Starts source `index` (`transform` turns its values into buffer elements) unless the result has
    /// already ended (an earlier source failed or completed while starting), adding its subscription to
    /// `disposables`.
    func start<V>(
        _ source: Signal<V, E>, index: Int, into disposables: DisposableSet, transform: @escaping @Sendable (V) -> Element
    ) {
        if self.subscriber.isTerminated { return }
        // The source's callbacks own the storage; the cycle through the subscriber is broken when the
        // subscription terminates or is disposed.
        disposables.add(
            source.start(
                linkedTo: self.subscriber,
                next: { value in
                    let element = transform(value)
                    self.act(self.machine.withLock { $0.sourceSent(element, index: index) })
                },
                error: { error in
                    self.act(self.machine.withLock { $0.sourceFailed(error) })
                },
                completed: {
                    self.act(self.machine.withLock { $0.sourceCompleted(index: index) })
                }))
    }

    /// The subscription's disposable: drops what is buffered and disposes the sources.
    func disposable(disposing sources: DisposableSet) -> Disposable {
        return ActionDisposable {
            let dropped = self.machine.withLock { $0.disposed() }
            sources.dispose()
            // Buffered values and unsent rows are released here, outside the lock.
            withExtendedLifetime(dropped) {}
        }
    }

    private func act(_ action: ZipStateMachine<Element, E>.Action) {
        switch action {
        case .deliver:
            self.deliver(allowance: serialDeliveryAllowance)
        case .none:
            break
        }
    }

    /// The deliverer's loop: sends what the outbox holds, in order, until it is empty; after `allowance`
    /// deliveries, if more are waiting, the role passes to a task on a global queue.
    private func deliver(allowance: Int) {
        var remaining = allowance
        while true {
            switch self.machine.withLock({ $0.nextDelivery(mayContinue: remaining > 0) }) {
            case .send(let delivery):
                remaining -= 1
                self.send(delivery)
            case .handOff:
                DispatchQueue.global().async {
                    self.deliver(allowance: .max)
                }
                return
            case .idle:
                return
            }
        }
    }

    private func send(_ delivery: ZipDelivery<Element, E>) {
        switch delivery {
        case .row(let row):
            self.subscriber.putNext(self.combine(row))
        case .completion:
            self.subscriber.putCompletion()
        case .error(let error):
            self.subscriber.putError(error)
        }
    }
}
