/// The state of one ``zip(_:_:)`` subscription: per-source buffers of values not yet paired, and the
/// rows and the terminal event on their way to the subscriber, in a ``SerialDelivery``.
///
/// Rows are formed under the lock, in the order their last value arrived, and posted to the delivery,
/// which sends them one at a time outside the lock: rows reach the subscriber in the order they were
/// formed even when sources send from several threads at once, and the terminal event comes after
/// every row formed before it.
///
/// - The result completes as soon as a source has completed with an empty buffer: no further row can
///   be formed.
/// - The first error is the result's error; rows formed before it are sent first.
/// - After the terminal event is queued, values are dropped. Disposal drops everything (returned, to be
///   released after unlocking) and closes the delivery.
@usableFromInline struct ZipStateMachine<Element, E> {
    @usableFromInline typealias Event = SignalEvent<[Element], E>

    /// What a thread that changed the state does next.
    @usableFromInline enum Action: Equatable {
        /// It became the deliverer: run the delivery (``SerialDeliveryHost/deliverQueued()``).
        case deliver
        /// Nothing: no row was formed, or another thread is delivering and will send it.
        case none
    }

    @usableFromInline var buffers: [ValueRing<Element>]
    @usableFromInline var completed: [Bool]
    @usableFromInline var delivery = SerialDelivery<Event>(keepingStorage: true)
    /// The terminal event has been queued, or the subscription disposed: later events are dropped.
    @usableFromInline var inputClosed = false

    @inlinable init(arity: Int) {
        precondition(arity > 0, "ZipStateMachine needs at least one source")
        self.buffers = Array(repeating: ValueRing(), count: arity)
        self.completed = Array(repeating: false, count: arity)
    }

    /// Source `index` sent `value`.
    @inlinable mutating func sourceSent(_ value: Element, index: Int) -> Action {
        guard !self.inputClosed else { return .none }
        self.buffers[index].append(value)
        guard self.buffers.allSatisfy({ !$0.isEmpty }) else { return .none }
        var row: [Element] = []
        row.reserveCapacity(self.buffers.count)
        for source in self.buffers.indices {
            row.append(self.buffers[source].removeFirst())
        }
        var deliver = self.delivery.post(.Next(row))
        if self.buffers.indices.contains(where: { self.completed[$0] && self.buffers[$0].isEmpty }) {
            deliver = self.close(with: .Completion) || deliver
        }
        return deliver ? .deliver : .none
    }

    /// Source `index` completed.
    @inlinable mutating func sourceCompleted(index: Int) -> Action {
        guard !self.inputClosed else { return .none }
        self.completed[index] = true
        guard self.buffers[index].isEmpty else { return .none }
        return self.close(with: .Completion) ? .deliver : .none
    }

    /// A source failed.
    @inlinable mutating func sourceFailed(_ error: E) -> Action {
        guard !self.inputClosed else { return .none }
        return self.close(with: .Error(error)) ? .deliver : .none
    }

    /// The deliverer asks for the next event to send (see ``SerialDelivery/step(resuming:)``).
    @inlinable mutating func nextDelivery(resuming: Bool = false) -> SerialDeliveryStep<Event> {
        return self.delivery.step(resuming: resuming)
    }

    /// The subscription was disposed: returns the buffered values and the unsent events, to be released
    /// after unlocking.
    @inlinable mutating func disposed() -> (buffers: [ValueRing<Element>], undelivered: ValueRing<SerialDelivery<Event>.Entry>) {
        self.inputClosed = true
        let buffers = self.buffers
        self.buffers = Array(repeating: ValueRing(), count: buffers.count)
        return (buffers, self.delivery.close())
    }

    /// Queues the terminal event; the values still buffered can no longer be paired and are dropped at
    /// disposal, which the terminal event causes. Returns whether the caller must deliver.
    @inlinable mutating func close(with terminal: Event) -> Bool {
        self.inputClosed = true
        return self.delivery.post(terminal)
    }
}

extension ZipStateMachine: Sendable where Element: Sendable, E: Sendable {}
