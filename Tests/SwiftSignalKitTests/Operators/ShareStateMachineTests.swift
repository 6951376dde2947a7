import Testing

@testable import SwiftSignalKit

/// `share(replay:connection:)`'s state machine, event by event, without an upstream: who connects, what
/// a subscriber that joins late gets, what a broadcast delivers to whom, and what the end and the last
/// departure hand back. The machine runs on the fan-out engine; the tests carry out its actions the way
/// `ShareStorage` does, on one thread, and read what each subscriber got.
@Suite struct ShareStateMachineTests {
    typealias Machine = ShareStateMachine<Int, TestError>

    struct TestError: Error, Equatable {}

    /// A disposable that says which connection it stands for.
    final class Connection: Disposable, CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        func dispose() {}
        var description: String { self.name }
    }

    typealias Log = EventLog<TestError>

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none:
            return "nothing"
        case .deliver(let work, let dropped):
            var parts: [String] = []
            if work != nil { parts.append("deliver") }
            if let dropped { parts.append("drop [\(dropped)]") }
            return parts.joined(separator: ", ")
        case .replay(let replay, let key, _):
            return "replay \(replay.values) to \(key)"
        case .replayEnded(let log, let event, _):
            return "replay \(log.values) and \(event.isTerminal ? "the end" : "?")"
        case .connect(let generation, _):
            return "connect \(generation)"
        case .joined:
            return "joined"
        case .disconnect(let work, let connection, let dropped, let departed):
            var parts = ["end"]
            if work != nil { parts.append("deliver") }
            if let connection { parts.append("disconnect \(connection)") }
            if !dropped.values.isEmpty { parts.append("drop \(dropped.values)") }
            if departed != nil { parts.append("release the member") }
            return parts.joined(separator: ", ")
        case .release:
            return "release the member"
        case .dispose(let connection):
            return "dispose \(connection)"
        case .lookAgain:
            return "look again"
        }
    }

    /// Carries out `action` as the storage would, delivering on this thread what it says to deliver
    /// (and what was queued meanwhile), and returns its description.
    @discardableResult
    static func perform(_ action: Machine.Action, _ machine: inout Machine) -> String {
        let description = Self.describe(action)
        switch action {
        case .deliver(let work?, _), .disconnect(let work?, _, _, _):
            Self.deliver(work, &machine)
        case .replay(let replay, let key, let subscriber):
            replay.replay(to: subscriber)
            while case .deliver(let event) = machine.fanOut.nextReplay(key: key, subscriber: subscriber, resuming: false) {
                subscriber.put(event)
            }
        case .replayEnded(let log, let event, let subscriber):
            log.replay(to: subscriber)
            subscriber.put(event)
        default:
            break
        }
        return description
    }

    static func deliver(_ work: FanOutState<Int, TestError>.Work, _ machine: inout Machine) {
        work.deliver()
        while case .deliver(let next) = machine.fanOut.nextWork(resuming: false) {
            next.deliver()
        }
    }

    /// Sends `value` on connection 1 and returns the work its sender is to deliver; the test holds it,
    /// so that what follows happens while the value is being delivered.
    static func inFlight(_ value: Int, _ machine: inout Machine) -> FanOutState<Int, TestError>.Work? {
        guard case .deliver(let work?, _) = machine.upstreamSent(value, generation: 1) else { return nil }
        return work
    }

    /// The subscribers the listener check of connection `generation` depends on, and the membership.
    static func listeners(_ machine: Machine, _ generation: UInt64) -> ([Subscriber<Int, TestError>], UInt64)? {
        guard case .depends(let subscribers, let membership) = machine.listenerCheck(generation) else { return nil }
        return (subscribers, membership)
    }

    /// A machine with subscribers joined, connected as generation 1, and the subscribers' keys.
    static func connected(
        _ replay: ShareReplay, _ names: [String], _ policy: ShareConnection = .whileSubscribed, log: Log,
        connection: Disposable = Connection("first")
    ) -> (Machine, [Int]) {
        var machine = Machine(replay: replay, connection: policy)
        var keys: [Int] = []
        for name in names {
            let action = machine.join(log.subscriber(name))
            let key = action.joinedKey
            keys.append(key!)
            Self.perform(action, &machine)
        }
        #expect(describe(machine.connected(1, connection)) == "nothing")
        return (machine, keys)
    }

    @Test func theFirstSubscriberConnectsAndTheOthersShareTheConnection() {
        let log = Log()
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        #expect(Self.describe(machine.join(log.subscriber("a"))) == "connect 1")
        #expect(Self.describe(machine.join(log.subscriber("b"))) == "joined", "a connection is being made")
        #expect(Self.describe(machine.connected(1, Connection("first"))) == "nothing")
        // A connection made for a generation that is no longer being made is handed back to dispose.
        #expect(Self.describe(machine.connected(1, Connection("late"))) == "dispose late")
        #expect(Self.describe(machine.join(log.subscriber("c"))) == "joined", "a connection is live")
    }

    @Test func aValueGoesToEveryMemberInJoiningOrder() {
        let log = Log()
        var (machine, _) = Self.connected(.latest, ["a", "b"], log: log)
        #expect(Self.perform(machine.upstreamSent(1, generation: 1), &machine) == "deliver")
        #expect(log.take() == ["a:1", "b:1"])
        #expect(Self.perform(machine.upstreamSent(2, generation: 1), &machine) == "deliver, drop [1]")
        #expect(log.take() == ["a:2", "b:2"])
    }

    /// While a thread delivers, later values wait in the one queue, in order, for that thread: a value
    /// sent meanwhile is not delivered by its sender.
    @Test func aValueSentWhileAnotherIsDeliveredWaitsForTheDeliverer() throws {
        let log = Log()
        var (machine, _) = Self.connected(.none, ["a", "b"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        #expect(Self.describe(machine.upstreamSent(2, generation: 1)) == "nothing", "the deliverer takes it")
        #expect(Self.describe(machine.upstreamSent(3, generation: 1)) == "nothing")
        Self.deliver(first, &machine)
        #expect(log.take() == ["a:1", "b:1", "a:2", "b:2", "a:3", "b:3"])
    }

    @Test(arguments: [
        (ShareReplay.none, [String]()), (.latest, ["late:3"]), (.last(2), ["late:2", "late:3"]),
        (.all, ["late:1", "late:2", "late:3"]), (.last(0), []),
    ])
    func aLateSubscriberGetsTheReplayThenTheLiveValues(replay: ShareReplay, expected: [String]) {
        let log = Log()
        var (machine, _) = Self.connected(replay, ["a"], log: log)
        for value in 1...3 {
            Self.perform(machine.upstreamSent(value, generation: 1), &machine)
        }
        _ = log.take()
        let action = machine.join(log.subscriber("late"))
        let key = action.joinedKey
        #expect(Self.describe(action).hasPrefix(expected.isEmpty ? "joined" : "replay"))
        Self.perform(action, &machine)
        Self.perform(machine.upstreamSent(4, generation: 1), &machine)
        #expect(log.take() == expected + ["a:4", "late:4"], "member \(key!)")
    }

    /// A subscriber that joins while another thread delivers gets its replay, then the values sent
    /// after it joined from its backlog, then joins the broadcasts: no gap, and no duplicate of the
    /// replayed value, even while that value still waits in the queue.
    @Test func aSubscriberJoiningDuringADeliveryGetsTheValuesSentMeanwhileAfterItsReplay() throws {
        let log = Log()
        var (machine, _) = Self.connected(.latest, ["a"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        #expect(Self.describe(machine.upstreamSent(2, generation: 1)) == "drop [1]", "2 waits in the queue")
        // `late` joins while 2 waits: its replay is 2, and it must not get 2 again from the queue.
        let join = machine.join(log.subscriber("late"))
        #expect(Self.describe(join) == "replay [2] to 1")
        _ = machine.upstreamSent(3, generation: 1)
        // The deliverer empties the queue before the subscribing thread delivers the replay.
        Self.deliver(first, &machine)
        Self.perform(join, &machine)
        Self.perform(machine.upstreamSent(4, generation: 1), &machine)
        #expect(log.take() == ["a:1", "a:2", "a:3", "late:2", "late:3", "a:4", "late:4"])
    }

    /// A subscriber still receiving its replay when the end reaches its backlog has ended too: it is not
    /// a listener of the next connection.
    @Test func aMemberThatGotTheEndInItsBacklogIsNotAListenerOfTheNextConnection() throws {
        let log = Log()
        var (machine, _) = Self.connected(.latest, ["a"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        let join = machine.join(log.subscriber("late"))
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 1)) == "end, disconnect first, drop [1]")
        // The deliverer posts the end to `late`'s backlog before `late` has its replay.
        Self.deliver(first, &machine)
        let next = machine.join(log.subscriber("next"))
        #expect(Self.describe(next) == "connect 2")
        _ = machine.connected(2, Connection("second"))
        let (subscribers, _) = try #require(Self.listeners(machine, 2), "the check depends on the subscribers")
        #expect(subscribers.count == 1, "only the member that joined after the end")
        Self.perform(join, &machine)
        #expect(log.take() == ["a:1", "a:completed", "late:1", "late:completed"])
    }

    /// Members abandoned by the listener check (every one had terminated) do not keep the next
    /// connection when they have not left yet.
    @Test func abandonedMembersDoNotKeepTheNextConnection() throws {
        let log = Log()
        var (machine, _) = Self.connected(.none, ["a"], log: log)
        let (_, membership) = try #require(Self.listeners(machine, 1), "the check depends on the subscribers")
        #expect(Self.describe(machine.abandon(1, membership: membership)) == "end, disconnect first")
        let next = machine.join(log.subscriber("next"))
        let nextKey = next.joinedKey
        #expect(Self.describe(next) == "connect 2")
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        #expect(Self.describe(machine.leave(nextKey!)) == "end, disconnect second, release the member")
    }

    @Test func valuesThatLeaveTheReplayAreHandedBackToRelease() {
        let log = Log()
        var (machine, _) = Self.connected(.last(2), ["a"], log: log)
        Self.perform(machine.upstreamSent(1, generation: 1), &machine)
        Self.perform(machine.upstreamSent(2, generation: 1), &machine)
        #expect(Self.describe(machine.upstreamSent(3, generation: 1)) == "deliver, drop [1]")
        // Nothing is kept without a replay, so nothing is dropped: the value goes with the broadcast.
        var (none, _) = Self.connected(.none, ["b"], log: log)
        #expect(Self.describe(none.upstreamSent(1, generation: 1)) == "deliver")
    }

    @Test func eventsOfAnotherConnectionAreIgnored() {
        let log = Log()
        var (machine, _) = Self.connected(.all, ["a"], log: log)
        #expect(Self.describe(machine.upstreamSent(1, generation: 2)) == "nothing")
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 0)) == "nothing")
        #expect(log.take() == [])
        #expect(Self.describe(machine.join(log.subscriber("late"))) == "joined", "nothing was kept for replay")
    }

    @Test func theEndUnderWhileSubscribedLetsTheConnectionGoAndTheNextSubscriberStartsAfresh() {
        let log = Log()
        var (machine, _) = Self.connected(.all, ["a", "b"], log: log)
        Self.perform(machine.upstreamSent(1, generation: 1), &machine)
        #expect(
            Self.perform(machine.upstreamEnded(.Error(TestError()), generation: 1), &machine)
                == "end, deliver, disconnect first, drop [1]")
        #expect(log.take() == ["a:1", "b:1", "a:error", "b:error"])
        let next = machine.join(log.subscriber("next"))
        #expect(Self.describe(next) == "connect 2", "and no replay: it went with the connection")
        // Ended members take nothing of the new connection.
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        Self.perform(machine.upstreamSent(5, generation: 2), &machine)
        #expect(log.take() == ["next:5"])
    }

    /// An end sent while another thread delivers reaches the members that joined before it, after the
    /// values before it, even when the next connection's first subscriber joins before it is delivered.
    @Test func anEndWaitingForTheDelivererReachesOnlyTheMembersBeforeIt() throws {
        let log = Log()
        var (machine, _) = Self.connected(.none, ["a"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 1)) == "end, disconnect first")
        let next = machine.join(log.subscriber("next"))
        let nextKey = next.joinedKey
        #expect(Self.describe(next) == "connect 2")
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        _ = machine.upstreamSent(2, generation: 2)
        Self.deliver(first, &machine)
        #expect(log.take() == ["a:1", "a:completed", "next:2"])
        // The new member is the one that keeps the new connection.
        #expect(Self.describe(machine.leave(nextKey!)) == "end, disconnect second, release the member")
    }

    @Test func theEndUnderStayConnectedIsReplayedToLateSubscribers() {
        let log = Log()
        var (machine, keys) = Self.connected(.latest, ["a"], .stayConnected, log: log)
        Self.perform(machine.upstreamSent(1, generation: 1), &machine)
        #expect(Self.perform(machine.upstreamEnded(.Completion, generation: 1), &machine) == "end, deliver, disconnect first")
        #expect(log.take() == ["a:1", "a:completed"])
        let late = machine.join(log.subscriber("late"))
        let lateKey = late.joinedKey
        #expect(Self.perform(late, &machine) == "replay [1] and the end", "no connection: the share stays as it ended")
        #expect(lateKey == nil, "it does not join")
        #expect(log.take() == ["late:1", "late:completed"])
        // The last departure disconnects nothing.
        #expect(Self.describe(machine.leave(keys[0])) == "release the member")
    }

    @Test func theLastSubscriberLeavingDisconnectsUnderWhileSubscribedOnly() {
        let log = Log()
        var (machine, keys) = Self.connected(.latest, ["a", "b"], log: log)
        Self.perform(machine.upstreamSent(1, generation: 1), &machine)
        #expect(Self.describe(machine.leave(keys[0])) == "release the member")
        #expect(Self.describe(machine.leave(keys[1])) == "end, disconnect first, drop [1], release the member")
        #expect(Self.describe(machine.leave(keys[1])) == "nothing", "an unknown member")
        #expect(Self.describe(machine.join(log.subscriber("c"))) == "connect 2")

        var (kept, keptKeys) = Self.connected(.latest, ["d"], .stayConnected, log: log)
        #expect(Self.describe(kept.leave(keptKeys[0])) == "release the member")
    }

    @Test func membersThatEndedDoNotKeepTheNextConnection() {
        let log = Log()
        var (machine, keys) = Self.connected(.none, ["a"], log: log)
        #expect(Self.perform(machine.upstreamEnded(.Completion, generation: 1), &machine) == "end, deliver, disconnect first")
        // The ended member has not left yet (its disposal is on its way) when another one joins.
        let next = machine.join(log.subscriber("next"))
        let nextKey = next.joinedKey
        #expect(Self.describe(next) == "connect 2")
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        #expect(Self.describe(machine.leave(nextKey!)) == "end, disconnect second, release the member")
        #expect(Self.describe(machine.leave(keys[0])) == "release the member")
    }

    @Test func leavingWhileTheConnectionIsBeingMadeLetsItGo() {
        let log = Log()
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        let key = machine.join(log.subscriber("a")).joinedKey
        #expect(Self.describe(machine.leave(key!)) == "end, release the member", "the connection is let go before it arrives")
        // The connection arrives for a generation that was let go: it is handed back to dispose.
        #expect(Self.describe(machine.connected(1, Connection("first"))) == "dispose first")
    }

    @Test func aMemberThatLeftDuringADeliveryGetsNothingMore() throws {
        let log = Log()
        var (machine, keys) = Self.connected(.none, ["a", "b", "c"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        _ = machine.upstreamSent(2, generation: 1)
        #expect(Self.describe(machine.leave(keys[1])) == "release the member")
        Self.deliver(first, &machine)
        // The first value's snapshot had `b`; the second, taken after it left, does not.
        #expect(log.take() == ["a:1", "b:1", "c:1", "a:2", "c:2"])
    }

    @Test func theListenerCheckAbandonsTheConnectionOnlyIfNobodyJoinedOrLeftMeanwhile() throws {
        let log = Log()
        var (machine, _) = Self.connected(.latest, ["a"], log: log)
        Self.perform(machine.upstreamSent(1, generation: 1), &machine)
        let (subscribers, membership) = try #require(Self.listeners(machine, 1), "the check depends on the subscribers")
        #expect(subscribers.count == 1)
        let joined = machine.join(log.subscriber("b"))
        let joinedKey = joined.joinedKey
        Self.perform(joined, &machine)
        #expect(Self.describe(machine.abandon(1, membership: membership)) == "look again", "someone joined")
        let (now, current) = try #require(Self.listeners(machine, 1), "the check depends on the subscribers")
        #expect(now.count == 2)
        #expect(Self.describe(machine.abandon(1, membership: current)) == "end, disconnect first, drop [1]")
        if case .abandoned = machine.listenerCheck(1) {} else { Issue.record("a let-go connection stays let go") }
        #expect(Self.describe(machine.leave(joinedKey!)) == "release the member")

        var (kept, _) = Self.connected(.none, ["c"], .stayConnected, log: log)
        if case .kept = kept.listenerCheck(1) {} else { Issue.record("stayConnected keeps its connection") }
        #expect(Self.describe(kept.abandon(2, membership: 0)) == "nothing", "another connection's check")
    }

    /// The members of a connection that ended are not listeners of the next one, even while the end
    /// waits for another thread to deliver it.
    @Test func theListenerCheckCountsOnlyTheMembersOfTheCurrentConnection() throws {
        let log = Log()
        var (machine, _) = Self.connected(.none, ["a"], log: log)
        let first = try #require(Self.inFlight(1, &machine), "the value is delivered by its sender")
        _ = machine.upstreamEnded(.Completion, generation: 1)
        let next = machine.join(log.subscriber("next"))
        #expect(Self.describe(next) == "connect 2")
        _ = machine.connected(2, Connection("second"))
        let (subscribers, _) = try #require(Self.listeners(machine, 2), "the check depends on the subscribers")
        #expect(subscribers.count == 1, "only the member that joined after the end")
        Self.deliver(first, &machine)
    }

    /// The listener check hands out the first `limit` live subscribers (the storage looks at a few
    /// first, then at all of them if those have all terminated), and none when no member is live.
    @Test func theListenerCheckHandsOutTheFirstLiveSubscribersUpToALimit() throws {
        let log = Log()
        var (machine, _) = Self.connected(.none, ["a", "b", "c", "d", "e"], log: log)
        guard case .depends(let few, _) = machine.listenerCheck(1, limit: 2) else { throw Failure() }
        #expect(few.count == 2)
        let (all, _) = try #require(Self.listeners(machine, 1))
        #expect(all.count == 5)
        #expect(few.map(ObjectIdentifier.init) == all.prefix(2).map(ObjectIdentifier.init), "the first ones, in order")
        _ = machine.abandon(1, membership: machine.membership)
        let join = machine.join(log.subscriber("f"))
        #expect(Self.describe(join) == "connect 2")
        #expect(machine.liveMembers == 1)
        guard case .depends(let after, _) = machine.listenerCheck(2, limit: 2) else { throw Failure() }
        #expect(after.count == 1, "only the member that joined after the abandon")
    }

    struct Failure: Error {}

    /// How many members have not ended, counted from the members themselves.
    static func liveMembers(_ machine: Machine) -> Int {
        return machine.fanOut.members.keyedElements.filter { machine.fanOut.isLive($0.key, $0.element, since: machine.endedThrough) }.count
    }

    /// The count a departure reads instead of scanning the members (which made subscribers that leave
    /// oldest first cost quadratic time) stays equal to the members' own state through joins, replays
    /// held back and carried out, deliveries held by a sender, leaves, ends, reconnections and
    /// abandons, in random orders.
    @Test(arguments: 0..<20)
    func theCountOfLiveMembersFollowsTheMembers(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let log = Log()
        var machine = Machine(replay: .latest, connection: .whileSubscribed)
        var keys: [Int] = []
        var heldReplays: [Machine.Action] = []
        var heldWork: [FanOutState<Int, TestError>.Work] = []
        var pendingConnection: UInt64?
        for step in 0..<400 {
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                let action = machine.join(log.subscriber("s\(step)"))
                let key = action.joinedKey
                if let key { keys.append(key) }
                switch action {
                case .connect(let generation, _):
                    pendingConnection = generation
                case .replay where Bool.random(using: &random):
                    heldReplays.append(action)
                default:
                    Self.perform(action, &machine)
                }
            case 2:
                if let generation = pendingConnection {
                    pendingConnection = nil
                    Self.perform(machine.connected(generation, Connection("c\(generation)")), &machine)
                }
            case 3:
                if !heldReplays.isEmpty {
                    Self.perform(heldReplays.remove(at: Int.random(in: 0..<heldReplays.count, using: &random)), &machine)
                }
            case 4:
                if !keys.isEmpty {
                    Self.perform(machine.leave(keys.remove(at: Int.random(in: 0..<keys.count, using: &random))), &machine)
                }
            case 5:
                let action = machine.upstreamSent(step, generation: machine.generation)
                if case .deliver(let work?, _) = action, Bool.random(using: &random) {
                    heldWork.append(work)
                } else {
                    Self.perform(action, &machine)
                }
            case 6:
                if let work = heldWork.first {
                    heldWork.removeFirst()
                    Self.deliver(work, &machine)
                } else if Int.random(in: 0..<4, using: &random) == 0 {
                    Self.perform(machine.upstreamEnded(.Completion, generation: machine.generation), &machine)
                }
            default:
                if Int.random(in: 0..<4, using: &random) == 0, let (_, membership) = Self.listeners(machine, machine.generation) {
                    Self.perform(machine.abandon(machine.generation, membership: membership), &machine)
                }
            }
            #expect(machine.liveMembers == Self.liveMembers(machine), "step \(step)")
        }
    }
}
