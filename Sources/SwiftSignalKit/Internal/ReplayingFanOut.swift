import Dispatch

/// Shared delivery machinery of ``Promise`` and ``ValuePromise``: a latest value replayed to each new
/// subscriber and broadcast values, delivered to every subscriber in the order they were published.
///
/// Broadcasts are queued under the lock and run outside it by one thread at a time (whichever thread
/// finds nobody draining). This is what guarantees ordering: a subscriber never sees an older value after
/// a newer one.
///
/// A publisher that drains delivers its own value and then at most ``drainAllowance`` values published
/// meanwhile, by other threads or re-entrantly by the subscribers' callbacks on this one (the queue
/// does not tell them apart); if more are waiting, it hands the drainer's role to a task on a global
/// Dispatch queue and returns. A new subscriber's backlog is bounded the same way. So neither `set` nor
/// `start` keeps its caller delivering for other threads without end, even when they publish faster than
/// the subscribers take values; those values then reach subscribers on a Dispatch thread, still in order.
///
/// A new subscriber's replay is delivered at once, on the subscribing thread, as the original library
/// does, also from inside a callback of the same promise and while another thread is delivering. Until
/// that thread has delivered the replay, the subscriber is a *replaying* member: broadcasts published
/// meanwhile are not delivered to it by the draining thread but kept in its backlog, which the
/// subscribing thread delivers after the replay, before the member joins the ordinary broadcasts. So
/// each subscriber still sees every value once, in order. Values that leave the state (a replaced latest
/// value, a delivered queue entry, a backlog) are released after unlocking.
@usableFromInline struct ReplayingFanOut<T: Sendable>: Sendable {
    /// A published value with its sequence number.
    @usableFromInline struct Broadcast: Sendable {
        @usableFromInline let value: T
        @usableFromInline let sequence: UInt64

        @inlinable init(value: T, sequence: UInt64) {
            self.value = value
            self.sequence = sequence
        }
    }

    /// One broadcast taken off the queue, to run unlocked on a snapshot of the members.
    @usableFromInline struct Work: Sendable {
        @usableFromInline let value: T
        @usableFromInline let sequence: UInt64
        @usableFromInline let members: OrderedSlots<FanOutMember>

        @inlinable init(value: T, sequence: UInt64, members: OrderedSlots<FanOutMember>) {
            self.value = value
            self.sequence = sequence
            self.members = members
        }
    }

    /// A member whose replay the subscribing thread has not finished delivering. Its ``FanOutMember``
    /// carries `joinedAfter == .max` meanwhile, so that broadcasts skip it.
    @usableFromInline struct Replaying: Sendable {
        @usableFromInline let key: Int
        /// The sequence number of the last broadcast the member must not get: the one its replay
        /// stands for, then the last one moved into `backlog`.
        @usableFromInline var lastCovered: UInt64
        /// Broadcasts published since the member joined, in order, for the subscribing thread.
        @usableFromInline var backlog: [T]

        @inlinable init(key: Int, lastCovered: UInt64) {
            self.key = key
            self.lastCovered = lastCovered
            self.backlog = []
        }
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var value: T?
        @usableFromInline var members = OrderedSlots<FanOutMember>()
        @usableFromInline var sequence: UInt64 = 0
        /// Consumed entries are set to nil, so their values are released by the draining thread.
        @usableFromInline var pending: [Broadcast?] = []
        @usableFromInline var pendingHead = 0
        @usableFromInline var isDraining = false
        /// Members still receiving their replay; usually empty, which is all a broadcast checks.
        @usableFromInline var replaying: [Replaying] = []
        /// Free for the owner to keep its own bookkeeping under the same lock.
        @usableFromInline var generation: UInt64 = 0
        /// The owner's current source subscription (a ``Promise``'s `PromiseSource<T>`), type-erased so
        /// that the owner can call it through its concrete type: through `Disposable` the call would
        /// run this module's unspecialised code.
        @usableFromInline var source: (any AnyObject & Sendable)?

        @usableFromInline init(value: T?) {
            self.value = value
        }

        /// A broadcast of `value` as number `sequence` is about to go to a snapshot of the members: keeps
        /// it for each replaying member that must get it.
        @inlinable mutating func backlog(_ value: T, sequence: UInt64) {
            for index in self.replaying.indices where self.replaying[index].lastCovered < sequence {
                self.replaying[index].backlog.append(value)
                self.replaying[index].lastCovered = sequence
            }
        }
    }

    @usableFromInline let state: LockedState<State>

    /// How many values published meanwhile (by other threads, or re-entrantly from callbacks) a publisher
    /// delivers after its own before it hands the rest to Dispatch: enough that ordinary contention never
    /// leaves the publishing threads.
    @inlinable static var drainAllowance: Int { 64 }

    init(value: T?) {
        self.state = .init(State(value: value))
    }

    /// Adds a subscriber and, if there is a current value, delivers it to the subscriber before
    /// returning, followed by whatever was published meanwhile (see the type's documentation).
    func subscribe(_ subscriber: Subscriber<T, NoError>) -> Int {
        let (key, replay) = self.state.withLock { state -> (Int, T?) in
            guard let value = state.value else {
                return (state.members.add(FanOutMember(subscriber, joinedAfter: state.sequence)), nil)
            }
            let key = state.members.add(FanOutMember(subscriber, joinedAfter: .max))
            state.replaying.append(Replaying(key: key, lastCovered: state.sequence))
            return (key, value)
        }
        guard let replay else { return key }
        subscriber.putNext(replay)
        self.deliverBacklog(of: key, to: subscriber, allowance: Self.drainAllowance)
        return key
    }

    /// Delivers a replaying member's backlog until it is empty (then the member joins the ordinary
    /// broadcasts). After `allowance` values, if more keep coming, the rest is delivered by a task on a
    /// global queue, so that subscribing does not keep its caller busy while others publish faster than
    /// the subscriber takes values.
    func deliverBacklog(of key: Int, to subscriber: Subscriber<T, NoError>, allowance: Int) {
        var remaining = allowance
        while let backlog = self.state.withLock({ Self.takeBacklog(of: key, for: subscriber, &$0) }) {
            for (index, value) in backlog.enumerated() {
                if remaining == 0 {
                    // Still replaying (this batch was taken, not yet delivered): hand the rest on.
                    let rest = Array(backlog[index...])
                    DispatchQueue.global().async {
                        for value in rest {
                            subscriber.putNext(value)
                        }
                        self.deliverBacklog(of: key, to: subscriber, allowance: .max)
                    }
                    return
                }
                remaining -= 1
                subscriber.putNext(value)
            }
        }
    }

    /// The backlog of a replaying member, or nil once it is empty: then the member joins the ordinary
    /// broadcasts, after the last one it got from its backlog. Also nil if the member has left.
    @usableFromInline
    static func takeBacklog(of key: Int, for subscriber: Subscriber<T, NoError>, _ state: inout State) -> [T]? {
        guard let index = state.replaying.firstIndex(where: { $0.key == key }) else { return nil }
        if state.replaying[index].backlog.isEmpty {
            let finished = state.replaying.remove(at: index)
            Self.releaseReplayingIfEmpty(&state)
            state.members.replace(key, with: FanOutMember(subscriber, joinedAfter: finished.lastCovered))
            return nil
        }
        var backlog: [T] = []
        swap(&backlog, &state.replaying[index].backlog)
        return backlog
    }

    func unsubscribe(_ key: Int) {
        let (removed, backlog) = self.state.withLock { state -> (FanOutMember?, Replaying?) in
            let removed = state.members.remove(key)
            guard let index = state.replaying.firstIndex(where: { $0.key == key }) else { return (removed, nil) }
            let replaying = state.replaying.remove(at: index)
            Self.releaseReplayingIfEmpty(&state)
            return (removed, replaying)
        }
        // Released here, after unlocking.
        withExtendedLifetime((removed, backlog)) {}
    }

    /// Frees the list of replaying subscribers once nobody replays: every subscriber of a replaying
    /// fan-out replays when it joins, and a promise with one subscriber would otherwise keep the list's
    /// buffer (64 bytes) for good. The list is empty, so freeing it runs no deinit of a user value.
    @usableFromInline
    static func releaseReplayingIfEmpty(_ state: inout State) {
        if state.replaying.isEmpty && state.replaying.capacity > 0 {
            state.replaying = []
        }
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
                state.pending.append(Broadcast(value: value, sequence: state.sequence))
                return (true, 0, nil, replaced)
            }
            // Nobody is delivering, so the queue is empty (see `takeWork`): this thread delivers this value
            // without queueing it, then whatever was queued meanwhile.
            if !state.replaying.isEmpty { state.backlog(value, sequence: state.sequence) }
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
    /// the role. After `allowance` values, if more are waiting, the role passes to a task on a global
    /// queue, which drains without limit.
    @inlinable func drain(allowance: Int = ReplayingFanOut.drainAllowance) {
        var remaining = allowance
        while let work = self.state.withLock({ Self.takeWork(&$0) }) {
            if remaining == 0 {
                // Still the drainer, with work waiting: hand both to Dispatch (`work` goes first).
                DispatchQueue.global().async {
                    work.members.broadcast(work.value, publishedAs: work.sequence)
                    self.drain(allowance: .max)
                }
                return
            }
            remaining -= 1
            work.members.broadcast(work.value, publishedAs: work.sequence)
        }
    }

    /// The next broadcast to deliver, or nil (and the drainer's role given up) when none is waiting.
    @inlinable
    static func takeWork(_ state: inout State) -> Work? {
        guard state.pendingHead < state.pending.count else {
            state.isDraining = false
            state.pending.removeAll(keepingCapacity: true)
            state.pendingHead = 0
            return nil
        }
        let broadcast = state.pending[state.pendingHead]!
        state.pending[state.pendingHead] = nil
        state.pendingHead += 1
        if !state.replaying.isEmpty { state.backlog(broadcast.value, sequence: broadcast.sequence) }
        // Copying the members only retains their storage; they are iterated after unlocking.
        return Work(value: broadcast.value, sequence: broadcast.sequence, members: state.members)
    }
}

/// The disposable of a subscription to a ``ReplayingFanOut``: disposing it leaves the fan-out. It keeps
/// the fan-out's owner (a promise) alive while the subscription lasts, as the closure of the
/// `ActionDisposable` it replaces did, in one object of 48 bytes where that took three (160).
@usableFromInline final class FanOutMembership<T: Sendable>: Disposable {
    /// The promise, which a subscription keeps alive; nil for a `ReplayingValuePipe`, which its
    /// subscriptions do not keep alive.
    @usableFromInline let owner: (any AnyObject & Sendable)?
    @usableFromInline let core: ReplayingFanOut<T>
    @usableFromInline let key: Int

    init(owner: (any AnyObject & Sendable)?, core: ReplayingFanOut<T>, key: Int) {
        self.owner = owner
        self.core = core
        self.key = key
    }

    /// Leaves the fan-out; a second call finds nothing to remove.
    @usableFromInline func dispose() {
        self.core.unsubscribe(self.key)
    }
}

/// A subscriber of a ``ReplayingFanOut``. Not generic, and not nested in the generic type (the subscriber is stored as `AnyObject & Sendable`, and is always a
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
        self.entries.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                guard let joinedAfter = entries[index].element?.joinedAfter, joinedAfter < sequence,
                    let address = entries[index].element?.address, let object = UnsafeRawPointer(bitPattern: address)
                else { continue }
                Unmanaged<Subscriber<T, NoError>>.fromOpaque(object)._withUnsafeGuaranteedRef { subscriber in
                    subscriber.putNext(value)
                }
            }
        }
    }
}
