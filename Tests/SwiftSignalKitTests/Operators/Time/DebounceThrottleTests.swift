import Dispatch
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

let letters: [Character: Int] = ["a": 1, "b": 2, "c": 3, "d": 4, "e": 5]

/// Plays `source` through the operator that `transform` makes for a virtual-time scheduler, runs the
/// scheduler to the end and returns how the result differs from `expected`.
func play(
    _ source: String, through transform: (VirtualTimeScheduler) -> (Signal<Int, TestError>) -> Signal<Int, TestError>,
    expect expected: String
) -> RecordingMismatch? {
    let scheduler = VirtualTimeScheduler()
    let signal = scheduler.signal(marbles: source, values: letters, error: TestError()) |> transform(scheduler)
    let recorder = SignalRecorder(signal, scheduler: scheduler)
    scheduler.run()
    return recorder.mismatch(marbles: expected, values: letters, error: TestError())
}

@Suite struct DebounceTests {
    @Test func sendsTheLatestValueAfterAQuietIntervalAndFlushesOnCompletion() {
        #expect(play("ab--c-----d|", through: { debounce(2, scheduler: $0) }, expect: "---b--c----(d|)") == nil)
    }

    @Test func everyValueRestartsTheWait() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "abcde----|", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> debounce(2, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "------e--|", values: letters, error: TestError()) == nil)
    }

    @Test func anErrorDropsTheWaitingValue() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "a-#", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> debounce(5, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "--#", values: letters, error: TestError()) == nil)
    }

    @Test func disposingCancelsTheWaitAndReleasesTheValue() {
        let scheduler = VirtualTimeScheduler()
        let tracker = LifetimeTracker()
        let captured = CapturedSubscriber<Tracked, NoError>()
        let delivered = Counter()
        let subscription = (captured.signal() |> debounce(1, scheduler: scheduler)).start(next: { _ in delivered.increment() })
        captured.subscriber?.putNext(tracker.make())
        #expect(scheduler.scheduledActionCount == 1)
        subscription.dispose()
        #expect(scheduler.scheduledActionCount == 0, "the wait is cancelled")
        #expect(tracker.live.value == 0, "the waiting value is released")
        scheduler.run()
        #expect(delivered.value == 0)
    }

    @Test func anInfiniteIntervalSendsOnlyTheLastValueOnCompletion() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "abc--|", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> debounce(.infinity, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "-----(c|)", values: letters, error: TestError()) == nil)
    }

    @Test func aZeroIntervalSendsEachValueWhenTheSchedulerRuns() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "a-b|", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> debounce(0, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "a-b|", values: letters, error: TestError()) == nil)
    }

    @Test func nanIsAPreconditionFailureNamingTheArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: (Signal<Int, NoError>) -> Signal<Int, NoError> = debounce(.nan, scheduler: VirtualTimeScheduler())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("debounce(_:scheduler:): interval must be a number of seconds"))
    }
}

@Suite struct ThrottleTests {
    @Test func sendsTheLatestValueOfEachWindowWhenItCloses() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "ab--c----d--|", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> throttle(3, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "---b---c----(d|)", values: letters, error: TestError()) == nil)
    }

    @Test func aSteadySourceGetsOneValuePerWindow() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "abcde|", values: letters, error: TestError(), frame: 1)
        let recorder = SignalRecorder(source |> throttle(2.5, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        // Windows [0, 2.5) and [3, 5.5): the second is cut short by the completion at 5.
        #expect(
            recorder.mismatch([.next(3, at: 2.5), .next(5, at: 5), .completed(at: 5)]) == nil)
    }

    @Test func anErrorDropsTheWaitingValue() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "a#", values: letters, error: TestError())
        let recorder = SignalRecorder(source |> throttle(3, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "-#", values: letters, error: TestError()) == nil)
    }

    @Test func disposingCancelsTheWindow() {
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(
            scheduler.signal(marbles: "a---b|", values: letters, error: TestError()) |> throttle(2, scheduler: scheduler),
            scheduler: scheduler)
        scheduler.advance(by: 1)
        recorder.dispose()
        #expect(scheduler.scheduledActionCount == 0)
        scheduler.run()
        #expect(recorder.events.isEmpty)
    }
}

@Suite(.serialized) struct DebounceThrottleStressTests {
    /// Values from several threads, then a completion: the last value sent is flushed, nothing follows
    /// the completion, and no value is sent twice.
    @Test(arguments: [DebounceThrottleStateMachine<Int, NoError>.Mode.debounce, .throttle])
    func concurrentValuesAndACompletion(mode: DebounceThrottleStateMachine<Int, NoError>.Mode) async {
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let events = LockedState<[Event<Int, NoError>]>([])
            let completed = DispatchSemaphore(value: 0)
            let queue = Queue(name: "timers")
            let operation: (Signal<Int, NoError>) -> Signal<Int, NoError> =
                mode == .debounce ? debounce(0, scheduler: queue) : throttle(0, scheduler: queue)
            let subscription = (captured.signal() |> operation).start(
                next: { value in events.withLock { $0.append(.next(value)) } },
                completed: {
                    events.withLock { $0.append(.completed) }
                    completed.signal()
                })
            await concurrently(4) { thread in
                for index in 0..<50 {
                    captured.subscriber?.putNext(thread * 1000 + index)
                }
            }
            captured.subscriber?.putCompletion()
            // The completion may be delivered by a timer's thread that is delivering a value.
            #expect(await wait(completed))
            let recorded = events.withLock { $0 }
            #expect(recorded.last == .completed)
            #expect(recorded.filter { $0 == .completed }.count == 1)
            let values = recorded.compactMap { event -> Int? in
                if case .next(let value) = event { return value }
                return nil
            }
            #expect(Set(values).count == values.count, "no value is sent twice")
            subscription.dispose()
        }
    }
}
