/// Forwards a source's events to a subscriber one at a time, in the order they arrived, through a
/// ``SerialDelivery``: for operators that make no decision per event but promise serial delivery
/// (``delay(_:scheduler:)``).
@usableFromInline final class SerialForwarder<T, E, S: SignalScheduler>: SerialDeliveryHost, @unchecked Sendable {
    // Safe: the mutable state is `delivery`, behind its lock; `subscriber` is thread-safe and
    // `scheduler` is Sendable. Events of non-Sendable types cross threads here exactly as they would
    // have without the operator: the library's unconstrained operators pass values on whatever thread
    // the source sends them from.
    @usableFromInline let delivery = LockedState(SerialDelivery<SignalEvent<T, E>>())
    @usableFromInline let subscriber: Subscriber<T, E>
    @usableFromInline let scheduler: S

    @inlinable init(subscriber: Subscriber<T, E>, scheduler: S) {
        self.subscriber = subscriber
        self.scheduler = scheduler
    }

    /// Starts `signal` into the forwarder; the result is the source's subscription.
    @inlinable func start(_ signal: Signal<T, E>) -> Disposable {
        return signal.subscribe(
            Linked(to: self.subscriber),
            next: { value in self.received(.Next(value)) },
            error: { error in self.received(.Error(error)) },
            completed: { self.received(.Completion) })
    }

    /// Drops what is queued; later events are dropped too.
    @inlinable func dispose() {
        let undelivered = self.delivery.withLock { $0.close() }
        // Released here, outside the lock.
        withExtendedLifetime(undelivered) {}
    }

    @inlinable func received(_ event: SignalEvent<T, E>) {
        self.handle(self.delivery.withLock { $0.submit(event) })
    }

    @usableFromInline var handOffScheduler: any SignalScheduler { self.scheduler }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<T, E>> {
        return self.delivery.withLock { $0.step(resuming: resuming) }
    }

    @inlinable func deliver(_ event: SignalEvent<T, E>) {
        self.subscriber.put(event)
    }
}
