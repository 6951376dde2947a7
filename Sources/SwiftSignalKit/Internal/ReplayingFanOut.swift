/// Shared delivery machinery of ``Promise`` and ``ValuePromise``: a latest value replayed to each new
/// subscriber and broadcast values, delivered to every subscriber in the order they were published.
///
/// Deliveries are queued under the lock and run outside it by one thread at a time (whichever thread
/// finds nobody draining). This is what guarantees ordering: a subscriber never sees an older value after
/// a newer one, and a new subscriber's replay is never overtaken by a later broadcast.
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

    struct State: Sendable {
        var value: T?
        fileprivate var members = SubscriberList<Member>()
        fileprivate var sequence: UInt64 = 0
        fileprivate var pending: [Delivery] = []
        fileprivate var pendingHead = 0
        fileprivate var isDraining = false
        /// Free for the owner (``Promise``) to keep its own bookkeeping under the same lock.
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
            if let value = state.value {
                state.pending.append(.replay(value, subscriber: key))
                return (key, Self.claimDrain(&state))
            }
            return (key, false)
        }
        if drain { self.drain() }
        return key
    }

    func unsubscribe(_ key: Int) {
        let removed = self.state.withLock { $0.members.remove(key) }
        withExtendedLifetime(removed) {}
    }

    /// Publishes `value` if `accept` agrees under the lock.
    func publish(_ value: T, if accept: (inout State) -> Bool = { _ in true }) {
        let drain = self.state.withLock { state -> Bool in
            guard accept(&state) else { return false }
            state.value = value
            state.sequence += 1
            state.pending.append(.broadcast(value, sequence: state.sequence))
            return Self.claimDrain(&state)
        }
        if drain { self.drain() }
    }

    private static func claimDrain(_ state: inout State) -> Bool {
        if state.isDraining { return false }
        state.isDraining = true
        return true
    }

    private func drain() {
        while true {
            let work = self.state.withLock { state -> (T, [Subscriber<T, NoError>])? in
                guard state.pendingHead < state.pending.count else {
                    state.isDraining = false
                    state.pending.removeAll(keepingCapacity: true)
                    state.pendingHead = 0
                    return nil
                }
                let delivery = state.pending[state.pendingHead]
                state.pendingHead += 1
                switch delivery {
                case .broadcast(let value, let sequence):
                    let members = state.members
                    let targets = members.snapshot { key in
                        (members.element(forKey: key)?.joinedAfter ?? sequence) < sequence
                    }
                    return (value, targets.map { $0.subscriber })
                case .replay(let value, let key):
                    guard let member = state.members.element(forKey: key) else { return (value, []) }
                    return (value, [member.subscriber])
                }
            }
            guard let (value, targets) = work else { return }
            for subscriber in targets {
                subscriber.putNext(value)
            }
        }
    }
}
