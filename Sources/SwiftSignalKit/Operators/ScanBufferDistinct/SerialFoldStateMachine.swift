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

    /// What the thread that delivered an event does next, after unlocking.
    @usableFromInline enum ReceivedAction {
        /// It holds the deliverer's role now: handle the event, then take the queued ones.
        case handle(Event)
        /// Nothing: the event was queued for the current deliverer.
        case none
        /// Release the event: it came after the end.
        case drop(Event)
    }

    @usableFromInline var phase = Phase.open
    @usableFromInline var delivery = SerialDelivery<Event>()

    @inlinable init() {}

    /// The source sent `event`.
    @inlinable mutating func received(_ event: Event) -> ReceivedAction {
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

    /// The deliverer's next event; with `releaseState` when the fold's state is no longer wanted (the
    /// subscription was disposed while this deliverer worked): the deliverer releases it after unlocking.
    @inlinable mutating func nextDelivery(resuming: Bool) -> (step: SerialDeliveryStep<Event>, releaseState: Bool) {
        let step = self.delivery.step(resuming: resuming)
        if case .idle = step, case .disposed = self.phase {
            return (step, true)
        }
        return (step, false)
    }

    /// The subscription was disposed: returns the queued events, to be released after unlocking, and
    /// whether the caller releases the fold's state (nobody is delivering, and nobody can start to).
    @inlinable mutating func disposed() -> (undelivered: ValueRing<SerialDelivery<Event>.Entry>, releaseState: Bool) {
        if case .disposed = self.phase {
            return (ValueRing(), false)
        }
        self.phase = .disposed
        return (self.delivery.close(), !self.delivery.isDelivering)
    }
}

extension SerialFoldStateMachine: Sendable where T: Sendable, E: Sendable {}
