/// Shared delivery machinery of ``Promise`` and ``ValuePromise``: a latest value replayed to each new
/// subscriber and broadcast values, delivered to every subscriber in the order they were published.
///
/// Deliveries are queued under the lock and run outside it by one thread at a time (whichever thread
/// finds nobody draining). This is what guarantees ordering: a subscriber never sees an older value after
/// a newer one, and a new subscriber's replay is never overtaken by a later broadcast. Values that leave
/// the state (a replaced latest value, a delivered queue entry) are released after unlocking.
final class ReplayingFanOut<T: Sendable>: Sendable {
    fileprivate enum Delivery: Sendable {
        /// A published value with its sequence number.
        case broadcast(T, sequence: UInt64)
        /// The latest value, replayed to one new subscriber.
        case replay(T, subscriber: Int)
    }

    fileprivate struct Member: Sendable {
        let subscriber: Subscriber<T, NoError>
        /// The sequence number of the last broadcast published before this member joined.
        let joinedAfter: UInt64
    }

    /// One delivery taken off the queue, to run unlocked.
    private enum Work {
        case broadcast(T, sequence: UInt64, members: OrderedSlots<Member>)
        case replay(T, Subscriber<T, NoError>?)
    }

    struct State: Sendable {
        var value: T?
        fileprivate var members = OrderedSlots<Member>()
        fileprivate var sequence: UInt64 = 0
        /// Consumed entries are set to nil, so their values are released by the draining thread.
        fileprivate var pending: [Delivery?] = []
        fileprivate var pendingHead = 0
        fileprivate var isDraining = false
        /// Free for the owner to keep its own bookkeeping under the same lock.
        var generation: UInt64 = 0
        var source: Disposable?
        var isClosed = false
    }

    let state: LockedState<State>

    init(value: T?) {
        self.state = .make(State(value: value))
    }

    /// Adds a subscriber and queues the replay of the current value, if any.
    func subscribe(_ subscriber: Subscriber<T, NoError>) -> Int {
        let (key, drain) = self.state.withLock { state -> (Int, Bool) in
            let key = state.members.add(Member(subscriber: subscriber, joinedAfter: state.sequence))
            guard let value = state.value else { return (key, false) }
            state.pending.append(.replay(value, subscriber: key))
            return (key, Self.claimDrain(&state))
        }
        if drain { self.drain() }
        return key
    }

    func unsubscribe(_ key: Int) {
        let removed = self.state.withLock { $0.members.remove(key) }
        withExtendedLifetime(removed) {}
    }

    /// Publishes `value` if `accept` (library code, run under the lock) agrees.
    func publish(_ value: T, if accept: (inout State) -> Bool = { _ in true }) {
        let (drain, replaced) = self.state.withLock { state -> (Bool, T?) in
            guard accept(&state) else { return (false, nil) }
            let replaced = state.value
            state.value = value
            state.sequence += 1
            state.pending.append(.broadcast(value, sequence: state.sequence))
            return (Self.claimDrain(&state), replaced)
        }
        withExtendedLifetime(replaced) {}
        if drain { self.drain() }
    }

    private static func claimDrain(_ state: inout State) -> Bool {
        if state.isDraining { return false }
        state.isDraining = true
        return true
    }

    private func drain() {
        while let work = self.state.withLock({ Self.takeWork(&$0) }) {
            switch work {
            case .broadcast(let value, let sequence, let members):
                for member in members where member.joinedAfter < sequence {
                    member.subscriber.putNext(value)
                }
            case .replay(let value, let subscriber):
                subscriber?.putNext(value)
            }
        }
    }

    private static func takeWork(_ state: inout State) -> Work? {
        guard state.pendingHead < state.pending.count else {
            state.isDraining = false
            state.pending.removeAll(keepingCapacity: true)
            state.pendingHead = 0
            return nil
        }
        let delivery = state.pending[state.pendingHead]!
        state.pending[state.pendingHead] = nil
        state.pendingHead += 1
        switch delivery {
        case .broadcast(let value, let sequence):
            // Copying the members only retains their storage; they are iterated after unlocking.
            return .broadcast(value, sequence: sequence, members: state.members)
        case .replay(let value, let key):
            return .replay(value, state.members.element(forKey: key)?.subscriber)
        }
    }
}
