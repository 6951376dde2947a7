/// The state of one `combineLatest` subscription: which phase it is in, how many sources have a value
/// and how many have completed, the sources' subscriptions, and the combined values and the terminal
/// event on their way to the subscriber, in a ``SerialDelivery``.
///
/// A combined value is built under the lock that stores the value it follows, and queued in the same
/// critical section, so combined values reach the subscriber one at a time, in the order they were
/// built: the last one delivered is the latest, whatever threads the sources send from.
@usableFromInline struct CombineLatestStateMachine<R, E> {
    @usableFromInline enum Phase {
        /// Values are combined once every source has one.
        case active
        /// An error or the last completion is queued: nothing more is combined.
        case ended
        /// The subscription was disposed: sources started afterwards are disposed at once.
        case disposed
    }

    @usableFromInline typealias Submission = SerialDelivery<SignalEvent<R, E>>.Submission

    @usableFromInline var phase = Phase.active
    /// How many slots hold a value.
    @usableFromInline var filledCount: Int
    @usableFromInline var completedCount = 0
    /// The sources' subscriptions, for disposal.
    @usableFromInline var sources: [Disposable] = []
    @usableFromInline var delivery = SerialDelivery<SignalEvent<R, E>>()

    @inlinable init(filledCount: Int, arity: Int) {
        self.filledCount = filledCount
        self.sources.reserveCapacity(arity)
    }

    @inlinable var acceptsEvents: Bool {
        if case .active = self.phase { return true }
        return false
    }

    /// A source's value was stored in its slot (`filledSlot`: the slot was empty): queues the combined
    /// value once every source has one.
    @inlinable mutating func valueStored(filledSlot: Bool, arity: Int, combine: () -> R) -> Submission? {
        if filledSlot {
            self.filledCount += 1
        }
        guard self.filledCount == arity else { return nil }
        return self.delivery.submit(.Next(combine()))
    }

    @inlinable mutating func sourceFailed(_ error: E) -> Submission? {
        guard self.acceptsEvents else { return nil }
        self.phase = .ended
        return self.delivery.submit(.Error(error))
    }

    @inlinable mutating func sourceCompleted(arity: Int) -> Submission? {
        guard self.acceptsEvents else { return nil }
        self.completedCount += 1
        guard self.completedCount == arity else { return nil }
        self.phase = .ended
        return self.delivery.submit(.Completion)
    }

    /// Source subscription `source` was made: returns it when the subscription was disposed meanwhile.
    @inlinable mutating func sourceStarted(_ source: Disposable) -> Disposable? {
        if case .disposed = self.phase { return source }
        self.sources.append(source)
        return nil
    }

    /// Returns the sources to dispose and the undelivered events, to release after unlocking.
    @usableFromInline mutating func disposed() -> ([Disposable], ValueRing<SerialDelivery<SignalEvent<R, E>>.Entry>) {
        if case .disposed = self.phase { return ([], ValueRing()) }
        self.phase = .disposed
        let sources = self.sources
        self.sources = []
        return (sources, self.delivery.close())
    }
}
