/// The host most operators need: the ``SignalEvent``s an operator's state machine queued in its
/// ``SerialDelivery``, delivered to the operator's subscriber.
///
/// Made on the stack where a thread becomes the deliverer; it owns nothing but references, so it costs
/// no allocation unless the role is handed off (then the scheduler's task keeps a copy).
struct EventDeliveryHost<Machine: Sendable, T, E, S: SignalScheduler>: SerialDeliveryHost {
    let state: LockedState<Machine>
    let delivery: WritableKeyPath<Machine, SerialDelivery<SignalEvent<T, E>>> & Sendable
    let subscriber: Subscriber<T, E>
    let scheduler: S

    func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<T, E>> {
        return self.state.withLock { $0[keyPath: self.delivery].step(resuming: resuming) }
    }

    func deliver(_ event: SignalEvent<T, E>) {
        self.subscriber.put(event)
    }

    var handOffScheduler: any SignalScheduler { self.scheduler }
}

extension SerialDelivery {
    /// ``next()``, or ``resume()`` for a hand-off task.
    @inlinable package mutating func step(resuming: Bool) -> SerialDeliveryStep<Item> {
        return resuming ? self.resume() : self.next()
    }
}

extension Subscriber {
    /// Sends an event that an operator queued.
    @inlinable package func put(_ event: SignalEvent<T, E>) {
        switch event {
        case .Next(let value):
            self.putNext(value)
        case .Error(let error):
            self.putError(error)
        case .Completion:
            self.putCompletion()
        }
    }
}
