/// Events for one subscriber that several threads produce, delivered in the order they were posted,
/// by one thread at a time and outside any lock.
///
/// The outbox lives inside an operator's locked state. A thread posts under the lock; if nobody is
/// delivering, ``post(_:)`` makes it the deliverer, and after unlocking it calls
/// ``LockedState/deliverOutbox(to:_:)``, which also delivers what other threads post meanwhile. Nobody
/// waits: a thread that finds a deliverer leaves its event to it.
struct EventOutbox<T, E> {
    enum Event {
        case next(T)
        case error(E)
        case completed
    }

    private var events: [Event] = []
    private var isDelivering = false

    /// Adds `event`; returns true when the caller must deliver (nobody else is).
    mutating func post(_ event: Event) -> Bool {
        self.events.append(event)
        if self.isDelivering {
            return false
        }
        self.isDelivering = true
        return true
    }

    /// The events to deliver next, in order; an empty batch ends the caller's turn as the deliverer.
    mutating func takeBatch() -> [Event] {
        let batch = self.events
        self.events = []
        if batch.isEmpty {
            self.isDelivering = false
        }
        return batch
    }
}

extension EventOutbox: Sendable where T: Sendable, E: Sendable {}
extension EventOutbox.Event: Sendable where T: Sendable, E: Sendable {}

extension LockedState {
    /// Delivers the outbox at `outbox` until it is empty; only the thread that ``EventOutbox/post(_:)``
    /// made the deliverer calls this. Events are delivered, and released, outside the lock.
    func deliverOutbox<T, E>(to subscriber: Subscriber<T, E>, _ outbox: WritableKeyPath<State, EventOutbox<T, E>>) {
        while true {
            let batch = self.withLock { $0[keyPath: outbox].takeBatch() }
            if batch.isEmpty {
                return
            }
            for event in batch {
                subscriber.put(event)
            }
        }
    }
}

extension Subscriber {
    /// Sends an outbox event.
    func put(_ event: EventOutbox<T, E>.Event) {
        switch event {
        case .next(let value):
            self.putNext(value)
        case .error(let error):
            self.putError(error)
        case .completed:
            self.putCompletion()
        }
    }
}
