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

    /// What a thread that ran a source's event does next, after unlocking. Trivial, as the events on
    /// the per-value path need (see ``CombineLatestStateMachine/Action``).
    @usableFromInline enum Action: Equatable {
        /// It became the deliverer: run the delivery (``SerialDeliveryHost/deliverQueued()``).
        case deliver
        /// Nothing: no row was formed, or another thread is delivering and will send it.
        case none
    }

    /// What the thread that disposed the subscription does next, after unlocking.
    @usableFromInline enum SubscriptionAction {
        /// Nothing: nothing was held (a second disposal).
        case none
        /// Release the values not paired and the events not sent.
        case release(buffers: [ValueRing<Element>], undelivered: ValueRing<SerialDelivery<Event>.Entry>)
    }

    /// The sources' side of the machine, with the data of each state in its case.
    @usableFromInline enum Input {
        /// Values not yet paired, one buffer per source, which sources have completed, and how many
        /// buffers are empty (a row forms when none is: counted, not looked for, so that a value costs
        /// the same with a thousand sources as with two).
        case open(buffers: [ValueRing<Element>], completed: [Bool], empty: Int)
        /// The terminal event is queued, or the subscription disposed: later events are dropped. The
        /// values that can no longer be paired wait here for disposal, which releases them after
        /// unlocking.
        case closed(leftover: [ValueRing<Element>])
    }

    @usableFromInline private(set) var input: Input
    @usableFromInline var delivery = SerialDelivery<Event>(keepingStorage: true)

    @inlinable init(arity: Int) {
        precondition(arity > 0, "ZipStateMachine needs at least one source")
        self.input = .open(
            buffers: Array(repeating: ValueRing(), count: arity), completed: Array(repeating: false, count: arity),
            empty: arity)
    }

    // Each event takes the buffers out of `input`, leaving an empty `.closed` for the moment (an empty
    // array allocates nothing), so that they stay unique and a change does not copy them.

    /// Source `index` sent `value`.
    @inlinable mutating func sourceSent(_ value: Element, index: Int) -> Action {
        guard case .open(var buffers, let completed, var empty) = self.input else { return .none }
        self.input = .closed(leftover: [])
        if buffers[index].isEmpty { empty -= 1 }
        buffers[index].append(value)
        guard empty == 0 else {
            self.input = .open(buffers: buffers, completed: completed, empty: empty)
            return .none
        }
        var row: [Element] = []
        row.reserveCapacity(buffers.count)
        for source in buffers.indices {
            row.append(buffers[source].removeFirst())
            if buffers[source].isEmpty { empty += 1 }
        }
        var deliver = self.delivery.post(.Next(row))
        if buffers.indices.contains(where: { completed[$0] && buffers[$0].isEmpty }) {
            deliver = self.close(leftover: buffers, with: .Completion) || deliver
        } else {
            self.input = .open(buffers: buffers, completed: completed, empty: empty)
        }
        return deliver ? .deliver : .none
    }

    /// Source `index` completed.
    @inlinable mutating func sourceCompleted(index: Int) -> Action {
        guard case .open(let buffers, var completed, let empty) = self.input else { return .none }
        self.input = .closed(leftover: [])
        completed[index] = true
        guard buffers[index].isEmpty else {
            self.input = .open(buffers: buffers, completed: completed, empty: empty)
            return .none
        }
        return self.close(leftover: buffers, with: .Completion) ? .deliver : .none
    }

    /// A source failed.
    @inlinable mutating func sourceFailed(_ error: E) -> Action {
        guard case .open(let buffers, _, _) = self.input else { return .none }
        return self.close(leftover: buffers, with: .Error(error)) ? .deliver : .none
    }

    /// The deliverer asks for the next event to send (see ``SerialDelivery/step(resuming:)``).
    @inlinable mutating func nextDelivery(resuming: Bool = false) -> SerialDeliveryStep<Event> {
        return self.delivery.step(resuming: resuming)
    }

    /// The subscription was disposed: hands back the buffered values and the unsent events, to be
    /// released after unlocking (empty after the first disposal).
    @inlinable mutating func disposed() -> SubscriptionAction {
        let buffers: [ValueRing<Element>]
        switch self.input {
        case .open(let open, _, _): buffers = open
        case .closed(let leftover): buffers = leftover
        }
        self.input = .closed(leftover: [])
        let undelivered = self.delivery.close()
        if buffers.isEmpty && undelivered.isEmpty { return .none }
        return .release(buffers: buffers, undelivered: undelivered)
    }

    /// Queues the terminal event and closes the input, keeping `leftover` (values that can no longer be
    /// paired) for disposal, which the terminal event causes. Returns whether the caller must deliver.
    @inlinable mutating func close(leftover: [ValueRing<Element>], with terminal: Event) -> Bool {
        self.input = .closed(leftover: leftover)
        return self.delivery.post(terminal)
    }
}

extension ZipStateMachine: Sendable where Element: Sendable, E: Sendable {}
extension ZipStateMachine.Input: Sendable where Element: Sendable {}
