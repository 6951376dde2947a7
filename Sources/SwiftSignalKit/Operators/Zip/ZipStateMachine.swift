/// An event ``zip(_:_:)`` has to send, in the order it must be sent.
enum ZipDelivery<Element, E> {
    /// One value of every source, by source index.
    case row([Element])
    case completion
    case error(E)
}

extension ZipDelivery: Sendable where Element: Sendable, E: Sendable {}

/// The state of one ``zip(_:_:)`` subscription: per-source buffers of values not yet paired, and the
/// outbox of rows and the terminal event waiting to be sent.
///
/// Rows are formed under the lock, in the order their last value arrived, and queued in the outbox; one
/// thread at a time (the *deliverer*) takes them off and sends them outside the lock, so rows reach the
/// subscriber in the order they were formed even when sources send from several threads at once, and
/// the terminal event comes after every row formed before it.
///
/// - The result completes as soon as a source has completed with an empty buffer: no further row can
///   be formed.
/// - The first error is the result's error; rows formed before it are sent first.
/// - After the terminal event is queued, values are dropped. Disposal drops everything (returned, to be
///   released after unlocking) and stops the deliverer.
struct ZipStateMachine<Element, E> {
    /// What a thread that changed the state does next.
    enum Action {
        /// It became the deliverer: call ``nextDelivery(mayContinue:)`` until it says to stop.
        case deliver
        /// Nothing: no row was formed, or another thread is delivering and will send it.
        case none
    }

    /// What the deliverer does next.
    enum DeliveryAction {
        /// Send this.
        case send(ZipDelivery<Element, E>)
        /// More is waiting but the deliverer used its allowance: another thread must take over the role
        /// and call ``nextDelivery(mayContinue:)``.
        case handOff
        /// Nothing is waiting (or the subscription ended): the role is given up.
        case idle
    }

    private var buffers: [FIFO<Element>]
    private var completed: [Bool]
    private var outbox = FIFO<ZipDelivery<Element, E>>()
    private var isDelivering = false
    /// The terminal event has been queued, or the subscription disposed: later events are dropped.
    private var inputClosed = false
    private var isDisposed = false

    init(arity: Int) {
        precondition(arity > 0, "ZipStateMachine needs at least one source")
        self.buffers = Array(repeating: FIFO(), count: arity)
        self.completed = Array(repeating: false, count: arity)
    }

    /// Source `index` sent `value`.
    mutating func sourceSent(_ value: Element, index: Int) -> Action {
        guard !self.inputClosed else { return .none }
        self.buffers[index].append(value)
        guard self.buffers.allSatisfy({ !$0.isEmpty }) else { return .none }
        var row: [Element] = []
        row.reserveCapacity(self.buffers.count)
        for source in self.buffers.indices {
            row.append(self.buffers[source].popFirst()!)
        }
        self.outbox.append(.row(row))
        if self.buffers.indices.contains(where: { self.completed[$0] && self.buffers[$0].isEmpty }) {
            self.close(with: .completion)
        }
        return self.claimDelivery()
    }

    /// Source `index` completed.
    mutating func sourceCompleted(index: Int) -> Action {
        guard !self.inputClosed else { return .none }
        self.completed[index] = true
        guard self.buffers[index].isEmpty else { return .none }
        self.close(with: .completion)
        return self.claimDelivery()
    }

    /// A source failed.
    mutating func sourceFailed(_ error: E) -> Action {
        guard !self.inputClosed else { return .none }
        self.close(with: .error(error))
        return self.claimDelivery()
    }

    /// The deliverer asks for the next thing to send.
    ///
    /// - Parameter mayContinue: Whether the deliverer still has allowance for another delivery.
    mutating func nextDelivery(mayContinue: Bool) -> DeliveryAction {
        precondition(self.isDelivering, "ZipStateMachine: nextDelivery() without the deliverer's role")
        if self.isDisposed || self.outbox.isEmpty {
            self.isDelivering = false
            return .idle
        }
        guard mayContinue else { return .handOff }
        return .send(self.outbox.popFirst()!)
    }

    /// The subscription was disposed: returns the buffered values and the unsent outbox, to be released
    /// after unlocking.
    mutating func disposed() -> (buffers: [FIFO<Element>], outbox: FIFO<ZipDelivery<Element, E>>) {
        self.isDisposed = true
        self.inputClosed = true
        let buffers = self.buffers
        self.buffers = Array(repeating: FIFO(), count: buffers.count)
        return (buffers, self.outbox.removeAll())
    }

    /// Queues the terminal event; the values still buffered can no longer be paired and are dropped at
    /// disposal, which the terminal event causes.
    private mutating func close(with terminal: ZipDelivery<Element, E>) {
        self.inputClosed = true
        self.outbox.append(terminal)
    }

    private mutating func claimDelivery() -> Action {
        if self.isDelivering || self.outbox.isEmpty { return .none }
        self.isDelivering = true
        return .deliver
    }
}

extension ZipStateMachine: Sendable where Element: Sendable, E: Sendable {}

// For the state machine's unit tests (synthesised conformances must be declared in this file).
extension ZipDelivery: Equatable where Element: Equatable, E: Equatable {}
extension ZipStateMachine.DeliveryAction: Equatable where Element: Equatable, E: Equatable {}
