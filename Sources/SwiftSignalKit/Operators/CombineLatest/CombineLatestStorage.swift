/// The shared state of one `combineLatest` subscription.
///
/// Each source writes its latest value into a typed slot (no `Any` boxing), under this object's lock;
/// once every source has a value, each new value produces a combined value, built under the lock and sent
/// outside it.
@usableFromInline final class CombineLatestStorage<R, E>: Sendable {
    @usableFromInline struct State: Sendable {
        @usableFromInline var hasValue: [Bool]
        @usableFromInline var valueCount: Int
        @usableFromInline var completedCount = 0
        @usableFromInline var isTerminated = false

        @usableFromInline init(hasValue: [Bool], valueCount: Int) {
            self.hasValue = hasValue
            self.valueCount = valueCount
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
        self.state = .init(State(hasValue: Array(repeating: initiallyFilled, count: arity), valueCount: initiallyFilled ? arity : 0))
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

    /// Starts source `index`, storing its values in `slot` (under the lock).
    @inlinable
    func start<V: Sendable>(_ signal: Signal<V, E>, index: Int, queue: Queue?, slot: CombineLatestSlot<V>) -> Disposable {
        let source = queue.map { signal |> deliverOnQueue($0) } ?? signal
        // The sources' callbacks own the storage; the cycle through the subscriber is broken when the
        // subscription terminates or is disposed.
        return source.start(
            linkedTo: subscriber,
            next: { value in
                self.received(index: index, value: value, slot: slot)
            },
            error: { error in
                self.failed(error)
            },
            completed: {
                self.completed(index: index)
            })
    }

    @inlinable func received<V: Sendable>(index: Int, value: V, slot: CombineLatestSlot<V>) {
        let (combined, replaced) = self.state.withLock { state -> (R?, V?) in
            guard !state.isTerminated else { return (nil, nil) }
            let replaced = slot.value
            slot.value = value
            if !state.hasValue[index] {
                state.hasValue[index] = true
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

/// The latest value of one `combineLatest` source.
@usableFromInline final class CombineLatestSlot<V: Sendable>: @unchecked Sendable {
    // Safe: read and written only while the owning `CombineLatestStorage` holds its lock.
    // `@exclusivity(unchecked)` for the same reason: that lock already serialises every access, and the
    // dynamic check was a third of the instructions of an emission of eight sources.
    @exclusivity(unchecked) @usableFromInline var value: V?

    @inlinable init(_ value: V? = nil) {
        self.value = value
    }
}
