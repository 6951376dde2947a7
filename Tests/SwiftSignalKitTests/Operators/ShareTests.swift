import Dispatch
import Foundation
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// A source that counts its subscriptions and disposals.
private final class CountedSource: Sendable {
    let starts = Counter()
    let disposals = Counter()

    func signal(_ body: Signal<Int, TestError>) -> Signal<Int, TestError> {
        return Signal { subscriber in
            self.starts.increment()
            let inner = body.start(
                next: { subscriber.putNext($0) }, error: { subscriber.putError($0) }, completed: { subscriber.putCompletion() })
            return ActionDisposable {
                self.disposals.increment()
                inner.dispose()
            }
        }
    }
}

@Suite struct ShareTests {
    @Test func lateSubscribersGetTheReplayThenLiveValues() {
        let scheduler = VirtualTimeScheduler()
        let source = CountedSource()
        let shared = source.signal(scheduler.signal(marbles: "-a-b-c-|", values: letters, error: TestError())) |> share(replay: .latest)
        let first = SignalRecorder(shared, scheduler: scheduler)
        scheduler.advance(by: 4)
        let second = SignalRecorder(shared, scheduler: scheduler)
        scheduler.run()
        #expect(first.mismatch(marbles: "-a-b-c-|", values: letters, error: TestError()) == nil)
        #expect(second.mismatch([.next(2, at: 4), .next(3, at: 5), .completed(at: 7)]) == nil)
        #expect(source.starts.value == 1, "one upstream subscription")
    }

    @Test(arguments: [(ShareReplay.none, [Int]()), (.latest, [3]), (.last(2), [2, 3]), (.all, [1, 2, 3]), (.last(0), [])])
    func replayPolicies(policy: ShareReplay, replayed: [Int]) {
        let pipe = ValuePipe<Int>()
        let shared = pipe.signal() |> castError(TestError.self) |> share(replay: policy)
        let first = Recorder<Int, TestError>()
        first.start(shared)
        for value in 1...3 { pipe.putNext(value) }
        let late = Recorder<Int, TestError>()
        late.start(shared)
        #expect(late.values == replayed)
        pipe.putNext(4)
        #expect(late.values == replayed + [4])
        #expect(first.values == [1, 2, 3, 4])
    }

    @Test func disposingASubscriptionTwiceLeavesOnceAndKeepsTheOthersAndTheConnection() {
        let pipe = ValuePipe<Int>()
        let source = CountedSource()
        let shared = source.signal(pipe.signal() |> castError(TestError.self)) |> share(replay: .latest)
        let a = Recorder<Int, TestError>()
        let b = Recorder<Int, TestError>()
        let first = a.start(shared)
        let second = b.start(shared)
        pipe.putNext(1)
        second.dispose()
        second.dispose()
        pipe.putNext(2)
        #expect(a.values == [1, 2], "the other subscriber is still a member")
        #expect(b.values == [1])
        #expect(source.disposals.value == 0, "a member is left, so the connection stays")
        first.dispose()
        #expect(source.disposals.value == 1, "the last one leaving takes the connection")
        first.dispose()
        #expect(source.disposals.value == 1)
    }

    @Test func theLastSubscriberLeavingDisconnectsAndTheNextReconnectsWithAnEmptyReplay() {
        let pipe = ValuePipe<Int>()
        let source = CountedSource()
        let shared = source.signal(pipe.signal() |> castError(TestError.self)) |> share(replay: .latest)
        let a = Recorder<Int, TestError>()
        let b = Recorder<Int, TestError>()
        let subscriptionA = a.start(shared)
        let subscriptionB = b.start(shared)
        pipe.putNext(1)
        subscriptionA.dispose()
        #expect(source.disposals.value == 0, "one subscriber is left")
        subscriptionB.dispose()
        #expect(source.disposals.value == 1)
        let c = Recorder<Int, TestError>()
        c.start(shared)
        #expect(source.starts.value == 2)
        #expect(c.values.isEmpty, "the replay ended with the connection")
        pipe.putNext(2)
        #expect(c.values == [2])
    }

    @Test func stayConnectedKeepsTheUpstreamAndReplaysTheEnd() {
        let scheduler = VirtualTimeScheduler()
        let source = CountedSource()
        let shared =
            source.signal(scheduler.signal(marbles: "a-b|", values: letters, error: TestError()))
            |> share(replay: .all, connection: .stayConnected)
        let first = SignalRecorder(shared, scheduler: scheduler)
        scheduler.advance(by: 0)
        first.dispose()
        #expect(source.disposals.value == 0, "stays connected with nobody subscribed")
        scheduler.run()
        let late = SignalRecorder(shared, scheduler: scheduler)
        #expect(late.mismatch([.next(1, at: 3), .next(2, at: 3), .completed(at: 3)]) == nil)
        #expect(source.starts.value == 1)
    }

    @Test func anUpstreamErrorReachesEverySubscriberAndWhileSubscribedReconnectsLater() {
        let scheduler = VirtualTimeScheduler()
        let source = CountedSource()
        let shared = source.signal(scheduler.signal(marbles: "a#", values: letters, error: TestError())) |> share(replay: .latest)
        let first = SignalRecorder(shared, scheduler: scheduler)
        let second = SignalRecorder(shared, scheduler: scheduler)
        scheduler.run()
        for recorder in [first, second] {
            #expect(recorder.mismatch(marbles: "a#", values: letters, error: TestError()) == nil)
        }
        let third = SignalRecorder(shared, scheduler: scheduler)
        scheduler.run()
        #expect(source.starts.value == 2)
        #expect(third.mismatch(marbles: "a#", values: letters, error: TestError()) == nil)
    }

    @Test func aSubscriberMayLeaveOrJoinFromItsOwnCallback() {
        let pipe = ValuePipe<Int>()
        let shared = pipe.signal() |> share(replay: .latest)
        let received = LockedState<[String]>([])
        let own = MetaDisposable()
        own.set(
            shared.start(next: { value in
                received.withLock { $0.append("own \(value)") }
                if value == 2 { own.dispose() }
                if value == 1 {
                    _ = shared.start(next: { inner in received.withLock { $0.append("inner \(inner)") } })
                }
            }))
        pipe.putNext(1)
        pipe.putNext(2)
        pipe.putNext(3)
        #expect(received.withLock { $0 } == ["own 1", "inner 1", "own 2", "inner 2", "inner 3"])
    }

    @Test func negativeReplayCountIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let _: (Signal<Int, NoError>) -> Signal<Int, NoError> = share(replay: .last(-1))
        }
    }
}

@Suite struct ReplayingValuePipeTests {
    @Test func replaysTheLatestValueThenLiveOnes() {
        let pipe = ReplayingValuePipe<String>()
        let early = Recorder<String, NoError>()
        early.start(pipe.signal())
        #expect(early.values.isEmpty)
        pipe.putNext("connecting")
        pipe.putNext("connecting")
        let late = Recorder<String, NoError>()
        late.start(pipe.signal())
        pipe.putNext("ready")
        #expect(early.values == ["connecting", "connecting", "ready"], "repeated values are sent")
        #expect(late.values == ["connecting", "ready"])
    }

    @Test func anInitialValueIsReplayed() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(ReplayingValuePipe(7).signal())
        #expect(recorder.values == [7])
    }
}

@Suite(.serialized) struct ShareStressTests {
    /// One thread sends 0..<count through the share while others subscribe: every subscriber sees a run
    /// of consecutive values that ends with the last one: no gap, no duplicate, no reordering. Twenty
    /// rounds, two under ThreadSanitizer (`stressRounds(_:)`).
    @Test(arguments: [ShareReplay.none, .latest, .last(3), .all])
    func lateSubscribersSeeNoGapAndNoDuplicate(policy: ShareReplay) async {
        for _ in 0..<stressRounds(20) {
            let pipe = ValuePipe<Int>()
            let shared = pipe.signal() |> share(replay: policy)
            let anchor = shared.start()
            let runs = await lateSubscriberRuns(signal: shared, publish: pipe.putNext)
            for values in runs where policy == .all {
                #expect(values.first == 0)
            }
            anchor.dispose()
        }
    }

    /// Subscribers come and go from several threads while values flow: the upstream is connected once
    /// per busy period and disposed once per connection.
    @Test func connectAndDisconnectRaces() async {
        let source = CountedSource()
        let pipe = ValuePipe<Int>()
        let shared = source.signal(pipe.signal() |> castError(TestError.self)) |> share(replay: .latest)
        await concurrently(4) { thread in
            for index in 0..<2_000 {
                let subscription = shared.start()
                pipe.putNext(thread * 10_000 + index)
                subscription.dispose()
            }
        }
        #expect(source.starts.value == source.disposals.value, "every connection is disposed once")
        #expect(source.starts.value >= 1)
    }

    /// The same for ``ReplayingValuePipe``: a late subscriber sees the replayed latest value, then every
    /// later one.
    @Test func replayingValuePipeLateSubscribersSeeNoGap() async {
        for _ in 0..<20 {
            let pipe = ReplayingValuePipe<Int>()
            _ = await lateSubscriberRuns(signal: pipe.signal(), publish: pipe.putNext)
        }
    }
}

/// One thread publishes 0..<2,000 while four others subscribe to `signal` at staggered moments; checks
/// that each subscriber saw consecutive values ending with the last, and returns what each saw.
private func lateSubscriberRuns(signal: Signal<Int, NoError>, publish: @escaping @Sendable (Int) -> Void) async -> [[Int]] {
    let count = 2_000
    let recordings = (0..<4).map { _ in LockedState<[Int]>([]) }
    let subscriptions = LockedState<[Disposable]>([])
    await concurrently(5) { thread in
        if thread == 0 {
            for value in 0..<count { publish(value) }
        } else {
            let recording = recordings[thread - 1]
            for _ in 0..<(thread * 50) { yieldProcessor() }
            let subscription = signal.start(next: { value in recording.withLock { $0.append(value) } })
            subscriptions.withLock { $0.append(subscription) }
        }
    }
    var runs: [[Int]] = []
    for recording in recordings {
        // A promise-style fan-out may hand a busy backlog to a Dispatch thread: a subscriber that has
        // values waits for the last one. (One that joined after the last value, with nothing to replay,
        // has none.)
        if !recording.withLock({ $0.isEmpty }) {
            #expect(await spin(until: { recording.withLock { $0.last } == count - 1 }))
        }
        let values = recording.withLock { $0 }
        runs.append(values)
        if values.isEmpty { continue }
        let gap = values.indices.dropFirst().first { values[$0] != values[$0 - 1] + 1 }
        #expect(
            gap == nil,
            "not consecutive at \(gap ?? -1): \(gap.map { Array(values[Swift.max(0, $0 - 3)..<Swift.min(values.count, $0 + 3)]) } ?? [])")
        #expect(values.last == count - 1)
    }
    subscriptions.withLock { $0 }.forEach { $0.dispose() }
    return runs
}

/// What a sceptical review of the sharing and timing operators found, each fixed and kept fixed here.
@Suite struct ShareAndTimingProbeRegressionTests {
    /// `take(1)` after a share of an endless synchronous source spun forever: the share had no way to
    /// end the source's subscriber while its generator was still running.
    @Test func takeOneStopsAnEndlessSynchronousSourceBehindAShare() async {
        let done = DispatchSemaphore(value: 0)
        let values = Counter()
        let thread = Thread {
            let endless = restart(Signal<Int, NoError>.single(1))
            _ = (endless |> share() |> take(1)).start(next: { _ in values.increment() })
            done.signal()
        }
        thread.start()
        #expect(await wait(done), "the subscription must end after the first value")
        #expect(values.value == 1)
    }

    /// A loop inside the share's upstream keeps going while any subscriber listens, also when the first
    /// several it looks at have finished: the share looks at a few subscribers first (usually the answer,
    /// without a list of all of them under its lock), then at all of them.
    @Test func aLoopBehindAShareGoesOnWhileALaterSubscriberListens() async {
        let done = DispatchSemaphore(value: 0)
        let lastValues = Counter()
        let thread = Thread {
            let shared = restart(Signal<Int, NoError>.single(1)) |> share()
            _ = (shared |> take(1)).start(next: { _ in
                // Joined during the loop: five that finish at the next value, then one that wants three.
                for _ in 0..<5 { _ = (shared |> take(1)).start() }
                _ = (shared |> take(3)).start(next: { _ in lastValues.increment() })
            })
            done.signal()
        }
        thread.start()
        #expect(await wait(done), "the loop ends once every subscriber has finished")
        #expect(lastValues.value == 3, "the last subscriber got its three values")
    }

    /// With `.stayConnected` the share keeps its source whoever listens: a finished first subscriber
    /// (a `take(1)`) must not make `startWith` or `restart` give the source up.
    @Test func stayConnectedKeepsTheSourceAfterItsFirstSubscriberFinished() {
        let pipe = ValuePipe<Int>()
        let shared = pipe.signal() |> startWith(0) |> share(replay: .latest, connection: .stayConnected)
        _ = (shared |> take(1)).start()
        let later = Recorder<Int, NoError>()
        later.start(shared)
        pipe.putNext(42)
        #expect(later.values == [0, 42])
    }

    /// A subscriber that joins while another one finishes gets every later value: a connection is given
    /// up only when every subscriber there is has finished, and then the next one connects again.
    @Test func aSubscriberJoiningAsAnotherFinishesKeepsGettingValues() async {
        for _ in 0..<2_000 {
            let pipe = ValuePipe<Int>()
            let shared = pipe.signal() |> startWith(0) |> share(replay: .latest)
            let recorder = Recorder<Int, NoError>()
            await concurrently(2) { thread in
                if thread == 0 {
                    _ = (shared |> take(1)).start()
                } else {
                    recorder.start(shared)
                }
            }
            pipe.putNext(42)
            #expect(recorder.values.last == 42, "got \(recorder.values)")
        }
    }

    @Test func aBackoffStartingAtZeroStaysAtZero() {
        let backoff = RetryBackoff.exponential(initial: 0, maxDelay: .infinity, jitter: .none)
        #expect(backoff.delay(forRetry: 1_100) == 0)
        #expect(RetryBackoff.exponential(initial: 0, maxDelay: 10).delay(forRetry: 5_000) == 0)
    }

    @Test func messagesNameTheAPIAndWhatInfinityMeans() async {
        let timer = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Timer(timeout: .nan, repeat: true, scheduler: Queue()) { _ in }
        }
        let timerMessage = String(decoding: timer?.standardErrorContent ?? [], as: UTF8.self)
        #expect(timerMessage.contains("Timer(timeout:repeat:scheduler:completion:)"))
        let retrying = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: (Signal<Int, TestError>) -> Signal<Int, NoError> = retry(1, maxDelay: -1, scheduler: Queue())
        }
        let retryMessage = String(decoding: retrying?.standardErrorContent ?? [], as: UTF8.self)
        #expect(retryMessage.contains("maxDelay must be a number of seconds ≥ 0 (.infinity means no cap)"))
    }
}
