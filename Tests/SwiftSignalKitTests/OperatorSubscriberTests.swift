// The one operator subscriber (`OperatorSubscriber` in Core/OperatorSubscriber.swift): what its stage
// decides, what callbacks given beside a stage replace, and the example operator of CONTRIBUTING.md
// ("Adding an operator"), compiled and tested here.

import Testing

@testable import SwiftSignalKit

// MARK: - The example of CONTRIBUTING.md, as written there

/// Clamps each value into `range`.
@inlinable public func clamped<E>(to range: ClosedRange<Int>) -> (Signal<Int, E>) -> Signal<Int, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(Clamping(into: range, target: subscriber))
        }
    }
}

/// What the subscriber of `clamped(to:)` does with each event.
@usableFromInline struct Clamping<E>: ValueStage {
    @usableFromInline typealias Input = Int
    @usableFromInline typealias Failure = E

    @usableFromInline let range: ClosedRange<Int>
    @usableFromInline let target: Subscriber<Int, E>

    @inlinable init(into range: ClosedRange<Int>, target: Subscriber<Int, E>) {
        self.range = range
        self.target = target
    }

    @inlinable func receive(_ value: Int, by subscriber: Subscriber<Int, E>) {
        self.target.putNext(min(max(value, self.range.lowerBound), self.range.upperBound))
    }

    @inlinable func receive(error: E) { self.target.putError(error) }

    @inlinable func receiveCompletion() { self.target.putCompletion() }

    @inlinable var downstreamIsTerminated: Bool { self.target.isTerminated }

    @inlinable var downstreamDemand: (any SignalDemand)? { self.target.demand }
}

// MARK: - Tests

@Suite struct OperatorSubscriberTests {
    /// A stage that records what reaches it, with a downstream whose answers the test sets.
    struct RecordingStage: SubscriberStage {
        typealias Input = Int
        typealias Failure = TestError

        let recorder: Recorder<Int, TestError>
        let downstream: FakeDownstream

        func receive(error: TestError) { self.recorder.append(.error(error)) }
        func receiveCompletion() { self.recorder.append(.completed) }
        var downstreamIsTerminated: Bool { self.downstream.isTerminated }
        var downstreamDemand: (any SignalDemand)? { self.downstream.demand }
    }

    final class FakeDownstream: DownstreamLink {
        let ended = LockedState(false)
        let room = NoRoomNeeded()
        var isTerminated: Bool { self.ended.withLock { $0 } }
        var demand: (any SignalDemand)? { self.room }
    }

    final class NoRoomNeeded: SignalDemand {
        var pacesProducers: Bool { true }
        var consumerHasGone: Bool { false }
        func waitForRoom() async -> Bool { true }
    }

    @Test func theExampleOperatorClampsAndForwardsEveryEvent() {
        let recorder = Recorder<Int, TestError>()
        let pipe = ValuePipe<Int>()
        let source = pipe.signal() |> castError(TestError.self)
        let subscription = (source |> clamped(to: 0...10)).start(
            next: { recorder.append(.next($0)) }, error: { recorder.append(.error($0)) })
        for value in [-5, 3, 42] { pipe.putNext(value) }
        subscription.dispose()
        pipe.putNext(4)
        #expect(recorder.events == [.next(0), .next(3), .next(10)])

        let failing = Recorder<Int, TestError>()
        _ = (Signal<Int, TestError>.fail(TestError(code: 1)) |> clamped(to: 0...1)).start(error: { failing.append(.error($0)) })
        let completing = Recorder<Int, TestError>()
        _ = (Signal<Int, TestError>.single(7) |> clamped(to: 0...1)).start(
            next: { completing.append(.next($0)) }, completed: { completing.append(.completed) })
        #expect(failing.events == [.error(TestError(code: 1))])
        #expect(completing.events == [.next(1), .completed])
    }

    /// The terminal events go to the stage when no callback is given for them, once.
    @Test(arguments: [true, false])
    func terminalEventsWithoutCallbacksGoToTheStage(fails: Bool) {
        let recorder = Recorder<Int, TestError>()
        let stage = RecordingStage(recorder: recorder, downstream: FakeDownstream())
        let subscriber = OperatorSubscriber(stage, next: { recorder.append(.next($0)) }, error: nil, completed: nil)
        subscriber.putNext(1)
        if fails { subscriber.putError(TestError(code: 1)) } else { subscriber.putCompletion() }
        subscriber.putError(TestError(code: 1))
        subscriber.putCompletion()
        subscriber.putNext(2)
        #expect(recorder.events == [.next(1), fails ? .error(TestError(code: 1)) : .completed])
    }

    /// A callback given beside the stage takes its event instead of the stage.
    @Test func callbacksReplaceTheStageForTheirEvents() {
        let stageEvents = Recorder<Int, TestError>()
        let callbacks = Recorder<Int, TestError>()
        let failing = OperatorSubscriber(
            RecordingStage(recorder: stageEvents, downstream: FakeDownstream()), next: nil,
            error: { callbacks.append(.error($0)) }, completed: nil)
        failing.putError(TestError(code: 1))
        let completing = OperatorSubscriber(
            RecordingStage(recorder: stageEvents, downstream: FakeDownstream()), next: nil, error: nil,
            completed: { callbacks.append(.completed) })
        completing.putCompletion()
        #expect(callbacks.events == [.error(TestError(code: 1)), .completed])
        #expect(stageEvents.events.isEmpty, "the stage got an event a callback took")
    }

    /// Whether the subscriber has ended, and the room it reports, come from the stage's downstream.
    @Test func theStageAnswersForTheDownstream() {
        let downstream = FakeDownstream()
        let subscriber = OperatorSubscriber(
            RecordingStage(recorder: Recorder(), downstream: downstream), next: nil, error: nil, completed: nil)
        #expect(!subscriber.isTerminated)
        #expect(subscriber.demand === downstream.room)
        downstream.ended.withLock { $0 = true }
        #expect(subscriber.isTerminated, "the downstream has ended")

        let plain = OperatorSubscriber(CallbacksOnly<Int, TestError>(), next: nil, error: nil, completed: nil)
        #expect(!plain.isTerminated)
        #expect(plain.demand == nil)
        plain.dispose()
        #expect(plain.isTerminated)
    }

    /// `Linked` reports its downstream's room only when asked to pass it on.
    @Test(arguments: [true, false])
    func linkedPassesTheRoomOnlyWhenAsked(passing: Bool) {
        let downstream = FakeDownstream()
        let subscriber = OperatorSubscriber(
            Linked<Int, TestError, FakeDownstream>(to: downstream, passingDemand: passing), next: nil, error: nil,
            completed: nil)
        #expect((subscriber.demand != nil) == passing)
        downstream.ended.withLock { $0 = true }
        #expect(subscriber.isTerminated)
    }

    /// A value stage's callback holds the subscriber; ending the subscription releases it, so a
    /// subscriber its source has let go of is freed.
    @Test(arguments: ["dispose", "complete", "fail"])
    func aValueStageSubscriberIsFreedOnceItEnds(how: String) {
        weak var released: OperatorSubscriber<Clamping<TestError>>?
        let target = OperatorSubscriber(CallbacksOnly<Int, TestError>(), next: nil, error: nil, completed: nil)
        do {
            let subscriber = OperatorSubscriber(Clamping(into: 0...1, target: target))
            released = subscriber
            switch how {
            case "dispose": subscriber.dispose()
            case "complete": subscriber.putCompletion()
            default: subscriber.putError(TestError(code: 1))
            }
        }
        #expect(released == nil, "the value callback kept its subscriber alive after the end")
        #expect(target.isTerminated == (how != "dispose"))
    }

    /// Every operator's subscriber, and `start`'s, is this one class.
    @Test func operatorsAndStartMakeTheOneSubscriberClass() {
        let captured = CapturedSubscriber<Int, NoError>()
        _ = captured.signal().start()
        #expect(captured.subscriber is OperatorSubscriber<CallbacksOnly<Int, NoError>>)
        _ = (captured.signal() |> take(1)).start()
        #expect(captured.subscriber is OperatorSubscriber<ForwardingTerminals<Int, Int, NoError>>)
        _ = (captured.signal() |> deliverOn(Queue.mainQueue())).start()
        #expect(captured.subscriber is OperatorSubscriber<Linked<Int, NoError, Subscriber<Int, NoError>>>)
    }
}
