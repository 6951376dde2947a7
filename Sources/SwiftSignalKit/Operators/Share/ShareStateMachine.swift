/// The state of ``share(replay:connection:)``: the subscribers, each with its own queue of events (a
/// ``SerialDelivery``), the values kept
/// for replay, and the one upstream connection.
///
/// Every event reaches a subscriber through its queue, filled under the lock: a new subscriber's replay
/// is posted in the same critical section that adds it to the broadcasts, so it sees the replay and
/// then every later value, with no gap and no duplicate, whatever threads the upstream sends from.
/// Values that leave the state (dropped from the replay buffer, or in a departed subscriber's queue)
/// are returned, to be released after unlocking.
@usableFromInline struct ShareStateMachine<T: Sendable, E: Sendable>: Sendable {
    @usableFromInline typealias Event = SignalEvent<T, E>

    @usableFromInline struct Member: Sendable {
        @usableFromInline let subscriber: Subscriber<T, E>
        /// Keeps its queue's storage while idle: a member of a share takes an event per value, and
        /// freeing the queue each time it empties cost an allocation per value and member.
        @usableFromInline var delivery = SerialDelivery<Event>(keepingStorage: true)
        /// The member has been sent a terminal event and takes no more broadcasts.
        @usableFromInline var isEnded = false

        @inlinable init(subscriber: Subscriber<T, E>) {
            self.subscriber = subscriber
        }
    }

    @usableFromInline enum Connection: Sendable {
        /// No upstream subscription.
        case idle
        /// Connection `generation` is being made.
        case connecting(generation: UInt64)
        /// Connection `generation` is live.
        case connected(generation: UInt64, Disposable)
        /// The upstream ended and the share stays as it is (``ShareConnection/stayConnected``).
        case ended(Event)
    }

    /// What the thread that ran an event does next, after unlocking.
    @usableFromInline enum Action {
        /// Nothing to do.
        case none
        /// Deliver the queues of these members, in joining order, then release `dropping` (the value
        /// the replay no longer keeps, or the value itself when it keeps none).
        case deliver(to: [Int], dropping: T?)
        /// Deliver member `id`'s queue: it joined, and the replay (and, after the upstream ended with
        /// ``ShareConnection/stayConnected``, the terminal event) waits there.
        case deliverReplay(to: Int)
        /// Subscribe to the upstream as connection `generation`: the first subscriber joined.
        case connect(generation: UInt64)
        /// The connection ends: deliver these members' queues (the terminal event), dispose
        /// `connection` (nil while it is still being made: it is disposed when it arrives), and release
        /// the replay (`dropping`) and the member that left, if any.
        case disconnect(deliveringTo: [Int], connection: Disposable?, dropping: [T], departed: Member?)
        /// Release the member that left: its subscriber and the events it was not delivered.
        case release(Member)
        /// Dispose this connection: it was made after it was let go (a benign race).
        case dispose(Disposable)
        /// Someone joined or left while the caller looked at the subscribers outside the lock: look
        /// again.
        case lookAgain
    }

    @usableFromInline let replay: ShareReplay
    @usableFromInline let connectionPolicy: ShareConnection
    /// In joining order (increasing ids), so that every event reaches the subscribers in that order.
    @usableFromInline var members: [(id: Int, member: Member)] = []
    /// The ids of `members`, in the same order, changed only when a subscriber joins or leaves: a
    /// broadcast whose every member is to be delivered (the usual case) hands out this array, which
    /// costs a retain, where building a list cost an allocation per value.
    @usableFromInline var memberIDs: [Int] = []
    @usableFromInline var nextID = 0
    /// Changes whenever a subscriber joins or leaves, so that a check made outside the lock can tell
    /// whether the subscribers it looked at are still the ones there are.
    @usableFromInline var membership: UInt64 = 0
    @usableFromInline var buffer = ValueWindow<T>()
    @usableFromInline var connection = Connection.idle
    @usableFromInline var generation: UInt64 = 0

    @inlinable init(replay: ShareReplay, connection: ShareConnection) {
        self.replay = replay
        self.connectionPolicy = connection
    }

    /// A subscriber arrives as member `id`: it gets the replay (and, after the upstream ended with
    /// `.stayConnected`, the terminal event), then the live events. The first one connects.
    @inlinable mutating func join(_ subscriber: Subscriber<T, E>) -> (id: Int, action: Action) {
        let id = self.nextID
        self.nextID += 1
        self.membership += 1
        var member = Member(subscriber: subscriber)
        var deliver = false
        for value in self.buffer.values {
            deliver = member.delivery.post(.Next(value)) || deliver
        }
        var action = Action.none
        switch self.connection {
        case .ended(let event):
            deliver = member.delivery.post(event) || deliver
            member.isEnded = true
        case .idle:
            // With no connection there is no replay: it goes when the connection goes.
            self.generation += 1
            self.connection = .connecting(generation: self.generation)
            action = .connect(generation: self.generation)
        case .connecting, .connected:
            break
        }
        self.members.append((id, member))
        self.memberIDs.append(id)
        if deliver {
            guard case .none = action else {
                preconditionFailure("share: a subscriber that connects found a replay (ShareStateMachine.join)")
            }
            action = .deliverReplay(to: id)
        }
        return (id, action)
    }

    /// Connection `generation` has been made: it is disposed at once when it was let go meanwhile.
    @inlinable mutating func connected(_ generation: UInt64, _ disposable: Disposable) -> Action {
        guard case .connecting(let current) = self.connection, current == generation else { return .dispose(disposable) }
        self.connection = .connected(generation: generation, disposable)
        return .none
    }

    /// The upstream of connection `generation` sent a value.
    @inlinable mutating func upstreamSent(_ value: T, generation: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        let dropped = self.buffer.append(value, keeping: self.replay)
        let deliver = self.post(.Next(value))
        if deliver.isEmpty && dropped == nil { return .none }
        return .deliver(to: deliver, dropping: dropped)
    }

    /// The upstream of connection `generation` failed or completed.
    @inlinable mutating func upstreamEnded(_ event: Event, generation: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        let deliver = self.post(event)
        self.endAllMembers()
        switch self.connectionPolicy {
        case .whileSubscribed:
            // The next subscriber connects again, from an empty replay.
            return self.letConnectionGo(deliveringTo: deliver, departed: nil)
        case .stayConnected:
            var disposable: Disposable?
            if case .connected(_, let connection) = self.connection {
                disposable = connection
            }
            self.connection = .ended(event)
            return .disconnect(deliveringTo: deliver, connection: disposable, dropping: [], departed: nil)
        }
    }

    /// Member `id` left: its member is released after unlocking, and the connection is let go when it
    /// was the last one and the policy is ``ShareConnection/whileSubscribed``.
    @inlinable mutating func leave(_ id: Int) -> Action {
        guard let index = self.index(of: id) else { return .none }
        let removed = self.members.remove(at: index).member
        self.memberIDs.remove(at: index)
        self.membership += 1
        if case .whileSubscribed = self.connectionPolicy, !self.members.contains(where: { !$0.member.isEnded }) {
            switch self.connection {
            case .connecting, .connected:
                return self.letConnectionGo(deliveringTo: [], departed: removed)
            case .idle, .ended:
                break
            }
        }
        return .release(removed)
    }

    /// The next event for member `id`, with its subscriber (see ``SerialDelivery/step(resuming:)``);
    /// `.idle` when it has left.
    @inlinable mutating func nextDelivery(for id: Int, resuming: Bool) -> SerialDeliveryStep<(Subscriber<T, E>, Event)> {
        guard let index = self.index(of: id) else { return .idle }
        let subscriber = self.members[index].member.subscriber
        return self.members[index].member.delivery.step(resuming: resuming).map { (subscriber, $0) }
    }

    @usableFromInline enum ListenerCheck {
        /// Connection `generation` has been let go: nobody listens to it, for good.
        case abandoned
        /// The share keeps the connection whoever listens (``ShareConnection/stayConnected``).
        case kept
        /// Whether anyone listens depends on these subscribers, as of `membership`.
        case depends(on: [Subscriber<T, E>], membership: UInt64)
    }

    /// The first half of "does anyone still listen to connection `generation`?": the subscribers to
    /// look at, outside the lock.
    @inlinable func listenerCheck(_ generation: UInt64) -> ListenerCheck {
        guard self.isCurrent(generation) else { return .abandoned }
        if case .stayConnected = self.connectionPolicy { return .kept }
        let subscribers = self.members.filter { !$0.member.isEnded }.map(\.member.subscriber)
        return .depends(on: subscribers, membership: self.membership)
    }

    /// The second half: every subscriber looked at has ended. If they are still the subscribers there
    /// are, connection `generation` is let go for good (the next subscriber connects again, with an
    /// empty replay) and the action disposes it.
    @inlinable mutating func abandon(_ generation: UInt64, membership: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        guard membership == self.membership else { return .lookAgain }
        self.endAllMembers()
        return self.letConnectionGo(deliveringTo: [], departed: nil)
    }

    /// No member takes broadcasts of this connection any more; each is removed when it leaves.
    @inlinable mutating func endAllMembers() {
        for index in self.members.indices {
            self.members[index].member.isEnded = true
        }
    }

    /// Ends the current connection: the action disposes it and releases the replay, and the next
    /// subscriber connects again.
    @inlinable mutating func letConnectionGo(deliveringTo deliver: [Int], departed: Member?) -> Action {
        var disposable: Disposable?
        if case .connected(_, let connection) = self.connection {
            disposable = connection
        }
        self.connection = .idle
        return .disconnect(deliveringTo: deliver, connection: disposable, dropping: self.buffer.removeAll(), departed: departed)
    }

    /// Where member `id` is, by binary search over the increasing ids.
    @inlinable func index(of id: Int) -> Int? {
        var low = 0
        var high = self.members.count
        while low < high {
            let middle = (low + high) / 2
            if self.members[middle].id < id {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < self.members.count && self.members[low].id == id ? low : nil
    }

    @inlinable func isCurrent(_ generation: UInt64) -> Bool {
        switch self.connection {
        case .connecting(let current), .connected(let current, _):
            return current == generation
        case .idle, .ended:
            return false
        }
    }

    /// Posts `event` to every member that takes broadcasts; returns those whose queue the caller must
    /// deliver.
    @inlinable mutating func post(_ event: Event) -> [Int] {
        // Nil while every member so far is to be delivered: then the answer is `memberIDs` itself.
        var some: [Int]?
        for index in self.members.indices {
            let claimed = !self.members[index].member.isEnded && self.members[index].member.delivery.post(event)
            if claimed {
                some?.append(self.members[index].id)
            } else if some == nil {
                // The first member not to deliver: the ones before it are, and room for the rest is
                // made at once (growing one by one cost four allocations per value for ten members; a
                // capacity of 0 allocates nothing).
                var list = [Int]()
                list.reserveCapacity(self.members.count - 1)
                list.append(contentsOf: self.memberIDs[..<index])
                some = list
            }
        }
        return some ?? self.memberIDs
    }
}

/// The values a share keeps for replay.
@usableFromInline struct ValueWindow<T: Sendable>: Sendable {
    @usableFromInline var values: [T] = []

    /// Appends `value` and drops what `policy` does not keep: at most one value, since the window
    /// held no more than the policy keeps before. Returns the dropped value (without an array, which
    /// cost an allocation per value).
    @inlinable mutating func append(_ value: T, keeping policy: ShareReplay) -> T? {
        let limit: Int
        switch policy {
        case .none:
            return value
        case .latest:
            limit = 1
        case .last(let count):
            limit = count
        case .all:
            self.values.append(value)
            return nil
        }
        guard limit > 0 else { return value }
        self.values.append(value)
        guard self.values.count > limit else { return nil }
        return self.values.removeFirst()
    }

    @inlinable mutating func removeAll() -> [T] {
        let values = self.values
        self.values = []
        return values
    }
}
