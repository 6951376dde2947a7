import Testing

@testable import SwiftSignalKit

/// `share(replay:connection:)`'s state machine, event by event, without an upstream: who connects, what
/// a subscriber that joins late gets, which members' queues a broadcast fills, and what the end and the
/// last departure hand back.
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

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none:
            return "nothing"
        case .deliver(let members, let dropped):
            var parts: [String] = []
            if !members.isEmpty { parts.append("deliver \(members)") }
            if let dropped { parts.append("drop [\(dropped)]") }
            return parts.joined(separator: ", ")
        case .deliverReplay(let id):
            return "deliver the replay to \(id)"
        case .connect(let generation):
            return "connect \(generation)"
        case .disconnect(let members, let connection, let dropped, let departed):
            var parts = ["end"]
            if !members.isEmpty { parts.append("deliver \(members)") }
            if let connection { parts.append("disconnect \(connection)") }
            if !dropped.isEmpty { parts.append("drop \(dropped)") }
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

    /// Every event member `id` takes now, until its queue is empty.
    static func delivered(to id: Int, _ machine: inout Machine) -> [String] {
        var events: [String] = []
        while case .deliver(let (_, event)) = machine.nextDelivery(for: id, resuming: false) {
            switch event {
            case .Next(let value): events.append("\(value)")
            case .Error: events.append("error")
            case .Completion: events.append("completed")
            }
        }
        return events
    }

    /// A machine with subscribers joined, connected as generation 1, the subscribers' ids returned.
    static func connected(
        _ replay: ShareReplay, _ policy: ShareConnection = .whileSubscribed, members: Int,
        connection: Disposable = Connection("first")
    ) -> (Machine, [Int]) {
        var machine = Machine(replay: replay, connection: policy)
        var ids: [Int] = []
        for _ in 0..<members {
            ids.append(machine.join(Subscriber()).id)
        }
        #expect(describe(machine.connected(1, connection)) == "nothing")
        return (machine, ids)
    }

    @Test func theFirstSubscriberConnectsAndTheOthersShareTheConnection() {
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        let first = machine.join(Subscriber())
        #expect(Self.describe(first.action) == "connect 1")
        let second = machine.join(Subscriber())
        #expect(Self.describe(second.action) == "nothing", "a connection is being made")
        #expect(Self.describe(machine.connected(1, Connection("first"))) == "nothing")
        // A connection made for a generation that is no longer being made is handed back to dispose.
        let late = machine.connected(1, Connection("late"))
        #expect(Self.describe(late) == "dispose late")
        let third = machine.join(Subscriber())
        #expect(Self.describe(third.action) == "nothing", "a connection is live")
    }

    @Test func aValueGoesToEveryMemberInJoiningOrderThroughItsOwnQueue() {
        var (machine, ids) = Self.connected(.latest, members: 2)
        #expect(Self.describe(machine.upstreamSent(1, generation: 1)) == "deliver \(ids)")
        // The first member's queue is delivered; the second's deliverer has not taken its value yet.
        #expect(Self.delivered(to: ids[0], &machine) == ["1"])
        #expect(Self.describe(machine.upstreamSent(2, generation: 1)) == "deliver [\(ids[0])], drop [1]")
        #expect(Self.delivered(to: ids[0], &machine) == ["2"])
        #expect(Self.delivered(to: ids[1], &machine) == ["1", "2"])
    }

    /// A broadcast hands back the members whose queue it found idle (their deliverer is the caller), in
    /// joining order: all of them, usually, and then without building a list.
    @Test func aBroadcastDeliversTheMembersWhoseQueueWasIdle() {
        var (machine, ids) = Self.connected(.none, members: 3)
        #expect(Self.describe(machine.upstreamSent(1, generation: 1)) == "deliver \(ids), drop [1]")
        _ = Self.delivered(to: ids[0], &machine)
        _ = Self.delivered(to: ids[2], &machine)
        // Member 1 has not taken value 1 yet: its deliverer will take 2 after it.
        #expect(Self.describe(machine.upstreamSent(2, generation: 1)) == "deliver [\(ids[0]), \(ids[2])], drop [2]")
        _ = Self.delivered(to: ids[1], &machine)
        _ = Self.delivered(to: ids[2], &machine)
        #expect(Self.describe(machine.upstreamSent(3, generation: 1)) == "deliver [\(ids[1]), \(ids[2])], drop [3]")
        #expect(Self.delivered(to: ids[0], &machine) == ["2", "3"])
        _ = Self.delivered(to: ids[1], &machine)
        _ = Self.delivered(to: ids[2], &machine)
        // A member that left is not handed back, and the others still are, in order.
        _ = machine.leave(ids[1])
        #expect(Self.describe(machine.upstreamSent(4, generation: 1)) == "deliver [\(ids[0]), \(ids[2])], drop [4]")
        let late = machine.join(Subscriber())
        _ = Self.delivered(to: ids[0], &machine)
        _ = Self.delivered(to: ids[2], &machine)
        #expect(Self.describe(machine.upstreamSent(5, generation: 1)) == "deliver [\(ids[0]), \(ids[2]), \(late.id)], drop [5]")
    }

    @Test(arguments: [
        (ShareReplay.none, [String]()), (.latest, ["3"]), (.last(2), ["2", "3"]), (.all, ["1", "2", "3"]), (.last(0), []),
    ])
    func aLateSubscriberGetsTheReplayThenTheLiveValues(replay: ShareReplay, expected: [String]) {
        var (machine, ids) = Self.connected(replay, members: 1)
        for value in 1...3 {
            _ = machine.upstreamSent(value, generation: 1)
        }
        _ = Self.delivered(to: ids[0], &machine)
        let late = machine.join(Subscriber())
        #expect(Self.describe(late.action) == (expected.isEmpty ? "nothing" : "deliver the replay to \(late.id)"))
        _ = machine.upstreamSent(4, generation: 1)
        #expect(Self.delivered(to: late.id, &machine) == expected + ["4"])
    }

    @Test func valuesThatLeaveTheReplayAreHandedBackToRelease() {
        var (machine, _) = Self.connected(.last(2), members: 1)
        _ = machine.upstreamSent(1, generation: 1)
        _ = machine.upstreamSent(2, generation: 1)
        #expect(Self.describe(machine.upstreamSent(3, generation: 1)) == "drop [1]")
        // Nothing is kept: each value is handed back once the members' queues have it.
        var (none, ids) = Self.connected(.none, members: 1)
        #expect(Self.describe(none.upstreamSent(1, generation: 1)) == "deliver \(ids), drop [1]")
    }

    @Test func eventsOfAnotherConnectionAreIgnored() {
        var (machine, ids) = Self.connected(.all, members: 1)
        #expect(Self.describe(machine.upstreamSent(1, generation: 2)) == "nothing")
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 0)) == "nothing")
        #expect(Self.delivered(to: ids[0], &machine) == [])
        let late = machine.join(Subscriber())
        #expect(Self.describe(late.action) == "nothing", "nothing was kept for replay")
    }

    @Test func theEndUnderWhileSubscribedLetsTheConnectionGoAndTheNextSubscriberStartsAfresh() {
        var (machine, ids) = Self.connected(.all, members: 2)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(
            Self.describe(machine.upstreamEnded(.Error(TestError()), generation: 1)) == "end, disconnect first, drop [1]",
            "the members' queues wait for their deliverers, who take the error after 1")
        #expect(Self.delivered(to: ids[0], &machine) == ["1", "error"])
        #expect(Self.delivered(to: ids[1], &machine) == ["1", "error"])
        let next = machine.join(Subscriber())
        #expect(Self.describe(next.action) == "connect 2", "and no replay: it went with the connection")
        // Ended members take nothing of the new connection.
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        #expect(Self.describe(machine.upstreamSent(5, generation: 2)) == "deliver [\(next.id)]")
        #expect(Self.delivered(to: ids[0], &machine) == [])
    }

    @Test func theEndUnderStayConnectedIsReplayedToLateSubscribers() {
        var (machine, ids) = Self.connected(.latest, .stayConnected, members: 1)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 1)) == "end, disconnect first")
        #expect(Self.delivered(to: ids[0], &machine) == ["1", "completed"])
        let late = machine.join(Subscriber())
        #expect(
            Self.describe(late.action) == "deliver the replay to \(late.id)", "no connection: the share stays as it ended")
        #expect(Self.delivered(to: late.id, &machine) == ["1", "completed"])
        // Its departure, the last one, disconnects nothing.
        #expect(Self.describe(machine.leave(late.id)) == "release the member")
    }

    @Test func theLastSubscriberLeavingDisconnectsUnderWhileSubscribedOnly() {
        var (machine, ids) = Self.connected(.latest, members: 2)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(Self.describe(machine.leave(ids[0])) == "release the member")
        #expect(Self.describe(machine.leave(ids[1])) == "end, disconnect first, drop [1], release the member")
        #expect(Self.describe(machine.leave(ids[1])) == "nothing", "an unknown member")
        #expect(Self.describe(machine.join(Subscriber()).action) == "connect 2")

        var (kept, keptIDs) = Self.connected(.latest, .stayConnected, members: 1)
        #expect(Self.describe(kept.leave(keptIDs[0])) == "release the member")
    }

    @Test func membersThatEndedDoNotKeepTheNextConnection() {
        var (machine, ids) = Self.connected(.none, members: 1)
        #expect(
            Self.describe(machine.upstreamEnded(.Completion, generation: 1)) == "end, deliver \(ids), disconnect first",
            "an empty queue gets the completion: its deliverer is the caller")
        // The ended member has not left yet (its disposal is on its way) when another one joins.
        let next = machine.join(Subscriber())
        #expect(Self.describe(next.action) == "connect 2")
        #expect(Self.describe(machine.connected(2, Connection("second"))) == "nothing")
        #expect(Self.describe(machine.leave(next.id)) == "end, disconnect second, release the member")
        #expect(Self.describe(machine.leave(ids[0])) == "release the member")
    }

    @Test func leavingWhileTheConnectionIsBeingMadeLetsItGo() {
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        let only = machine.join(Subscriber())
        #expect(
            Self.describe(machine.leave(only.id)) == "end, release the member",
            "the connection is let go before it arrives")
        // The connection arrives for a generation that was let go: it is handed back to dispose.
        #expect(Self.describe(machine.connected(1, Connection("first"))) == "dispose first")
    }

    @Test func aDepartedMembersQueueIsNotDelivered() {
        var (machine, ids) = Self.connected(.none, members: 3)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(Self.describe(machine.leave(ids[1])) == "release the member")
        #expect(Self.delivered(to: ids[1], &machine) == [])
        // The members around it are still found.
        #expect(Self.delivered(to: ids[0], &machine) == ["1"])
        #expect(Self.delivered(to: ids[2], &machine) == ["1"])
    }

    @Test func theListenerCheckAbandonsTheConnectionOnlyIfNobodyJoinedOrLeftMeanwhile() {
        var (machine, _) = Self.connected(.latest, members: 1)
        _ = machine.upstreamSent(1, generation: 1)
        guard case .depends(let subscribers, let membership) = machine.listenerCheck(1) else {
            Issue.record("expected the check to depend on the subscribers")
            return
        }
        #expect(subscribers.count == 1)
        let joined = machine.join(Subscriber())
        #expect(Self.describe(machine.abandon(1, membership: membership)) == "look again", "someone joined")
        guard case .depends(let now, let current) = machine.listenerCheck(1) else {
            Issue.record("expected the check to depend on the subscribers")
            return
        }
        #expect(now.count == 2)
        let abandoned = machine.abandon(1, membership: current)
        #expect(Self.describe(abandoned) == "end, disconnect first, drop [1]")
        if case .abandoned = machine.listenerCheck(1) {} else { Issue.record("a let-go connection stays let go") }
        #expect(Self.describe(machine.leave(joined.id)) == "release the member")

        var (kept, _) = Self.connected(.none, .stayConnected, members: 1)
        if case .kept = kept.listenerCheck(1) {} else { Issue.record("stayConnected keeps its connection") }
        #expect(Self.describe(kept.abandon(2, membership: 0)) == "nothing", "another connection's check")
    }
}
