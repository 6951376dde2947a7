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

    static func describe(_ action: Machine.BroadcastAction) -> String {
        var parts: [String] = []
        if !action.deliver.isEmpty { parts.append("deliver \(action.deliver)") }
        if let disconnect = action.disconnect { parts.append("disconnect \(disconnect)") }
        if !action.dropped.isEmpty { parts.append("drop \(action.dropped)") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
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
        #expect(machine.connected(1, connection) == nil)
        return (machine, ids)
    }

    @Test func theFirstSubscriberConnectsAndTheOthersShareTheConnection() {
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        let first = machine.join(Subscriber())
        #expect(first.connect == 1)
        #expect(!first.deliver)
        let second = machine.join(Subscriber())
        #expect(second.connect == nil, "a connection is being made")
        #expect(machine.connected(1, Connection("first")) == nil)
        // A connection made for a generation that is no longer being made is handed back to dispose.
        let late = machine.connected(1, Connection("late"))
        #expect(late.map { "\($0)" } == "late")
        let third = machine.join(Subscriber())
        #expect(third.connect == nil, "a connection is live")
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
        #expect(late.deliver == !expected.isEmpty)
        #expect(late.connect == nil)
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
        #expect(!late.deliver, "nothing was kept for replay")
    }

    @Test func theEndUnderWhileSubscribedLetsTheConnectionGoAndTheNextSubscriberStartsAfresh() {
        var (machine, ids) = Self.connected(.all, members: 2)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(
            Self.describe(machine.upstreamEnded(.Error(TestError()), generation: 1)) == "disconnect first, drop [1]")
        #expect(Self.delivered(to: ids[0], &machine) == ["1", "error"])
        #expect(Self.delivered(to: ids[1], &machine) == ["1", "error"])
        let next = machine.join(Subscriber())
        #expect(next.connect == 2)
        #expect(!next.deliver, "the replay went with the connection")
        // Ended members take nothing of the new connection.
        #expect(machine.connected(2, Connection("second")) == nil)
        #expect(Self.describe(machine.upstreamSent(5, generation: 2)) == "deliver [\(next.id)]")
        #expect(Self.delivered(to: ids[0], &machine) == [])
    }

    @Test func theEndUnderStayConnectedIsReplayedToLateSubscribers() {
        var (machine, ids) = Self.connected(.latest, .stayConnected, members: 1)
        _ = machine.upstreamSent(1, generation: 1)
        #expect(Self.describe(machine.upstreamEnded(.Completion, generation: 1)) == "disconnect first")
        #expect(Self.delivered(to: ids[0], &machine) == ["1", "completed"])
        let late = machine.join(Subscriber())
        #expect(late.connect == nil, "the share stays as it ended")
        #expect(late.deliver)
        #expect(Self.delivered(to: late.id, &machine) == ["1", "completed"])
        // Its departure, the last one, disconnects nothing.
        #expect(Self.describe(machine.leave(late.id).action) == "nothing")
    }

    @Test func theLastSubscriberLeavingDisconnectsUnderWhileSubscribedOnly() {
        var (machine, ids) = Self.connected(.latest, members: 2)
        _ = machine.upstreamSent(1, generation: 1)
        let first = machine.leave(ids[0])
        #expect(first.removed != nil)
        #expect(Self.describe(first.action) == "nothing")
        #expect(Self.describe(machine.leave(ids[1]).action) == "disconnect first, drop [1]")
        let unknown = machine.leave(ids[1])
        #expect(unknown.removed == nil)
        #expect(Self.describe(unknown.action) == "nothing")
        #expect(machine.join(Subscriber()).connect == 2)

        var (kept, keptIDs) = Self.connected(.latest, .stayConnected, members: 1)
        #expect(Self.describe(kept.leave(keptIDs[0]).action) == "nothing")
    }

    @Test func membersThatEndedDoNotKeepTheNextConnection() {
        var (machine, ids) = Self.connected(.none, members: 1)
        _ = machine.upstreamEnded(.Completion, generation: 1)
        // The ended member has not left yet (its disposal is on its way) when another one joins.
        let next = machine.join(Subscriber())
        #expect(next.connect == 2)
        #expect(machine.connected(2, Connection("second")) == nil)
        #expect(Self.describe(machine.leave(next.id).action) == "disconnect second")
        #expect(Self.describe(machine.leave(ids[0]).action) == "nothing")
    }

    @Test func leavingWhileTheConnectionIsBeingMadeLetsItGo() {
        var machine = Machine(replay: .none, connection: .whileSubscribed)
        let only = machine.join(Subscriber())
        #expect(Self.describe(machine.leave(only.id).action) == "nothing")
        // The connection arrives for a generation that was let go: it is handed back to dispose.
        #expect(machine.connected(1, Connection("first")).map { "\($0)" } == "first")
    }

    @Test func aDepartedMembersQueueIsNotDelivered() {
        var (machine, ids) = Self.connected(.none, members: 3)
        _ = machine.upstreamSent(1, generation: 1)
        let removed = machine.leave(ids[1])
        #expect(removed.removed != nil)
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
        #expect(machine.abandon(1, membership: membership) == nil, "someone joined: look again")
        guard case .depends(let now, let current) = machine.listenerCheck(1) else {
            Issue.record("expected the check to depend on the subscribers")
            return
        }
        #expect(now.count == 2)
        let abandoned = machine.abandon(1, membership: current)
        #expect(abandoned.map(Self.describe) == "disconnect first, drop [1]")
        if case .abandoned = machine.listenerCheck(1) {} else { Issue.record("a let-go connection stays let go") }
        #expect(Self.describe(machine.leave(joined.id).action) == "nothing")

        var (kept, _) = Self.connected(.none, .stayConnected, members: 1)
        if case .kept = kept.listenerCheck(1) {} else { Issue.record("stayConnected keeps its connection") }
        #expect(kept.abandon(2, membership: 0).map(Self.describe) == "nothing", "another connection's check")
    }
}
