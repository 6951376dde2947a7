/// Shared delivery machinery of ``Promise`` and ``ValuePromise``: a latest value replayed to each new
/// subscriber and broadcast values, delivered to every subscriber in the order they were published.
///
/// Broadcasts go through a ``SerialDelivery``: whichever publisher finds nobody delivering delivers its
/// own value, then what others published meanwhile, outside the lock, handing the rest to a global
/// Dispatch queue after 64 values published by other threads (values the subscribers' callbacks publish
/// on the delivering thread do not count). So a subscriber never sees an older value after a newer one,
/// and neither `set` nor `start` keeps its caller delivering for other threads without end.
///
/// A new subscriber's replay is delivered at once, on the subscribing thread, as the original library
/// does, also from inside a callback of the same promise and while another thread is delivering. Until
/// that thread has delivered the replay, the subscriber is a *replaying* member: broadcasts published
/// meanwhile are not delivered to it by the broadcasting thread but posted to its own backlog (a
/// ``SerialDelivery`` whose deliverer is the subscribing thread), which the subscribing thread delivers
/// after the replay, before the member joins the ordinary broadcasts. So each subscriber still sees
/// every value once, in order. Values that leave the state (a replaced latest value, a delivered
/// broadcast, a backlog) are released after unlocking.
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
        /// stands for, then the last one posted to `backlog`.
        @usableFromInline var lastCovered: UInt64
        /// Broadcasts published since the member joined, in order, for the subscribing thread, which
        /// holds the deliverer's role from the start.
        @usableFromInline var backlog = SerialDelivery<T>()

        @inlinable init(key: Int, lastCovered: UInt64) {
            self.key = key
            self.lastCovered = lastCovered
            self.backlog.claim()
        }
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var value: T?
        @usableFromInline var members = OrderedSlots<FanOutMember>()
        @usableFromInline var sequence: UInt64 = 0
        @usableFromInline var delivery = SerialDelivery<Broadcast>()
        /// Members still receiving their replay; usually empty, which is all a broadcast checks.
        @usableFromInline var replaying: [Replaying] = []
        /// The version of the owner's source (``replaceSource(_:)``) or of its value (a compare-then-set
        /// through ``publish(_:ifGeneration:advancing:)``); changed only by those two.
        @usableFromInline var generation: UInt64 = 0
        /// The owner's current source subscription (a ``Promise``'s `PromiseSource<T>`), type-erased so
        /// that the owner can call it through its concrete type: through `Disposable` the call would
        /// run this module's unspecialised code.
        @usableFromInline var source: (any AnyObject & Sendable)?

        @usableFromInline init(value: T?) {
            self.value = value
        }

        /// A broadcast of `value` as number `sequence` is about to go to a snapshot of the members: posts
        /// it to the backlog of each replaying member that must get it.
        @inlinable mutating func backlog(_ value: T, sequence: UInt64) {
            for index in self.replaying.indices where self.replaying[index].lastCovered < sequence {
                _ = self.replaying[index].backlog.post(value)
                self.replaying[index].lastCovered = sequence
            }
        }

        /// The broadcast `broadcast` leaves the queue: the work that delivers it to the current members.
        @inlinable mutating func work(for broadcast: Broadcast) -> Work {
            if !self.replaying.isEmpty { self.backlog(broadcast.value, sequence: broadcast.sequence) }
            // Copying the members only retains their storage; they are iterated after unlocking.
            return Work(value: broadcast.value, sequence: broadcast.sequence, members: self.members)
        }
    }

    @usableFromInline let state: LockedState<State>

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
        ReplayBacklogDelivery(core: self, key: key, subscriber: subscriber).deliverQueued()
        return key
    }

    /// The current value and generation, for an owner's compare-then-set (see
    /// ``publish(_:ifGeneration:advancing:)``).
    @inlinable func current() -> (value: T?, generation: UInt64) {
        return self.state.withLock { ($0.value, $0.generation) }
    }

    /// Starts a new generation without a value, with a new source made for it by `makeSource` (library
    /// code: it runs under the lock), so that a concurrent replacement or the owner's deinit finds and
    /// disposes it, and values the previous source sends afterwards fail the generation check. Returns
    /// the new source, the one it replaces, and the value it cleared, to be disposed and released after
    /// unlocking.
    @inlinable func replaceSource<Source: AnyObject & Sendable>(
        _ makeSource: (UInt64) -> Source
    ) -> (
        source: Source, previous: (any AnyObject & Sendable)?, cleared: T?
    ) {
        return self.state.withLock { state in
            state.generation += 1
            let cleared = state.value
            state.value = nil
            let previous = state.source
            let source = makeSource(state.generation)
            state.source = source
            return (source, previous, cleared)
        }
    }

    /// Takes the current source away (the owner is going), to be disposed after unlocking.
    func takeSource() -> (any AnyObject & Sendable)? {
        return self.state.withLock { state in
            let source = state.source
            state.source = nil
            return source
        }
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
        let (published, work, replaced) = self.state.withLock { state -> (Bool, Work?, T?) in
            if let generation, state.generation != generation {
                return (false, nil, nil)
            }
            if advancing {
                state.generation += 1
            }
            let replaced = state.value
            state.value = value
            state.sequence += 1
            switch state.delivery.submit(Broadcast(value: value, sequence: state.sequence)) {
            case .deliverNow(let broadcast):
                return (true, state.work(for: broadcast), replaced)
            case .queued, .refused:
                // Another thread is delivering; it takes this value from the queue in order. (The
                // fan-out's delivery is never closed.)
                return (true, nil, replaced)
            }
        }
        withExtendedLifetime(replaced) {}
        if let work {
            FanOutDelivery(core: self).deliverSerially(startingWith: work)
        }
        return published
    }
}

/// The broadcasts of a ``ReplayingFanOut``, for ``SerialDeliveryHost``.
@usableFromInline struct FanOutDelivery<T: Sendable>: SerialDeliveryHost {
    @usableFromInline let core: ReplayingFanOut<T>

    @inlinable init(core: ReplayingFanOut<T>) {
        self.core = core
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<ReplayingFanOut<T>.Work> {
        return self.core.state.withLock { state in
            state.delivery.step(resuming: resuming).map { state.work(for: $0) }
        }
    }

    @inlinable func deliver(_ work: ReplayingFanOut<T>.Work) {
        work.members.broadcast(work.value, publishedAs: work.sequence)
    }
}

/// A replaying member's backlog, for ``SerialDeliveryHost``: when it is empty, the member joins the
/// ordinary broadcasts, after the last one it got from its backlog (in the same critical section).
struct ReplayBacklogDelivery<T: Sendable>: SerialDeliveryHost {
    let core: ReplayingFanOut<T>
    let key: Int
    let subscriber: Subscriber<T, NoError>

    func nextDelivery(resuming: Bool) -> SerialDeliveryStep<T> {
        return self.core.state.withLock { state in
            // The member left: nothing more to deliver.
            guard let index = state.replaying.firstIndex(where: { $0.key == self.key }) else { return .idle }
            let step = state.replaying[index].backlog.step(resuming: resuming)
            if case .idle = step {
                let finished = state.replaying.remove(at: index)
                ReplayingFanOut.releaseReplayingIfEmpty(&state)
                state.members.replace(self.key, with: FanOutMember(self.subscriber, joinedAfter: finished.lastCovered))
            }
            return step
        }
    }

    func deliver(_ value: T) {
        self.subscriber.putNext(value)
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
