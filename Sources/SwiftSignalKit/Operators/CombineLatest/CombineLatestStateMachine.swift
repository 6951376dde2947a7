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

    @usableFromInline typealias Event = SignalEvent<R, E>

    /// What the thread that ran a source's event does next, after unlocking.
    ///
    /// Its payloads are the events alone, so that for values of trivial types (numbers, tuples of them)
    /// the action is trivial too and costs nothing to destroy: with the subscription's actions in the
    /// same enum, `combineLatest` of eight took 601 instructions per emission where it takes 503
    /// (callgrind, W4), and looked up a type's metadata each time.
    @usableFromInline enum Action {
        /// Nothing: no combined value yet, or the event was queued for the thread that delivers.
        case none
        /// The thread is the deliverer now: it delivers this event, then the queued ones
        /// (``SerialDeliveryHost/deliverSerially(startingWith:)``).
        case deliver(Event)
        /// Release this event: the delivery closed (the subscription was disposed).
        case release(Event)
    }

    /// What the thread that started a source or disposed the subscription does next, after unlocking.
    @usableFromInline enum SubscriptionAction {
        /// Nothing: the source's subscription is kept, or the subscription was already disposed.
        case none
        /// Dispose this source's subscription: it was made after the subscription was disposed.
        case dispose(Disposable)
        /// The subscription was disposed: dispose the sources, and release the events not delivered.
        case tearDown(sources: [Disposable], undelivered: ValueRing<SerialDelivery<Event>.Entry>)
    }

    @usableFromInline var phase = Phase.active
    /// How many slots hold a value.
    @usableFromInline var filledCount: Int
    @usableFromInline var completedCount = 0
    /// The sources' subscriptions, for disposal.
    @usableFromInline var sources: [Disposable] = []
    @usableFromInline var delivery = SerialDelivery<Event>()

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
    @inlinable mutating func valueStored(filledSlot: Bool, arity: Int, combine: () -> R) -> Action {
        if filledSlot {
            self.filledCount += 1
        }
        guard self.filledCount == arity else { return .none }
        return self.submit(.Next(combine()))
    }

    @inlinable mutating func sourceFailed(_ error: E) -> Action {
        guard self.acceptsEvents else { return .none }
        self.phase = .ended
        return self.submit(.Error(error))
    }

    @inlinable mutating func sourceCompleted(arity: Int) -> Action {
        guard self.acceptsEvents else { return .none }
        self.completedCount += 1
        guard self.completedCount == arity else { return .none }
        self.phase = .ended
        return self.submit(.Completion)
    }

    /// Source subscription `source` was made: it is disposed at once when the subscription was
    /// disposed meanwhile (a benign race).
    @inlinable mutating func sourceStarted(_ source: Disposable) -> SubscriptionAction {
        if case .disposed = self.phase { return .dispose(source) }
        self.sources.append(source)
        return .none
    }

    /// The subscription was disposed: hands back the sources and the undelivered events, once.
    @usableFromInline mutating func disposed() -> SubscriptionAction {
        if case .disposed = self.phase { return .none }
        self.phase = .disposed
        let sources = self.sources
        self.sources = []
        return .tearDown(sources: sources, undelivered: self.delivery.close())
    }

    @inlinable mutating func submit(_ event: Event) -> Action {
        switch self.delivery.submit(event) {
        case .deliverNow(let event):
            return .deliver(event)
        case .queued:
            return .none
        case .refused(let event):
            return .release(event)
        }
    }
}
