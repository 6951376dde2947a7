// The one fan-out engine: the state behind ``Promise``, ``ValuePromise``, ``ReplayingValuePipe``
// (through ``ReplayingFanOut``), ``share(replay:connection:)`` (through ``ShareStateMachine``) and
// ``Multicast`` (through `MulticastInstance`, with no replay). ``ValuePipe`` alone keeps its own member
// list and broadcast loop (`FanOutMembers.swift`, which this state uses too) and does not order its
// broadcasts: ordering them would make the threads that put into one pipe wait for a single deliverer
// (the scaling check's shared feed measures two producers at 0.88 of twice one), and its values need
// not be `Sendable`.
//
// The state is `Sendable` when its values and errors are. A multicast's need not be: they come from one
// source, whose events are serial, so each is delivered on the thread that sent it (see
// `MulticastInstance`).
//
// The state is a value its owner keeps under the owner's own lock, beside whatever else the owner
// decides in the same critical section (a promise's source, a share's connection). Its methods run
// under that lock and return what to do after unlocking; the delivery hosts at the end of this file
// reach it only through the owner's ``FanOutOwner/withFanOut(_:)``.

/// A hot source's subscribers, its replay log, and the order its events reach them in.
///
/// - **Order.** Every event gets a sequence number and goes through one ``SerialDelivery``: whichever
///   thread finds nobody delivering delivers it to a snapshot of the members, outside the lock, then
///   what others published meanwhile (handing the rest to a global Dispatch queue after 64 events
///   published by other threads). So every subscriber sees the events in the same order, and a
///   subscriber that publishes from its own callback gets its event after the current one.
/// - **Cursors.** Each member carries the sequence number of the last event it must not get from a
///   broadcast: the one published just before it joined. A broadcast skips members whose cursor is not
///   below its number, so a member never gets an event twice or one from before it joined.
/// - **Replay.** The log keeps the latest value or, for a longer replay, the last values. A
///   member that joins while the log holds values is *replaying*: the subscribing thread delivers the
///   log at once, then the events published meanwhile, which broadcasts post to that member's own
///   backlog instead of delivering them; when the backlog is empty the member joins the broadcasts,
///   in the same critical section. So a replay is never interleaved with live events.
/// - **Terminal events.** An error or completion is broadcast like a value, to the members that joined
///   before it. Their subscribers have ended, so later broadcasts (a share that reconnects, say) do not
///   reach them, and they stay members until they leave. The owner keeps the terminal event's sequence
///   number to tell them from the members that joined after it (``hasLiveMembers(since:)``).
@usableFromInline struct FanOutState<T, E> {
    @usableFromInline typealias Event = SignalEvent<T, E>

    /// A published event with its sequence number.
    @usableFromInline struct Broadcast {
        @usableFromInline let event: Event
        @usableFromInline let sequence: UInt64

        @inlinable init(event: Event, sequence: UInt64) {
            self.event = event
            self.sequence = sequence
        }
    }

    /// One broadcast taken off the queue, to run unlocked on a snapshot of the members (the snapshot
    /// owns them while it runs).
    @usableFromInline struct Work {
        @usableFromInline let event: Event
        @usableFromInline let sequence: UInt64
        @usableFromInline let members: OrderedSlots<FanOutMember>

        @inlinable init(event: Event, sequence: UInt64, members: OrderedSlots<FanOutMember>) {
            self.event = event
            self.sequence = sequence
            self.members = members
        }

        /// Delivers the event to each member that joined before it. Call outside every lock.
        @inlinable @inline(__always) func deliver() {
            switch self.event {
            case .Next(let value):
                self.members.broadcast(value, publishedAs: self.sequence, failing: E.self)
            case .Error, .Completion:
                for member in self.members where member.joinedAfter < self.sequence {
                    member.subscriber(of: T.self, failing: E.self).put(self.event)
                }
            }
        }
    }

    /// The values a replay delivers, oldest first: the log, and what a member that joins while it holds
    /// values gets first.
    ///
    /// One value is kept inline, so that a promise's log takes no storage of its own (a promise is
    /// counted in bytes per subscription).
    @usableFromInline enum Log {
        case empty
        case one(T)
        /// Two or more values. The array fills in order until it holds the replay's limit; from then on it
        /// is a ring, whose oldest value is at `oldest`, where the next value replaces it, so that keeping
        /// the last values costs the same at any limit (`Array.removeFirst` moved every value each time).
        /// `oldest` is 0 while the array fills. An `Int32`, which fits where the enum's tag leaves room:
        /// an `Int` made every promise 8 bytes larger (a ring of more than `Int32.max` values, 16 GiB of
        /// integers, falls back to moving them).
        case many([T], oldest: Int32)

        /// The latest value.
        @inlinable var latest: T? {
            switch self {
            case .empty:
                return nil
            case .one(let value):
                return value
            case .many(let values, let oldest):
                return values[(oldest == 0 ? values.count : Int(oldest)) - 1]
            }
        }

        /// The values, oldest first.
        @inlinable var values: [T] {
            switch self {
            case .empty:
                return []
            case .one(let value):
                return [value]
            case .many(let values, let oldest):
                return oldest == 0 ? values : Array(values[Int(oldest)...] + values[..<Int(oldest)])
            }
        }

        /// Delivers the values to `subscriber`, oldest first. Call outside every lock.
        @inlinable func replay(to subscriber: Subscriber<T, E>) {
            switch self {
            case .empty:
                break
            case .one(let value):
                subscriber.putNext(value)
            case .many(let values, let oldest):
                for value in values[Int(oldest)...] {
                    subscriber.putNext(value)
                }
                for value in values[..<Int(oldest)] {
                    subscriber.putNext(value)
                }
            }
        }

        /// Delivers the replay on the calling (subscribing) thread, then the member's backlog, after
        /// which the member joins the broadcasts. Call outside every lock.
        @inlinable func deliver<Owner: FanOutOwner>(
            to subscriber: Subscriber<T, E>, key: Int, of owner: Owner
        ) where Owner.Value == T, Owner.Failure == E {
            self.replay(to: subscriber)
            ReplayBacklogDelivery(owner: owner, key: key, subscriber: subscriber).deliverQueued()
        }
    }

    /// A member whose replay the subscribing thread has not finished delivering. Its ``FanOutMember``
    /// carries `joinedAfter == .max` meanwhile, so that broadcasts skip it.
    @usableFromInline struct Replaying {
        @usableFromInline let key: Int
        /// The member's cursor: the sequence number of the last broadcast it must not get, the one
        /// its replay stands for, then the last one posted to `backlog` (`.max` once a terminal event
        /// was posted).
        @usableFromInline var lastCovered: UInt64
        /// Events published since the member joined, in order, for the subscribing thread, which holds
        /// the deliverer's role from the start.
        @usableFromInline var backlog = SerialDelivery<Event>()

        @inlinable init(key: Int, lastCovered: UInt64) {
            self.key = key
            self.lastCovered = lastCovered
            self.backlog.claim()
        }
    }

    /// What leaves with a member, to be released after unlocking.
    @usableFromInline struct Departure {
        @usableFromInline let member: FanOutMember?
        @usableFromInline let replaying: Replaying?

        @inlinable init(member: FanOutMember?, replaying: Replaying?) {
            self.member = member
            self.replaying = replaying
        }
    }

    /// The values a new member gets first.
    @usableFromInline var log: Log
    @usableFromInline var members = OrderedSlots<FanOutMember>()
    @usableFromInline var sequence: UInt64 = 0
    @usableFromInline var delivery = SerialDelivery<Broadcast>()
    /// Members still receiving their replay; usually empty, which is all a broadcast checks.
    @usableFromInline var replaying: [Replaying] = []

    @inlinable init(value: T?) {
        self.log = value.map { .one($0) } ?? .empty
    }

    /// Adds `subscriber`. Returns its key and, if the log holds values, the replay the subscribing
    /// thread must deliver (``Log/deliver(to:key:of:)``) after unlocking.
    @inlinable mutating func join(_ subscriber: Subscriber<T, E>) -> (key: Int, replay: Log?) {
        if case .empty = self.log {
            return (self.members.add(FanOutMember(subscriber, joinedAfter: self.sequence)), nil)
        }
        let key = self.members.add(FanOutMember(subscriber, joinedAfter: .max))
        self.replaying.append(Replaying(key: key, lastCovered: self.sequence))
        return (key, self.log)
    }

    /// Removes the member `key`; what it returns is released after unlocking.
    @inlinable mutating func leave(_ key: Int) -> Departure {
        let member = self.members.remove(key)
        guard !self.replaying.isEmpty, let index = self.replaying.firstIndex(where: { $0.key == key }) else {
            return Departure(member: member, replaying: nil)
        }
        let replaying = self.replaying.remove(at: index)
        self.releaseReplayingIfEmpty()
        return Departure(member: member, replaying: replaying)
    }

    /// Logs `value`, keeping at most `limit` values (`0`: none; `Int.max`: all), and publishes it.
    /// Returns the work to deliver at once, if this thread is to deliver, and the value the log let go,
    /// both for after unlocking.
    @inlinable mutating func publish(_ value: T, keeping limit: Int) -> (work: Work?, dropped: T?) {
        var dropped: T?
        if limit == 1 {
            if case .one(let previous) = self.log { dropped = previous }
            self.log = .one(value)
        } else if limit > 1 {
            switch self.log {
            case .empty:
                self.log = .one(value)
            case .one(let previous):
                self.log = .many([previous, value], oldest: 0)
            case .many(var values, var oldest):
                // Emptied first, so that the array is not copied when it changes.
                self.log = .empty
                if values.count < limit {
                    values.append(value)
                } else if values.count <= Int32.max {
                    // Full: the oldest value leaves (released by the caller, after unlocking), the new
                    // one takes its place.
                    let index = Int(oldest)
                    dropped = values[index]
                    values[index] = value
                    oldest = index + 1 == values.count ? 0 : oldest + 1
                } else {
                    values.append(value)
                    dropped = values.removeFirst()
                }
                self.log = .many(values, oldest: oldest)
            }
        }
        return (self.submit(.Next(value)), dropped)
    }

    /// Publishes a terminal event to the current members (see the type's documentation). Returns the
    /// work to deliver at once, if this thread is to deliver, and the sequence number the event has:
    /// members whose cursor is below it are ending.
    @inlinable mutating func end(_ event: Event) -> (work: Work?, sequence: UInt64) {
        let work = self.submit(event)
        return (work, self.sequence)
    }

    @inlinable mutating func submit(_ event: Event) -> Work? {
        self.sequence += 1
        switch self.delivery.submit(Broadcast(event: event, sequence: self.sequence)) {
        case .deliverNow(let broadcast):
            return self.work(for: broadcast)
        case .queued, .refused:
            // Another thread is delivering; it takes this event from the queue in order. (The
            // delivery is never closed.)
            return nil
        }
    }

    /// Empties the log (an owner starting afresh); the values are released after unlocking.
    @inlinable mutating func clearLog() -> Log {
        let cleared = self.log
        self.log = .empty
        return cleared
    }

    /// The next broadcast for the thread delivering them.
    @inlinable mutating func nextWork(resuming: Bool) -> SerialDeliveryStep<Work> {
        return self.delivery.step(resuming: resuming).map { self.work(for: $0) }
    }

    /// The broadcast `broadcast` leaves the queue: the work that delivers it to the current members.
    @inlinable mutating func work(for broadcast: Broadcast) -> Work {
        if !self.replaying.isEmpty { self.backlog(broadcast) }
        // Copying the members only retains their storage; they are iterated after unlocking.
        return Work(event: broadcast.event, sequence: broadcast.sequence, members: self.members)
    }

    /// A broadcast is about to go to a snapshot of the members: posts it to the backlog of each
    /// replaying member that must get it.
    @inlinable mutating func backlog(_ broadcast: Broadcast) {
        let isTerminal = broadcast.event.isTerminal
        for index in self.replaying.indices where self.replaying[index].lastCovered < broadcast.sequence {
            _ = self.replaying[index].backlog.post(broadcast.event)
            self.replaying[index].lastCovered = isTerminal ? .max : broadcast.sequence
        }
    }

    /// Every member ends without a terminal event (an owner whose subscribers have all terminated):
    /// no later broadcast reaches them, and the replaying ones get nothing more in their backlogs.
    @usableFromInline mutating func endAllMembers() {
        for (key, member) in self.members.keyedElements {
            self.members.replace(key, with: member.ended())
        }
        for index in self.replaying.indices {
            self.replaying[index].lastCovered = .max
        }
    }

    /// The step of a replaying member's backlog: when it is empty, the member joins the broadcasts
    /// after the last one its backlog had, in this critical section.
    @inlinable mutating func nextReplay(
        key: Int, subscriber: Subscriber<T, E>, resuming: Bool
    ) -> SerialDeliveryStep<Event> {
        // The member left: nothing more to deliver.
        guard let index = self.replaying.firstIndex(where: { $0.key == key }) else { return .idle }
        let step = self.replaying[index].backlog.step(resuming: resuming)
        if case .idle = step {
            let finished = self.replaying.remove(at: index)
            self.releaseReplayingIfEmpty()
            self.members.replace(key, with: FanOutMember(subscriber, joinedAfter: finished.lastCovered))
        }
        return step
    }

    /// Whether member `key` has not ended: its cursor (for a replaying member, its backlog's) is below
    /// `.max` and at or after `endedThrough`, the sequence number of the owner's last terminal event.
    @inlinable func isLive(_ key: Int, _ member: FanOutMember, since endedThrough: UInt64) -> Bool {
        var cursor = member.joinedAfter
        if cursor == .max {
            cursor = self.replaying.first(where: { $0.key == key })?.lastCovered ?? .max
        }
        return cursor != .max && cursor >= endedThrough
    }

    /// Whether a member that has not ended (``isLive(_:_:since:)``) is left.
    @inlinable func hasLiveMembers(since endedThrough: UInt64) -> Bool {
        // Through the entries, not `keyedElements`: no list is built. A scan of every member: `share`
        // keeps a count instead (``ShareStateMachine/liveMembers``) and checks it against this in debug
        // builds.
        return self.members.entries.contains { entry in
            entry.element.map { self.isLive(entry.key, $0, since: endedThrough) } ?? false
        }
    }

    /// The subscribers of the members that have not ended (``isLive(_:_:since:)``), the first `limit`
    /// of them.
    @inlinable func liveSubscribers(since endedThrough: UInt64, limit: Int = .max) -> [Subscriber<T, E>] {
        // Asked whenever a loop inside a share's upstream asks whether anyone listens: no list of
        // entries is built on the way.
        var subscribers: [Subscriber<T, E>] = []
        for entry in self.members.entries {
            guard subscribers.count < limit else { break }
            guard let member = entry.element, self.isLive(entry.key, member, since: endedThrough) else { continue }
            subscribers.append(member.subscriber(of: T.self, failing: E.self))
        }
        return subscribers
    }

    /// Frees the list of replaying members once nobody replays: every subscriber of a promise replays
    /// when it joins, and a promise with one subscriber would otherwise keep the list's buffer (64
    /// bytes) for good. The list is empty, so freeing it runs no deinit of a user value.
    @inlinable mutating func releaseReplayingIfEmpty() {
        if self.replaying.isEmpty && self.replaying.capacity > 0 {
            self.replaying = []
        }
    }
}

extension FanOutState: Sendable where T: Sendable, E: Sendable {}
extension FanOutState.Broadcast: Sendable where T: Sendable, E: Sendable {}
extension FanOutState.Work: Sendable where T: Sendable, E: Sendable {}
extension FanOutState.Log: Sendable where T: Sendable, E: Sendable {}
extension FanOutState.Replaying: Sendable where T: Sendable, E: Sendable {}
extension FanOutState.Departure: Sendable where T: Sendable, E: Sendable {}

/// The owner of a ``FanOutState``: a type that keeps it under its lock and lends it to the delivery
/// hosts.
@usableFromInline protocol FanOutOwner: Sendable {
    associatedtype Value
    associatedtype Failure

    /// Runs `body` on the fan-out state, under the owner's lock.
    func withFanOut<R>(_ body: (inout FanOutState<Value, Failure>) -> R) -> R

    /// The next broadcast for the thread delivering them (``FanOutState/nextWork(resuming:)``, under
    /// the owner's lock); an owner that must act when its delivery goes idle implements it.
    func nextWork(resuming: Bool) -> SerialDeliveryStep<FanOutState<Value, Failure>.Work>
}

extension FanOutOwner {
    @inlinable func nextWork(resuming: Bool) -> SerialDeliveryStep<FanOutState<Value, Failure>.Work> {
        return self.withFanOut { $0.nextWork(resuming: resuming) }
    }
}

extension FanOutOwner {
    /// Delivers `work`, then what was published meanwhile. Call outside every lock.
    @inlinable func deliver(_ work: consuming FanOutState<Value, Failure>.Work) {
        FanOutDelivery(owner: self).deliverSerially(startingWith: work)
    }
}

/// The broadcasts of a ``FanOutState``, for ``SerialDeliveryHost``.
@usableFromInline struct FanOutDelivery<Owner: FanOutOwner>: SerialDeliveryHost {
    @usableFromInline let owner: Owner

    @inlinable init(owner: Owner) {
        self.owner = owner
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<FanOutState<Owner.Value, Owner.Failure>.Work> {
        return self.owner.nextWork(resuming: resuming)
    }

    @inlinable func deliver(_ work: FanOutState<Owner.Value, Owner.Failure>.Work) {
        work.deliver()
    }
}

/// A replaying member's backlog, for ``SerialDeliveryHost``.
@usableFromInline struct ReplayBacklogDelivery<Owner: FanOutOwner>: SerialDeliveryHost {
    @usableFromInline let owner: Owner
    @usableFromInline let key: Int
    @usableFromInline let subscriber: Subscriber<Owner.Value, Owner.Failure>

    @inlinable init(owner: Owner, key: Int, subscriber: Subscriber<Owner.Value, Owner.Failure>) {
        self.owner = owner
        self.key = key
        self.subscriber = subscriber
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<Owner.Value, Owner.Failure>> {
        return self.owner.withFanOut { $0.nextReplay(key: self.key, subscriber: self.subscriber, resuming: resuming) }
    }

    @inlinable func deliver(_ event: SignalEvent<Owner.Value, Owner.Failure>) {
        self.subscriber.put(event)
    }
}

/// The disposable of a subscription to the fan-out engine (a promise, a `ReplayingValuePipe`, a
/// `share`): disposing it leaves the fan-out.
///
/// Not generic: a subscription's disposable is called through the `Disposable` existential, and a
/// generic class's method reached that way runs this module's unspecialised code, which looked up the
/// fan-out state's types at each step (about 2,500 instructions a disposal). `leave` is made where the
/// owner's `get()` or `signal()` (or `share`) is specialised for the client's types, so the disposal
/// runs specialised code. It captures the one object that keeps the state: the promise, which a
/// subscription keeps alive (as the `ActionDisposable` this type replaced did), a `ReplayingValuePipe`'s
/// state, which does not keep the pipe alive, or a share's storage. A closure that captures one object
/// uses it as its context, so this is one object of 48 bytes, as the generic one it replaced was.
@usableFromInline final class FanOutMembership: Disposable {
    @usableFromInline let leave: @Sendable (Int) -> Void
    @usableFromInline let key: Int

    @inlinable init(key: Int, leave: @escaping @Sendable (Int) -> Void) {
        self.key = key
        self.leave = leave
    }

    /// Leaves the fan-out; a second call finds nothing to remove.
    @usableFromInline func dispose() {
        self.leave(self.key)
    }
}

/// The first half of "does anyone still listen?", asked by a loop inside the source's generator of a
/// fan-out's owner (`share`'s connection, a `Multicast` instance) at every step: its answer, under the
/// owner's lock (see ``allHaveEnded(check:abandon:)``).
@usableFromInline enum FanOutListenerCheck<T, E> {
    /// Nobody listens, for good.
    case abandoned
    /// Someone always listens (a share that stays connected).
    case kept
    /// Whether anyone listens depends on these subscribers, as of `membership` (a count of the joins
    /// and departures, to tell whether the members changed meanwhile).
    case depends(on: [Subscriber<T, E>], membership: UInt64)

    /// Whether every subscriber has ended. `check(limit)` looks under the owner's lock; its subscribers
    /// are asked outside it (`isTerminated` takes each one's own lock). A few first: usually the first
    /// has not ended, and that is the answer (the whole list at every step cost a share with 100,000
    /// subscribers 4 ms a step); when every one of those has ended, all of them. Then `abandon` ends the
    /// owner, or returns false when the members changed since `membership`, and the look starts again.
    @inlinable static func allHaveEnded(check: (_ limit: Int) -> Self, abandon: (_ membership: UInt64) -> Bool) -> Bool {
        var limit = 4
        while true {
            switch check(limit) {
            case .abandoned:
                return true
            case .kept:
                return false
            case .depends(let subscribers, let membership):
                guard subscribers.allSatisfy({ $0.isTerminated }) else { return false }
                if subscribers.count == limit && limit != .max {
                    limit = .max
                    continue
                }
                if abandon(membership) { return true }
            }
        }
    }
}
