/// The state of a serialising fold (``scan(_:_:)``, ``buffer(count:)``, ``distinct(by:)``): the source's
/// events go through a ``SerialDelivery``, so they are handled one at a time, in arrival order, outside
/// the lock, because handling one runs user code (the fold, a key's `hash(into:)` and `==`).
///
/// The fold's own state (the accumulator, the buffer, the set of keys) is not here: it belongs to the
/// deliverer (see ``SerialFoldStorage``), so it is never read or written under the lock.
///
/// Lifecycle, as an enum carrying its data: `open` until a terminal event arrives; `closing` while the
/// terminal event waits behind the values queued before it (later events are dropped); `disposed`
/// after disposal, which empties the queue and refuses later events.
@usableFromInline struct SerialFoldStateMachine<T, E> {
    @usableFromInline typealias Event = SignalEvent<T, E>

    @usableFromInline enum Phase: Sendable {
        case open
        /// The terminal event is queued or being handled.
        case closing
        case disposed
    }

    /// What the thread that ran an event does next, after unlocking.
    @usableFromInline enum Action {
        /// Nothing: the event was queued for the current deliverer; or, for the deliverer, the queue is
        /// empty and it gave up its role.
        case none
        /// The thread holds the deliverer's role: it handles this event, then asks for the next.
        case handle(Event)
        /// The deliverer hands its role to a task on the operator's scheduler
        /// (``SerialDeliveryStep/handOff``).
        case handOff
        /// Release the event: it came after the end.
        case drop(Event)
        /// The deliverer gave up its role after disposal, and was the last one: it releases the fold's
        /// state.
        case releaseState
    }

    /// What the thread that disposed the subscription does next, after unlocking. Apart from
    /// ``Action``, which stays trivial for values of trivial types (see
    /// ``CombineLatestStateMachine/Action``).
    @usableFromInline enum SubscriptionAction {
        /// Nothing: the subscription was already disposed.
        case none
        /// Release the queued events and, when `releasingState` (nobody delivers, and nobody can start
        /// to), the fold's state.
        case tearDown(undelivered: ValueRing<SerialDelivery<Event>.Entry>, releasingState: Bool)
    }

    @usableFromInline var phase = Phase.open
    @usableFromInline var delivery = SerialDelivery<Event>()

    @inlinable init() {}

    /// The source sent `event`.
    @inlinable mutating func received(_ event: Event) -> Action {
        switch self.phase {
        case .closing, .disposed:
            return .drop(event)
        case .open:
            break
        }
        switch event {
        case .Next:
            break
        case .Error, .Completion:
            self.phase = .closing
        }
        switch self.delivery.submit(event) {
        case .deliverNow(let event):
            return .handle(event)
        case .queued:
            return .none
        case .refused(let event):
            return .drop(event)
        }
    }

    /// The deliverer asks for its next event (see ``SerialDelivery/step(resuming:)``); when the
    /// subscription was disposed while it worked, it is the last deliverer and releases the fold's state.
    @inlinable mutating func nextDelivery(resuming: Bool) -> Action {
        switch self.delivery.step(resuming: resuming) {
        case .deliver(let event):
            return .handle(event)
        case .handOff:
            return .handOff
        case .idle:
            if case .disposed = self.phase { return .releaseState }
            return .none
        }
    }

    /// The subscription was disposed: hands back the queued events, and the fold's state when nobody is
    /// delivering (otherwise the deliverer releases it when it stops). Once.
    @inlinable mutating func disposed() -> SubscriptionAction {
        if case .disposed = self.phase {
            return .none
        }
        self.phase = .disposed
        return .tearDown(undelivered: self.delivery.close(), releasingState: !self.delivery.isDelivering)
    }
}

extension SerialFoldStateMachine: Sendable where T: Sendable, E: Sendable {}
