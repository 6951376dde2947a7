import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// The async operators with a transform that finishes at once, named for the test output.
enum RacingForm: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case mapSerial, mapLatest, mapConcurrentOrdered, mapConcurrentUnordered, filter, compactMap, generator

    var testDescription: String { self.rawValue }

    /// One value through the operator; the transform reports 1 when `disposeReturned` was set before
    /// it finished, so a delivered 1 is an event sent after `dispose()` returned.
    func signal(disposeReturned: Atomic<Bool>, tracked: Tracked) -> Signal<Int, NoError> {
        let source = Signal<Int, NoError>.single(0)
        let sample: @Sendable () -> Int = {
            withExtendedLifetime(tracked) {}
            return disposeReturned.with { $0 } ? 1 : 0
        }
        switch self {
        case .mapSerial: return source |> mapAsync { _ in sample() }
        case .mapLatest: return source |> mapAsync(.latest) { _ in sample() }
        case .mapConcurrentOrdered: return source |> mapAsync(.concurrent(max: 4, ordered: true)) { _ in sample() }
        case .mapConcurrentUnordered: return source |> mapAsync(.concurrent(max: 4, ordered: false)) { _ in sample() }
        case .filter: return source |> map { _ in 1 } |> filterAsync { _ in sample() == 1 }
        case .compactMap: return source |> compactMapAsync { _ in sample() }
        case .generator: return Signal { send in send(sample()) }
        }
    }
}

/// Serialized, and the loops run on threads of their own: 100,000 synchronous iterations on a thread
/// of the task pool, several at once, would starve every other test of the pool for minutes under
/// ThreadSanitizer.
@Suite(.serialized) struct AsyncTransformStressTests {
    /// How many racing subscriptions may be unfinished at once (see `disposeRacingAFinishingTransform`).
    /// It was 256: a queue of that many subscriptions' tasks on the pool made every other async test of
    /// a parallel `swift test` wait behind it.
    let outstandingLimit = 32

    /// Dispose racing a transform that finishes at once, 50,000 times per operator (5,000 under
    /// ThreadSanitizer): nothing sent after `dispose()` returned is delivered, and every subscription's
    /// tasks end and release it (a task or a continuation left waiting would keep its tracked object
    /// alive). It was 100,000, the run's longest test (31 s of a debug run alone, and its last to end
    /// in parallel); 350,000 races a run, and the CI's two runs, keep the odds of a rare interleaving.
    @Test(arguments: RacingForm.allCases)
    func disposeRacingAFinishingTransform(form: RacingForm) async {
        let tracker = LifetimeTracker()
        let late = Counter()
        let delivered = Counter()
        await onThread {
            for iteration in 0..<stressRounds(50_000) {
                // Each subscription starts tasks on the shared pool; a thread that made them without
                // pause would queue tens of thousands ahead of every other test's work. So at most
                // `outstandingLimit` subscriptions are left unfinished at a time.
                if iteration % outstandingLimit == 0 {
                    blockingSpin(until: { tracker.live.value < outstandingLimit })
                }
                let disposeReturned = Atomic(value: false)
                let signal = form.signal(disposeReturned: disposeReturned, tracked: tracker.make())
                let subscription = signal.start(next: { value in
                    delivered.increment()
                    if value == 1 { late.increment() }
                })
                subscription.dispose()
                _ = disposeReturned.swap(true)
            }
        }
        #expect(late.value == 0, "a value sent after dispose() returned was delivered")
        await eventually { tracker.live.value == 0 }
        #expect(tracker.live.value == 0, "a subscription's task or continuation was left behind")
    }

    /// A transform that disposes its own subscription sees its task cancelled when `dispose()` returns,
    /// under every policy: a runner task transforms only once the worker has registered it, so the end
    /// of the subscription, which cancels the registered tasks, reaches every transform. (A runner used
    /// to begin before its registration; a sceptical probe found such transforms running uncancelled
    /// after `dispose()` in up to 65% of rounds, with a thread feeding the pipe meanwhile.)
    @Test(arguments: [
        AsyncTransformPolicy.serial, .latest, .concurrent(max: 4, ordered: true), .concurrent(max: 1, ordered: false),
    ])
    func aTransformThatDisposesItsSubscriptionSeesItsCancellation(policy: AsyncTransformPolicy) async {
        let uncancelled = Counter()
        for _ in 0..<stressRounds(200) {
            let pipe = ValuePipe<Int>()
            let subscription = Atomic<Disposable?>(value: nil)
            let claimed = Atomic(value: false)
            let disposed = Gate()
            let started =
                (pipe.signal()
                |> mapAsync(policy) { value in
                    // The first transform of a value from 3 on (under `.latest` a value may be dropped).
                    if value >= 3, !claimed.swap(true) {
                        subscription.with { $0 }?.dispose()
                        if !Task.isCancelled { uncancelled.increment() }
                        disposed.open()
                    }
                    return value
                }).start(next: { _ in })
            _ = subscription.swap(started)
            let stop = Atomic(value: false)
            let feeder = Thread {
                var value = 0
                while !stop.with({ $0 }) {
                    pipe.putNext(value)
                    value += 1
                }
            }
            feeder.start()
            await disposed.wait()
            _ = stop.swap(true)
        }
        #expect(uncancelled.value == 0, "a transform ran uncancelled after dispose() returned")
    }

    /// Disposing an idle subscription, whose worker waits for the next value, ends the worker: every
    /// subscription is released.
    @Test(arguments: [AsyncTransformPolicy.serial, .latest, .concurrent(max: 3, ordered: true)])
    func disposingAnIdleSubscriptionEndsItsWorker(policy: AsyncTransformPolicy) async {
        let tracker = LifetimeTracker()
        for _ in 0..<100 {
            let pipe = ValuePipe<Int>()
            let tracked = tracker.make()
            let received = Counter()
            let subscription =
                (pipe.signal()
                |> mapAsync(policy) { value in
                    withExtendedLifetime(tracked) {}
                    return value
                }).start(next: { _ in received.increment() })
            pipe.putNext(1)
            await eventually { received.value == 1 }
            subscription.dispose()
        }
        await eventually { tracker.live.value == 0 }
        #expect(tracker.live.value == 0, "a worker was left waiting")
    }
}
