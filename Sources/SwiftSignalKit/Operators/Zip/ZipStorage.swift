/// The shared state of one ``zip(_:_:)`` subscription: runs ``ZipStateMachine``'s actions and sends
/// rows through its ``SerialDelivery``.
///
/// `Element` is the type the buffers hold: the sources' common type for the array form, `any Sendable`
/// for the tuple forms, whose `combine` casts each element back to its source's type.
@usableFromInline final class ZipStorage<Element: Sendable, R, E: Sendable>: SerialDeliveryHost {
    @usableFromInline let machine: LockedState<ZipStateMachine<Element, E>>
    @usableFromInline let subscriber: Subscriber<R, E>
    /// Builds the result from a row; runs outside the lock.
    @usableFromInline let combine: @Sendable ([Element]) -> R

    @inlinable init(arity: Int, subscriber: Subscriber<R, E>, combine: @escaping @Sendable ([Element]) -> R) {
        self.machine = LockedState(ZipStateMachine(arity: arity))
        self.subscriber = subscriber
        self.combine = combine
    }

    /// Starts source `index` (`transform` turns its values into buffer elements) unless the result has
    /// already ended (an earlier source failed or completed while starting), adding its subscription to
    /// `disposables`.
    @inlinable func start<V>(
        _ source: Signal<V, E>, index: Int, into disposables: DisposableSet, transform: @escaping @Sendable (V) -> Element
    ) {
        if self.subscriber.isTerminated { return }
        // The source's callbacks own the storage; the cycle through the subscriber is broken when the
        // subscription terminates or is disposed.
        disposables.add(
            source.subscribe(
                Linked(to: self.subscriber),
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
    @inlinable func disposable(disposing sources: DisposableSet) -> Disposable {
        return ActionDisposable {
            let action = self.machine.withLock { $0.disposed() }
            sources.dispose()
            if case .release(let buffers, let undelivered) = action {
                // Buffered values and unsent rows are released here, outside the lock.
                withExtendedLifetime((buffers, undelivered)) {}
            }
        }
    }

    @inlinable func act(_ action: ZipStateMachine<Element, E>.Action) {
        if action == .deliver {
            self.deliverQueued()
        }
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<[Element], E>> {
        return self.machine.withLock { $0.nextDelivery(resuming: resuming) }
    }

    @inlinable func deliver(_ event: SignalEvent<[Element], E>) {
        switch event {
        case .Next(let row):
            self.subscriber.putNext(self.combine(row))
        case .Completion:
            self.subscriber.putCompletion()
        case .Error(let error):
            self.subscriber.putError(error)
        }
    }
}
