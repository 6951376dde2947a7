import Dispatch
import Synchronization
import Testing

@testable import SwiftSignalKit

/// A pipe that is released takes its subscribers with it, as the original library's `ValuePipe` did:
/// a subscription that is never disposed (the disposable discarded, as Telegram-style code often does)
/// must not keep its subscriber, and what the callbacks capture, once nobody can put into the pipe.
/// Each subscriber held its membership, which held the member list, which held the subscriber: the
/// first two tests failed before pipes closed their lists when released (a probe, 2026-12-02). A
/// subscription through operators holds itself through its own links until it is disposed, here as in
/// the original, so these subscribe with callbacks only.
@Suite struct ReleasedPipeTests {
    @Test func aValuePipesNeverDisposedSubscriptionsGoWithThePipe() {
        let (received, live) = Self.subscribeTwiceWithoutKeeping(to: ValuePipe<Int>(), { $0.signal() }) { $0.putNext(1) }
        #expect(received == [1, 10])
        #expect(live == 0, "the subscribers went with the pipe")
    }

    @Test func aReplayingValuePipesNeverDisposedSubscriptionsGoWithThePipe() {
        let (received, live) = Self.subscribeTwiceWithoutKeeping(to: ReplayingValuePipe<Int>(0), { $0.signal() }) { $0.putNext(1) }
        #expect(received == [0, 0, 1, 10])
        #expect(live == 0, "the subscribers went with the pipe")
    }

    /// Subscribes twice to `pipe`, with callbacks only, discarding the disposables, then `put`s and
    /// releases the pipe. Returns what the callbacks received (the second's values times ten) and how
    /// many objects the callbacks captured are still alive.
    private static func subscribeTwiceWithoutKeeping<Pipe>(
        to pipe: consuming Pipe, _ signal: (Pipe) -> Signal<Int, NoError>, put: (Pipe) -> Void
    ) -> (received: [Int], live: Int) {
        let tracker = LifetimeTracker()
        let received = Mutex<[Int]>([])
        do {
            let pipe = consume pipe
            for factor in [1, 10] {
                _ = signal(pipe).start(next: { [captured = tracker.make()] value in
                    withExtendedLifetime(captured) {}
                    received.withLock { $0.append(value * factor) }
                })
            }
            put(pipe)
            #expect(tracker.live.value == 2)
        }
        return (received.withLock { $0 }, tracker.live.value)
    }

    @Test func aSubscriptionMadeAfterThePipeIsGoneGetsNothingAndKeepsNothing() {
        let tracker = LifetimeTracker()
        var pipe: ValuePipe<Int>? = ValuePipe()
        var replaying: ReplayingValuePipe<Int>? = ReplayingValuePipe(5)
        let signals = [pipe!.signal(), replaying!.signal()]
        pipe = nil
        replaying = nil
        let recorder = Recorder<Int, NoError>()
        for signal in signals {
            recorder.start(signal)
            _ = signal.start(next: { [captured = tracker.make()] _ in withExtendedLifetime(captured) {} })
        }
        #expect(recorder.values == [5], "the replaying pipe's latest value, and nothing from the other")
        #expect(tracker.live.value == 0)
        _ = (pipe, replaying)
    }

    /// A disposable the caller keeps still works after the pipe is gone, and disposing it twice is harmless.
    @Test func aKeptDisposableStillDisposesAfterThePipeIsGone() {
        let tracker = LifetimeTracker()
        var pipe: ReplayingValuePipe<Int>? = ReplayingValuePipe(1)
        let subscription = pipe!.signal().start(next: { [captured = tracker.make()] _ in withExtendedLifetime(captured) {} })
        pipe = nil
        subscription.dispose()
        subscription.dispose()
        #expect(tracker.live.value == 0)
        _ = pipe
    }

    /// Values put before the release reach the subscribers even when a Dispatch thread, to which the
    /// delivering thread handed them (after 64 values put by other threads), is still delivering them
    /// when the pipe goes; the subscribers are released after the last of them. Value 80 is delivered
    /// on that Dispatch thread; the pipe is released while its callback waits.
    @Test func valuesPutBeforeTheReleaseArriveWhileADispatchThreadStillDeliversThem() async {
        let tracker = LifetimeTracker()
        let received = Mutex<[Int]>([])
        let pipe = Mutex<ReplayingValuePipe<Int>?>(ReplayingValuePipe())
        let atZero = DispatchSemaphore(value: 0)
        let goOnFromZero = DispatchSemaphore(value: 0)
        let atEighty = DispatchSemaphore(value: 0)
        let goOnFromEighty = DispatchSemaphore(value: 0)
        _ = pipe.withLock { $0 }!.signal().start(next: { [captured = tracker.make()] value in
            withExtendedLifetime(captured) {}
            received.withLock { $0.append(value) }
            if value == 0 {
                atZero.signal()
                _ = blockingWait(goOnFromZero)
            } else if value == 80 {
                atEighty.signal()
                _ = blockingWait(goOnFromEighty)
            }
        })
        async let putsZero: Void = onThread { pipe.withLock { $0 }?.putNext(0) }
        #expect(await wait(atZero))
        await onThread {
            let feed = pipe.withLock { $0 }!
            for value in 1...100 { feed.putNext(value) }
        }
        goOnFromZero.signal()
        await putsZero
        #expect(await wait(atEighty))
        pipe.withLock { $0 = nil }
        #expect(tracker.live.value == 1, "kept while values put before the release are still to come")
        goOnFromEighty.signal()
        #expect(await spin(until: { tracker.live.value == 0 }), "released after the last of them")
        #expect(received.withLock { $0 } == Array(0...100))
    }
}
