import Testing

@testable import SwiftSignalKit

/// The fan-out engine (`FanOutState`), event by event on one thread: what the log keeps and drops, who
/// a broadcast reaches, what a replaying member gets from its backlog, and which members count as
/// live after a terminal event. `ShareStateMachineTests` and the promise tests cover its owners.
@Suite struct FanOutStateTests {
    typealias State = FanOutState<Int, TestError>

    struct TestError: Error {}

    typealias Log = EventLog<TestError>

    /// Delivers `work`, then the queue, as the thread that took the deliverer's role does.
    static func deliver(_ work: State.Work?, _ state: inout State) {
        guard let work else { return }
        work.deliver()
        while case .deliver(let next) = state.nextWork(resuming: false) {
            next.deliver()
        }
    }

    /// Delivers a joining member's replay and backlog, as the subscribing thread does.
    static func replay(_ replay: State.Log?, key: Int, to subscriber: Subscriber<Int, TestError>, _ state: inout State) {
        guard let replay else { return }
        replay.replay(to: subscriber)
        while case .deliver(let event) = state.nextReplay(key: key, subscriber: subscriber, resuming: false) {
            subscriber.put(event)
        }
    }

    @Test(arguments: [
        (0, [Int](), [Int?](repeating: nil, count: 4)), (1, [4], [nil, 1, 2, 3]), (2, [3, 4], [nil, nil, 1, 2]),
        (3, [2, 3, 4], [nil, nil, nil, 1]), (Int.max, [1, 2, 3, 4], [nil, nil, nil, nil]),
    ])
    func theLogKeepsTheLastValuesAndHandsBackTheOnesItDrops(limit: Int, kept: [Int], dropped: [Int?]) {
        var state = State(value: nil)
        var handedBack: [Int?] = []
        for value in 1...4 {
            let (work, drop) = state.publish(value, keeping: limit)
            #expect(work != nil, "nobody delivers, so the publisher does")
            Self.deliver(work, &state)
            handedBack.append(drop)
        }
        #expect(state.log.values == kept)
        #expect(handedBack == dropped)
    }

    /// Once full, the log is a ring: the test goes round it more than twice, checking at every position
    /// what it keeps, its latest value, what it hands back, and what a member joining then replays.
    @Test(arguments: [2, 3, 5])
    func aFullLogKeepsTheLastValuesInOrderAtEveryPositionOfItsRing(limit: Int) {
        var state = State(value: nil)
        for value in 1...(3 * limit + 1) {
            let (work, dropped) = state.publish(value, keeping: limit)
            Self.deliver(work, &state)
            let expected = Array(Swift.max(1, value - limit + 1)...value)
            #expect(state.log.values == expected, "after \(value)")
            #expect(state.log.latest == value)
            #expect(dropped == (value > limit ? value - limit : nil))
            let log = Log()
            let member = log.subscriber("m")
            let (key, replay) = state.join(member)
            Self.replay(replay, key: key, to: member, &state)
            #expect(log.take() == expected.map { "m:\($0)" })
            _ = state.leave(key)
        }
    }

    @Test func aMemberWithoutAReplayGetsOnlyTheValuesPublishedAfterItJoined() {
        let log = Log()
        var state = State(value: nil)
        let (_, none) = state.join(log.subscriber("a"))
        #expect(none == nil)
        Self.deliver(state.publish(1, keeping: 0).work, &state)
        _ = state.join(log.subscriber("b"))
        Self.deliver(state.publish(2, keeping: 0).work, &state)
        #expect(log.take() == ["a:1", "a:2", "b:2"])
    }

    /// A value published while another is being delivered is queued for the deliverer, and a member
    /// that joins meanwhile does not get the values published before it joined.
    @Test func aQueuedValueGoesOnlyToTheMembersBeforeIt() {
        let log = Log()
        var state = State(value: nil)
        _ = state.join(log.subscriber("a"))
        let first = state.publish(1, keeping: 0).work
        #expect(state.publish(2, keeping: 0).work == nil, "queued for the deliverer")
        _ = state.join(log.subscriber("b"))
        #expect(state.publish(3, keeping: 0).work == nil)
        Self.deliver(first, &state)
        #expect(log.take() == ["a:1", "a:2", "a:3", "b:3"])
    }

    /// A member that joins while the log holds values replays it, then the values published after it
    /// joined (its backlog), then joins the broadcasts.
    @Test func aReplayingMemberGetsItsBacklogAfterTheReplayAndThenTheBroadcasts() {
        let log = Log()
        var state = State(value: nil)
        _ = state.join(log.subscriber("a"))
        Self.deliver(state.publish(7, keeping: 1).work, &state)
        #expect(log.take() == ["a:7"])
        let first = state.publish(8, keeping: 1).work
        let late = log.subscriber("late")
        let (key, replay) = state.join(late)
        #expect(replay?.values == [8])
        _ = state.publish(9, keeping: 1)
        Self.deliver(first, &state)
        #expect(log.take() == ["a:8", "a:9"], "9 waits in the backlog of the member still replaying")
        Self.replay(replay, key: key, to: late, &state)
        Self.deliver(state.publish(10, keeping: 1).work, &state)
        #expect(log.take() == ["late:8", "late:9", "a:10", "late:10"])
    }

    @Test func aMemberThatLeavesWhileReplayingIsHandedBackWithItsBacklog() {
        let log = Log()
        var state = State(value: 1)
        let first = state.publish(2, keeping: 1).work
        let late = log.subscriber("late")
        let (key, replay) = state.join(late)
        _ = state.publish(3, keeping: 1)
        Self.deliver(first, &state)
        let departure = state.leave(key)
        #expect(departure.member != nil && departure.replaying != nil)
        #expect(state.replaying.isEmpty && state.replaying.capacity == 0, "the list of replaying members is freed")
        Self.replay(replay, key: key, to: late, &state)
        #expect(log.take() == ["late:2"], "its backlog is gone with it")
    }

    @Test func aTerminalEventReachesTheMembersBeforeItAndEndsThem() {
        let log = Log()
        var state = State(value: nil)
        _ = state.join(log.subscriber("a"))
        let first = state.publish(1, keeping: 0).work
        let (work, sequence) = state.end(.Error(TestError()))
        #expect(work == nil, "queued behind the value being delivered")
        #expect(state.hasLiveMembers(since: 0))
        #expect(!state.hasLiveMembers(since: sequence), "the member before the end has ended")
        _ = state.join(log.subscriber("b"))
        #expect(state.liveSubscribers(since: sequence).count == 1, "the member after the end is live")
        _ = state.publish(2, keeping: 0)
        Self.deliver(first, &state)
        #expect(log.take() == ["a:1", "a:error", "b:2"])
    }

    @Test func endingEveryMemberLeavesNoLiveMemberAndNoBroadcastForThem() {
        let log = Log()
        var state = State(value: nil)
        _ = state.join(log.subscriber("a"))
        state.endAllMembers()
        #expect(!state.hasLiveMembers(since: 0))
        Self.deliver(state.publish(1, keeping: 0).work, &state)
        #expect(log.take() == [])
    }
}
