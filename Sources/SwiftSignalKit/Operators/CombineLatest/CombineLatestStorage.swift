/// The shared state of one `combineLatest` subscription, and the disposable its generator returns.
///
/// Each source writes its latest value into a typed slot (no `Any` boxing), under this object's lock;
/// once every source has a value, each new value produces a combined value, built under the lock and sent
/// outside it.
///
/// It keeps the sources' subscriptions itself rather than in a `DisposableSet` (a set, its lock and a
/// dictionary per subscription), and each source is subscribed by a ``CombineLatestSourceSubscriber``
/// that holds what its callbacks need: a server holding many `combineLatest` subscriptions pays for every
/// object of each.
@usableFromInline final class CombineLatestStorage<R, E>: Disposable {
    @usableFromInline struct State: Sendable {
        /// How many slots hold a value.
        @usableFromInline var valueCount: Int
        @usableFromInline var completedCount = 0
        /// An error or the last completion was sent, or the subscription was disposed: nothing more is
        /// combined or sent.
        @usableFromInline var isTerminated = false
        /// The subscription was disposed: sources started afterwards are disposed at once.
        @usableFromInline var isDisposed = false
        /// The sources' subscriptions, for `dispose()`.
        @usableFromInline var sources: [Disposable] = []

        @usableFromInline init(valueCount: Int, arity: Int) {
            self.valueCount = valueCount
            self.sources.reserveCapacity(arity)
        }
    }

    @usableFromInline let state: LockedState<State>
    @usableFromInline let subscriber: Subscriber<R, E>
    /// Builds the combined value from the slots; called with the lock held (library code only).
    @usableFromInline let combine: @Sendable () -> R
    @usableFromInline let arity: Int

    @inlinable
    init(arity: Int, subscriber: Subscriber<R, E>, initiallyFilled: Bool = false, combine: @escaping @Sendable () -> R) {
        self.arity = arity
        self.state = .init(State(valueCount: initiallyFilled ? arity : 0, arity: arity))
        self.subscriber = subscriber
        self.combine = combine
    }

    /// Sends the combined initial values when every slot started filled.
    @inlinable func sendInitialIfFilled() {
        let value = self.state.withLock { state -> R? in
            state.valueCount == self.arity ? self.combine() : nil
        }
        if let value {
            self.subscriber.putNext(value)
        }
    }

    /// Starts source `index`, storing its values in `slot`, and keeps its subscription for `dispose()`.
    @inlinable
    func start<V: Sendable>(_ signal: Signal<V, E>, index: Int, queue: Queue?, slot: CombineLatestSlot<V>) {
        let source = queue.map { signal |> deliverOnQueue($0) } ?? signal
        let subscription = source.run(CombineLatestSourceSubscriber(storage: self, index: index, slot: slot))
        let rejected = self.state.withLock { state -> Bool in
            if state.isDisposed { return true }
            state.sources.append(subscription)
            return false
        }
        if rejected {
            subscription.dispose()
        }
    }

    /// Disposes every source's subscription; later events are dropped.
    @usableFromInline func dispose() {
        let sources = self.state.withLock { state -> [Disposable] in
            guard !state.isDisposed else { return [] }
            state.isDisposed = true
            state.isTerminated = true
            defer { state.sources = [] }
            return state.sources
        }
        for source in sources {
            source.dispose()
        }
    }

    @inlinable func received<V: Sendable>(index: Int, value: V, slot: CombineLatestSlot<V>) {
        let (combined, replaced) = self.state.withLock { state -> (R?, V?) in
            guard !state.isTerminated else { return (nil, nil) }
            let replaced = slot.value
            slot.value = value
            if replaced == nil {
                state.valueCount += 1
            }
            return (state.valueCount == self.arity ? self.combine() : nil, replaced)
        }
        // The replaced value is released here, outside the lock.
        withExtendedLifetime(replaced) {}
        if let combined {
            self.subscriber.putNext(combined)
        }
    }

    @inlinable func failed(_ error: E) {
        let first = self.state.withLock { state -> Bool in
            guard !state.isTerminated else { return false }
            state.isTerminated = true
            return true
        }
        if first {
            self.subscriber.putError(error)
        }
    }

    @inlinable func completed(index: Int) {
        let all = self.state.withLock { state -> Bool in
            guard !state.isTerminated else { return false }
            state.completedCount += 1
            if state.completedCount == self.arity {
                state.isTerminated = true
                return true
            }
            return false
        }
        if all {
            self.subscriber.putCompletion()
        }
    }
}

// Safe: the mutable state is `state`, behind its lock; the other stored properties are immutable and
// Sendable; the slots the combine closure reads are read and written only under that lock.
extension CombineLatestStorage: @unchecked Sendable {}

/// The subscriber of one source of a `combineLatest`: its value callback captures only itself, and its
/// error and completion go to the storage by override, so a source costs one object.
@usableFromInline final class CombineLatestSourceSubscriber<V: Sendable, R, E>: SubscriptionSubscriber<V, E> {
    @usableFromInline let storage: CombineLatestStorage<R, E>
    @usableFromInline let slot: CombineLatestSlot<V>
    @usableFromInline let index: Int

    @inlinable init(storage: CombineLatestStorage<R, E>, index: Int, slot: CombineLatestSlot<V>) {
        self.storage = storage
        self.slot = slot
        self.index = index
        super.init(operatorNext: nil)
        // Set before the subscriber is shared, like an initialiser's stores. The callback owns the
        // storage; the cycle is broken when the subscription terminates or is disposed.
        self.next = { value in
            self.storage.received(index: self.index, value: value, slot: self.slot)
        }
    }

    @inlinable override func forwardError(_ error: E) {
        self.storage.failed(error)
    }

    @inlinable override func forwardCompletion() {
        self.storage.completed(index: self.index)
    }

    @inlinable override var downstreamIsTerminated: Bool {
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

// Safe: restated from `Subscriber` (its state is behind its mutex); the stored properties added here
// are immutable and Sendable.
extension CombineLatestSourceSubscriber: @unchecked Sendable {}

// Safe: `value` is read and written only while the owning `CombineLatestStorage` holds its lock.
extension CombineLatestSlot: @unchecked Sendable {}
