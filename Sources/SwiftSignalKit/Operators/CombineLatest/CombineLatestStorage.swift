/// The shared state of one `combineLatest` subscription, and the disposable its generator returns:
/// runs ``CombineLatestStateMachine``'s actions.
///
/// Each source writes its latest value into a typed slot (no `Any` boxing), under this object's lock.
///
/// It keeps the sources' subscriptions itself rather than in a `DisposableSet` (a set, its lock and a
/// dictionary per subscription), and each source is subscribed by a subscriber whose stage
/// (``CombineLatestSource``) holds what it needs: a server holding many `combineLatest` subscriptions
/// pays for every object of each.
@usableFromInline final class CombineLatestStorage<R, E>: Disposable, SerialDeliveryHost {
    @usableFromInline let state: LockedState<CombineLatestStateMachine<R, E>>
    @usableFromInline let subscriber: Subscriber<R, E>
    /// Builds the combined value from the slots; called with the lock held (library code only).
    @usableFromInline let combine: @Sendable () -> R
    @usableFromInline let arity: Int

    @inlinable
    init(arity: Int, subscriber: Subscriber<R, E>, initiallyFilled: Bool = false, combine: @escaping @Sendable () -> R) {
        self.arity = arity
        self.state = .init(CombineLatestStateMachine(filledCount: initiallyFilled ? arity : 0, arity: arity))
        self.subscriber = subscriber
        self.combine = combine
    }

    /// Sends the combined initial values when every slot started filled.
    @inlinable func sendInitialIfFilled() {
        self.act(self.state.withLock { $0.valueStored(filledSlot: false, arity: self.arity, combine: self.combine) })
    }

    /// Starts source `index`, storing its values in `slot`, and keeps its subscription for `dispose()`.
    @inlinable
    func start<V: Sendable>(_ signal: Signal<V, E>, index: Int, queue: Queue?, slot: CombineLatestSlot<V>) {
        // A subscriber that has already ended (`get()` took the initial values, or an earlier source's
        // first combination) would dispose the source at once: never start it.
        if self.subscriber.isTerminated { return }
        let source = queue.map { signal |> deliverOnQueue($0, gate: NeverBusy()) } ?? signal
        let subscription = source.subscribe(CombineLatestSource(storage: self, index: index, slot: slot))
        self.act(self.state.withLock { $0.sourceStarted(subscription) })
    }

    /// Disposes every source's subscription; later events are dropped.
    @usableFromInline func dispose() {
        self.act(self.state.withLock { $0.disposed() })
    }

    @inlinable func received<V: Sendable>(index: Int, value: V, slot: CombineLatestSlot<V>) {
        let (action, replaced) = self.state.withLock { state -> (CombineLatestStateMachine<R, E>.Action, V?) in
            guard state.acceptsEvents else { return (.none, nil) }
            let replaced = slot.value
            slot.value = value
            return (state.valueStored(filledSlot: replaced == nil, arity: self.arity, combine: self.combine), replaced)
        }
        // The replaced value is released here, outside the lock.
        withExtendedLifetime(replaced) {}
        self.act(action)
    }

    @inlinable func failed(_ error: E) {
        self.act(self.state.withLock { $0.sourceFailed(error) })
    }

    @inlinable func completed(index: Int) {
        self.act(self.state.withLock { $0.sourceCompleted(arity: self.arity) })
    }

    /// Runs an action of the machine, after unlocking.
    @inlinable func act(_ action: CombineLatestStateMachine<R, E>.Action) {
        switch action {
        case .none:
            break
        case .deliver(let event):
            self.deliverSerially(startingWith: event)
        case .release(let event):
            withExtendedLifetime(event) {}
        }
    }

    /// Runs an action of the machine for the subscription's start or disposal, after unlocking.
    @inlinable func act(_ action: CombineLatestStateMachine<R, E>.SubscriptionAction) {
        switch action {
        case .none:
            break
        case .dispose(let source):
            source.dispose()
        case .tearDown(let sources, let undelivered):
            for source in sources {
                source.dispose()
            }
            // Released here, outside the lock.
            withExtendedLifetime(undelivered) {}
        }
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<R, E>> {
        return self.state.withLock { $0.delivery.step(resuming: resuming) }
    }

    @inlinable func deliver(_ event: SignalEvent<R, E>) {
        self.subscriber.put(event)
    }
}

// Safe: the mutable state is `state`, behind its lock; the other stored properties are immutable and
// Sendable; the slots the combine closure reads are read and written only under that lock. Combined
// values cross threads as the sources' values would (see ``SerialForwarder``).
extension CombineLatestStorage: @unchecked Sendable {}

/// What the subscriber of one source of a `combineLatest` does (see ``ValueStage``): its values, error and
/// completion go to the storage, so a source costs one object.
@usableFromInline struct CombineLatestSource<V: Sendable, R, E>: ValueStage {
    @usableFromInline typealias Input = V
    @usableFromInline typealias Failure = E

    @usableFromInline let storage: CombineLatestStorage<R, E>
    @usableFromInline let slot: CombineLatestSlot<V>
    @usableFromInline let index: Int

    @inlinable init(storage: CombineLatestStorage<R, E>, index: Int, slot: CombineLatestSlot<V>) {
        self.storage = storage
        self.slot = slot
        self.index = index
    }

    @inlinable func receive(_ value: V, by subscriber: Subscriber<V, E>) {
        self.storage.received(index: self.index, value: value, slot: self.slot)
    }

    @inlinable func receive(error: E) {
        self.storage.failed(error)
    }

    @inlinable func receiveCompletion() {
        self.storage.completed(index: self.index)
    }

    @inlinable var downstreamIsTerminated: Bool {
        return self.storage.subscriber.isTerminated
    }
}

/// One source's latest value in a `combineLatest`.
@usableFromInline final class CombineLatestSlot<V: Sendable> {
    /// `@exclusivity(unchecked)`: the owning storage's lock already serialises every access, and the
    /// dynamic check was a third of the instructions of an emission of eight sources.
    @exclusivity(unchecked) @usableFromInline var value: V?

    @inlinable init(_ value: V? = nil) {
        self.value = value
    }
}

// Safe: `value` is read and written only while the owning `CombineLatestStorage` holds its lock.
extension CombineLatestSlot: @unchecked Sendable {}
