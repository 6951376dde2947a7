/// Shared delivery machinery of ``Promise`` and ``ValuePromise``: a latest value replayed to each new
/// subscriber and broadcast values, delivered to every subscriber in the order they were published.
///
/// Deliveries are queued under the lock and run outside it by one thread at a time (whichever thread
/// finds nobody draining). This is what guarantees ordering: a subscriber never sees an older value after
/// a newer one, and a new subscriber's replay is never overtaken by a later broadcast. Values that leave
/// the state (a replaced latest value, a delivered queue entry) are released after unlocking.
@usableFromInline final class ReplayingFanOut<T: Sendable>: Sendable {
    @usableFromInline enum Delivery: Sendable {
        /// A published value with its sequence number.
        case broadcast(T, sequence: UInt64)
        /// The latest value, replayed to one new subscriber.
        case replay(T, subscriber: Int)
    }

    /// One delivery taken off the queue, to run unlocked. A struct rather than an enum: copying a
    /// generic multi-payload enum allocated on every delivery.
    @usableFromInline struct Work {
        @usableFromInline let value: T
        /// For a broadcast: its sequence number and the members to deliver to.
        @usableFromInline let sequence: UInt64
        @usableFromInline let members: OrderedSlots<FanOutMember>
        /// For a replay: the one subscriber (nil if it has left meanwhile).
        @usableFromInline let replayTarget: Subscriber<T, NoError>?
        @usableFromInline let isReplay: Bool

        @inlinable init(
            value: T, sequence: UInt64, members: OrderedSlots<FanOutMember>, replayTarget: Subscriber<T, NoError>?,
            isReplay: Bool
        ) {
            self.value = value
            self.sequence = sequence
            self.members = members
            self.replayTarget = replayTarget
            self.isReplay = isReplay
        }
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var value: T?
        @usableFromInline var members = OrderedSlots<FanOutMember>()
        @usableFromInline var sequence: UInt64 = 0
        /// Consumed entries are set to nil, so their values are released by the draining thread.
        @usableFromInline var pending: [Delivery?] = []
        @usableFromInline var pendingHead = 0
        @usableFromInline var isDraining = false
        /// Free for the owner to keep its own bookkeeping under the same lock.
        @usableFromInline var generation: UInt64 = 0
        /// The owner's current source subscription (a ``Promise``'s `PromiseSource<T>`), type-erased so
        /// that the owner can call it through its concrete type: through `Disposable` the call would
        /// run this module's unspecialised code.
        @usableFromInline var source: (any AnyObject & Sendable)?

        @usableFromInline init(value: T?) {
            self.value = value
        }
    }

    @usableFromInline let state: LockedState<State>

    init(value: T?) {
        self.state = .init(State(value: value))
    }

    /// Adds a subscriber and queues the replay of the current value, if any.
    func subscribe(_ subscriber: Subscriber<T, NoError>) -> Int {
        let (key, drain) = self.state.withLock { state -> (Int, Bool) in
            let key = state.members.add(FanOutMember(subscriber, joinedAfter: state.sequence))
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

    /// Publishes `value`, unless `generation` is given and no longer current.
    ///
    /// - Parameters:
    ///   - generation: The generation the caller saw; a newer one means its value is stale.
    ///   - advancing: Whether publishing starts a new generation (``ValuePromise`` uses generations as a
    ///     version for its compare-then-set).
    /// - Returns: Whether the value was published.
    @inlinable @discardableResult
    func publish(_ value: T, ifGeneration generation: UInt64? = nil, advancing: Bool = false) -> Bool {
        let (published, sequence, members, replaced) = self.state.withLock {
            state -> (Bool, UInt64, OrderedSlots<FanOutMember>?, T?) in
            if let generation, state.generation != generation {
                return (false, 0, nil, nil)
            }
            if advancing {
                state.generation += 1
            }
            let replaced = state.value
            state.value = value
            state.sequence += 1
            guard Self.claimDrain(&state) else {
                // Another thread is delivering; it takes this value from the queue in order.
                state.pending.append(.broadcast(value, sequence: state.sequence))
                return (true, 0, nil, replaced)
            }
            // Nobody is delivering, so the queue is empty (see `takeWork`): this thread delivers this value
            // without queueing it, then whatever was queued meanwhile.
            return (true, state.sequence, state.members, replaced)
        }
        withExtendedLifetime(replaced) {}
        if let members {
            members.broadcast(value, publishedAs: sequence)
            self.drain()
        }
        return published
    }

    @inlinable
    static func claimDrain(_ state: inout State) -> Bool {
        if state.isDraining { return false }
        state.isDraining = true
        return true
    }

    /// Delivers queued work until the queue is empty, then gives up the drainer's role (in `takeWork`, under
    /// the lock, so a publisher that finds no drainer also finds an empty queue). Call only after claiming
    /// the role.
    @inlinable func drain() {
        while let work = self.state.withLock({ Self.takeWork(&$0) }) {
            if work.isReplay {
                work.replayTarget?.putNext(work.value)
            } else {
                work.members.broadcast(work.value, publishedAs: work.sequence)
            }
        }
    }

    @inlinable
    static func takeWork(_ state: inout State) -> Work? {
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
            return Work(value: value, sequence: sequence, members: state.members, replayTarget: nil, isReplay: false)
        case .replay(let value, let key):
            let target = state.members.element(forKey: key)?.subscriber(of: T.self)
            return Work(value: value, sequence: 0, members: OrderedSlots(), replayTarget: target, isReplay: true)
        }
    }
}

/// A subscriber of a ``ReplayingFanOut``. Not generic, and not nested in the generic class (the subscriber is stored as `AnyObject & Sendable`, and is always a
/// `Subscriber<T, NoError>`), so that copying and iterating the members is concrete code: in this
/// module's unspecialised generic code a generic element type costs a metadata lookup per step.
@usableFromInline struct FanOutMember: Sendable {
    /// Owns the subscriber.
    @usableFromInline let object: any AnyObject & Sendable
    /// The same subscriber's address (an integer, so that the struct stays Sendable): a broadcast reads
    /// only this field and `joinedAfter`, so that looking at a member does not retain and release it
    /// (the broadcast's snapshot of the members owns it).
    @usableFromInline let address: UInt
    /// The sequence number of the last broadcast published before this member joined.
    @usableFromInline let joinedAfter: UInt64

    @inlinable init<T>(_ subscriber: Subscriber<T, NoError>, joinedAfter: UInt64) {
        self.object = subscriber
        self.address = UInt(bitPattern: Unmanaged.passUnretained(subscriber).toOpaque())
        self.joinedAfter = joinedAfter
    }

    @inlinable func subscriber<T>(of type: T.Type) -> Subscriber<T, NoError> {
        return unsafeDowncast(self.object, to: Subscriber<T, NoError>.self)
    }
}

extension OrderedSlots where Element == FanOutMember {
    /// Delivers `value` to each member that joined before broadcast number `sequence`, in order. Call
    /// outside every lock, on a snapshot of the members: the snapshot owns them while this runs.
    ///
    /// Every member must be a `Subscriber<T, NoError>`.
    @inlinable
    func broadcast<T>(_ value: T, publishedAs sequence: UInt64) {
        // Each member is used at +0 (its address, not its owning reference, is read), which saves a
        // retain and a release, two atomic operations, per member and value.
        self.items.withUnsafeBufferPointer { items in
            for index in items.indices {
                guard let joinedAfter = items[index]?.joinedAfter, joinedAfter < sequence,
                    let address = items[index]?.address, let object = UnsafeRawPointer(bitPattern: address)
                else { continue }
                Unmanaged<Subscriber<T, NoError>>.fromOpaque(object)._withUnsafeGuaranteedRef { subscriber in
                    subscriber.putNext(value)
                }
            }
        }
    }
}
