/// The state of ``share(replay:connection:)``: the one upstream connection, and the subscribers with
/// the replay log, which live on the fan-out engine (``FanOutState``).
///
/// The engine orders the events: each goes to every subscriber in the order it was sent, a new
/// subscriber's replay is delivered on the subscribing thread before any later value, with no gap and
/// no duplicate, whatever threads the upstream sends from. This machine decides what the connection
/// does. Values that leave the state (dropped from the replay, or with a departed subscriber) are
/// returned, to be released after unlocking.
@usableFromInline struct ShareStateMachine<T: Sendable, E: Sendable>: Sendable {
    @usableFromInline typealias Event = SignalEvent<T, E>
    @usableFromInline typealias FanOut = FanOutState<T, E>

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
        /// The subscriber that arrived joined as member `key`; nothing else to do (a connection is
        /// being made or is live, and there is no replay).
        case joined(key: Int)
        /// Deliver `work` (nil when another thread delivers), then release `dropping` (the value the
        /// replay no longer keeps).
        case deliver(FanOut.Work?, dropping: T?)
        /// Deliver `replay` to the subscriber that just joined as member `key`, on the subscribing
        /// thread.
        case replay(FanOut.Log, key: Int, to: Subscriber<T, E>)
        /// The upstream ended and the share stays ended (``ShareConnection/stayConnected``): deliver the
        /// replay and the terminal event to the subscriber that just arrived; it does not join.
        case replayEnded(FanOut.Log, Event, to: Subscriber<T, E>)
        /// Subscribe to the upstream as connection `generation`: the first subscriber joined, as member
        /// `key`.
        case connect(generation: UInt64, key: Int)
        /// The connection ends: deliver `work` (the terminal event), dispose `connection` (nil while it
        /// is still being made: it is disposed when it arrives), and release the replay (`dropping`) and
        /// the member that left, if any.
        case disconnect(
            FanOut.Work?, connection: Disposable?, dropping: FanOut.Log, departed: FanOut.Departure?)
        /// Release the member that left: its subscriber and the events it was not delivered.
        case release(FanOut.Departure)
        /// Dispose this connection: it was made after it was let go (a benign race).
        case dispose(Disposable)
        /// Someone joined or left while the caller looked at the subscribers outside the lock: look
        /// again.
        case lookAgain

        /// The member key of the subscriber that ``ShareStateMachine/join(_:)`` answered for; nil when
        /// it did not join (it arrived after the end) or for the answer to any other event.
        @inlinable var joinedKey: Int? {
            switch self {
            case .joined(let key), .connect(_, let key), .replay(_, let key, _):
                return key
            case .none, .deliver, .replayEnded, .disconnect, .release, .dispose, .lookAgain:
                return nil
            }
        }
    }

    @usableFromInline let replayLimit: Int
    @usableFromInline let connectionPolicy: ShareConnection
    @usableFromInline var fanOut = FanOut(value: nil)
    /// The sequence number of the last terminal event: members whose cursor is below it have ended.
    @usableFromInline var endedThrough: UInt64 = 0
    /// How many members have not ended (``FanOutState/isLive(_:_:since:)``), so that a departure knows
    /// whether it was the last without scanning the members: a scan from the front, on every departure
    /// under the lock, made subscribers that leave oldest first (sessions that expire in the order they
    /// came) cost time quadratic in their number. Every member that joins has not ended; a terminal
    /// event (``upstreamEnded(_:generation:)``) or ``abandon(_:membership:)`` ends every member there is
    /// then, and none of those becomes live again.
    @usableFromInline var liveMembers = 0
    /// Changes whenever a subscriber joins or leaves, so that a check made outside the lock can tell
    /// whether the subscribers it looked at are still the ones there are.
    @usableFromInline var membership: UInt64 = 0
    @usableFromInline var connection = Connection.idle
    @usableFromInline var generation: UInt64 = 0

    @inlinable init(replay: ShareReplay, connection: ShareConnection) {
        switch replay {
        case .none:
            self.replayLimit = 0
        case .latest:
            self.replayLimit = 1
        case .last(let count):
            self.replayLimit = count
        case .all:
            self.replayLimit = .max
        }
        self.connectionPolicy = connection
    }

    /// A subscriber arrives: it joins and gets the replay, or connects (the first one), or, after the
    /// upstream ended with ``ShareConnection/stayConnected``, gets the replay and the end without
    /// joining. The action names the member's key (``Action/joinedKey``).
    @inlinable mutating func join(_ subscriber: Subscriber<T, E>) -> Action {
        switch self.connection {
        case .ended(let event):
            return .replayEnded(self.fanOut.log, event, to: subscriber)
        case .idle:
            // With no connection there is no replay: it went when the connection went.
            self.membership += 1
            self.generation += 1
            self.connection = .connecting(generation: self.generation)
            let (key, replay) = self.fanOut.join(subscriber)
            self.liveMembers += 1
            if replay != nil {
                preconditionFailure("share: a subscriber that connects found a replay (ShareStateMachine.join)")
            }
            return .connect(generation: self.generation, key: key)
        case .connecting, .connected:
            self.membership += 1
            let (key, replay) = self.fanOut.join(subscriber)
            self.liveMembers += 1
            guard let replay else { return .joined(key: key) }
            return .replay(replay, key: key, to: subscriber)
        }
    }

    /// The upstream subscription of connection `generation` was made.
    @inlinable mutating func connected(_ generation: UInt64, _ disposable: Disposable) -> Action {
        guard case .connecting(let current) = self.connection, current == generation else { return .dispose(disposable) }
        self.connection = .connected(generation: generation, disposable)
        return .none
    }

    @inlinable mutating func upstreamSent(_ value: T, generation: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        let (work, dropped) = self.fanOut.publish(value, keeping: self.replayLimit)
        if work == nil && dropped == nil { return .none }
        return .deliver(work, dropping: dropped)
    }

    @inlinable mutating func upstreamEnded(_ event: Event, generation: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        let (work, sequence) = self.fanOut.end(event)
        self.endedThrough = sequence
        self.liveMembers = 0
        switch self.connectionPolicy {
        case .whileSubscribed:
            // The next subscriber connects again, from an empty replay.
            return self.letConnectionGo(delivering: work, departed: nil)
        case .stayConnected:
            var disposable: Disposable?
            if case .connected(_, let connection) = self.connection {
                disposable = connection
            }
            self.connection = .ended(event)
            return .disconnect(work, connection: disposable, dropping: .empty, departed: nil)
        }
    }

    /// Member `key` leaves. Under ``ShareConnection/whileSubscribed`` the last member that has not
    /// ended takes the connection with it.
    @inlinable mutating func leave(_ key: Int) -> Action {
        guard let member = self.fanOut.members.element(forKey: key) else { return .none }
        if self.fanOut.isLive(key, member, since: self.endedThrough) {
            self.liveMembers -= 1
        }
        let departure = self.fanOut.leave(key)
        self.membership += 1
        // The count against the scan it replaces, in debug builds, while the scan is cheap.
        assert(
            self.fanOut.members.entries.count > 64
                || (self.liveMembers > 0) == self.fanOut.hasLiveMembers(since: self.endedThrough),
            "share: \(self.liveMembers) members counted live, which the members do not say")
        if case .whileSubscribed = self.connectionPolicy, self.liveMembers == 0 {
            switch self.connection {
            case .connecting, .connected:
                return self.letConnectionGo(delivering: nil, departed: departure)
            case .idle, .ended:
                break
            }
        }
        return .release(departure)
    }

    /// `abandoned`: connection `generation` has been let go; `kept`: the share keeps the connection
    /// whoever listens (``ShareConnection/stayConnected``); `depends`: on these subscribers.
    @usableFromInline typealias ListenerCheck = FanOutListenerCheck<T, E>

    /// The first half of "does anyone still listen to connection `generation`?": the subscribers to
    /// look at, outside the lock, the first `limit` of them (the caller asks for more when every one of
    /// those has terminated: one that has not answers the question, and a loop asks at every step).
    @inlinable func listenerCheck(_ generation: UInt64, limit: Int = .max) -> ListenerCheck {
        guard self.isCurrent(generation) else { return .abandoned }
        if case .stayConnected = self.connectionPolicy { return .kept }
        let subscribers = self.liveMembers == 0 ? [] : self.fanOut.liveSubscribers(since: self.endedThrough, limit: limit)
        return .depends(on: subscribers, membership: self.membership)
    }

    /// The second half: every subscriber seen at `membership` has terminated, so connection
    /// `generation` goes, unless someone joined or left meanwhile.
    @inlinable mutating func abandon(_ generation: UInt64, membership: UInt64) -> Action {
        guard self.isCurrent(generation) else { return .none }
        guard membership == self.membership else { return .lookAgain }
        // Every member has terminated: none gets anything more.
        self.fanOut.endAllMembers()
        self.liveMembers = 0
        return self.letConnectionGo(delivering: nil, departed: nil)
    }

    @inlinable mutating func letConnectionGo(delivering work: FanOut.Work?, departed: FanOut.Departure?) -> Action {
        var disposable: Disposable?
        if case .connected(_, let connection) = self.connection {
            disposable = connection
        }
        self.connection = .idle
        return .disconnect(work, connection: disposable, dropping: self.fanOut.clearLog(), departed: departed)
    }

    @inlinable func isCurrent(_ generation: UInt64) -> Bool {
        switch self.connection {
        case .connecting(let current), .connected(let current, _):
            return current == generation
        case .idle, .ended:
            return false
        }
    }
}
