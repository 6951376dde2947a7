import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The subscriber behind `get()`: it takes only its first event, records it in the round trip that
/// admits it, ends the subscription, and only then tells its owner; the owner's last step reads without
/// the lock only when the event arrives on the starting thread while starting.
@Suite struct FirstEventSubscriberTests {
    typealias Taker = FirstEventSubscriber<Int, TestError, Int>

    /// A subscriber that records a value (or -1 for an error, -2 for completion) into `extra` when the
    /// event is admitted, the way `get()` does, and counts in `handled` once the subscription has
    /// ended. `check` runs first in that last step.
    private func makeTaker(handled: Counter, check: @escaping @Sendable (Taker) -> Void = { _ in }) -> Taker {
        return Taker(
            extra: 0,
            onEvent: { extra, event in
                switch event {
                case .Next(let value): extra = value
                case .Error: extra = -1
                case .Completion: extra = -2
                }
            },
            onEnded: { taker in
                check(taker)
                handled.increment()
                // As `get()` does: without the lock when answered on the starting thread while starting.
                taker.withExtraForFirstEvent { _ in }
            }
        )
    }

    /// Synchronous on purpose: a subscriber compares the thread that made it with the thread that
    /// starts it, and an async test could resume on another thread between the two.
    @Test func onlyAnAnswerOnTheStartingThreadWhileStartingIsReadWithoutTheLock() {
        // On the starting thread, while starting: read back without the lock.
        let handled = Counter()
        let synchronous = self.makeTaker(handled: handled)
        synchronous.subscribe(
            to: Signal { subscriber in
                subscriber.putNext(1)
                return EmptyDisposable
            })
        #expect(synchronous.extraIfAnsweredWhileStarting() == 1)

        // On the starting thread, but after starting (the thread may run other work of the signal while
        // the owner waits): under the lock too.
        let captured = CapturedSubscriber<Int, TestError>()
        let later = self.makeTaker(handled: handled)
        later.subscribe(to: captured.signal())
        captured.subscriber?.putNext(3)
        #expect(later.extraIfAnsweredWhileStarting() == nil)
        #expect(later.withExtra { $0 } == 3)
        #expect(handled.value == 2)
    }

    /// On another thread while starting: recorded under the lock, and not taken for the starting
    /// thread's. The subscriber is made and started on a thread of the test's, which waits there for
    /// the sending thread.
    @Test func anAnswerFromAnotherThreadWhileStartingIsRecordedUnderTheLock() async {
        let handled = Counter()
        let elsewhere = await onThread { () -> (whileStarting: Int?, recorded: Int) in
            let elsewhere = self.makeTaker(handled: handled)
            elsewhere.subscribe(
                to: Signal { subscriber in
                    let sent = DispatchSemaphore(value: 0)
                    Thread {
                        subscriber.putNext(2)
                        sent.signal()
                    }.start()
                    _ = blockingWait(sent)  // if it times out, `recorded` below is not 2
                    return EmptyDisposable
                })
            return (elsewhere.extraIfAnsweredWhileStarting(), elsewhere.withExtra { $0 })
        }
        #expect(elsewhere.whileStarting == nil)
        #expect(elsewhere.recorded == 2)
        #expect(handled.value == 1)
    }

    @Test func aFirstValueReleasesKeptAliveObjectsWhileTheSourceStillHoldsTheSubscriber() {
        // A hot source keeps its subscribers; whatever its generator kept alive on the subscriber goes
        // with the first event, not when the source lets go of the subscriber.
        let tracker = LifetimeTracker()
        let captured = CapturedSubscriber<Int, TestError>()
        let taker = self.makeTaker(handled: Counter())
        taker.subscribe(to: captured.signal())
        captured.subscriber?.keepAlive(tracker.make())
        #expect(tracker.live.value == 1)
        captured.subscriber?.putNext(1)
        #expect(taker.withExtra { $0 } == 1)
        #expect(tracker.live.value == 0, "released with the first value")
        withExtendedLifetime(captured) {}
    }

    @Test func theFirstEventEndsTheSubscriptionBeforeItIsHandledAndTheRestAreDropped() {
        let disposable = CountingDisposable()
        let captured = CapturedSubscriber<Int, TestError>()
        let handled = Counter()
        let taker = self.makeTaker(handled: handled) { taker in
            #expect(disposable.count.value == 1, "disposed before the owner is told")
            #expect(taker.withExtra { $0 } == 4, "recorded when admitted")
            // Re-entrant events from inside the handler are dropped, without deadlock.
            taker.putNext(5)
            taker.putError(TestError())
            taker.putCompletion()
        }
        taker.subscribe(to: captured.signal(disposable: disposable))
        let subscriber = captured.subscriber!
        subscriber.putNext(4)
        subscriber.putNext(6)
        subscriber.putCompletion()
        #expect(handled.value == 1)
        #expect(taker.withExtra { $0 } == 4)
        #expect(disposable.count.value == 1)
        // The owner's dispose after the event does nothing more, and does not wait.
        taker.dispose()
        #expect(disposable.count.value == 1)
    }

    @Test func aTerminalEventIsAFirstEventToo() {
        for (event, expected) in [(0, -1), (1, -2)] {
            let disposable = CountingDisposable()
            let captured = CapturedSubscriber<Int, TestError>()
            let handled = Counter()
            let taker = self.makeTaker(handled: handled) { _ in
                #expect(disposable.count.value == 1, "disposed before the owner is told")
            }
            taker.subscribe(to: captured.signal(disposable: disposable))
            if event == 0 {
                captured.subscriber?.putError(TestError())
            } else {
                captured.subscriber?.putCompletion()
            }
            captured.subscriber?.putNext(1)
            #expect(handled.value == 1)
            #expect(taker.withExtra { $0 } == expected)
        }
    }

    @Test func disposingBeforeTheFirstEventDropsEveryEvent() {
        let disposable = CountingDisposable()
        let captured = CapturedSubscriber<Int, TestError>()
        let handled = Counter()
        let taker = self.makeTaker(handled: handled)
        taker.subscribe(to: captured.signal(disposable: disposable))
        taker.dispose()
        #expect(disposable.count.value == 1)
        captured.subscriber?.putNext(1)
        captured.subscriber?.putCompletion()
        #expect(handled.value == 0)
        #expect(taker.withExtra { $0 } == 0)
    }

    /// Events of every kind from four threads, racing the owner's dispose: at most one event is handled
    /// (exactly one when nobody disposed), and the generator's disposable is disposed exactly once.
    @Test func racingEventsAndDisposalHandleAtMostOneEvent() async {
        for round in 0..<2_000 {
            let disposable = CountingDisposable()
            let captured = CapturedSubscriber<Int, TestError>()
            let handled = Counter()
            // Made and started on one thread (a subscriber checks that), not across the await below.
            let taker = await onThread {
                let taker = self.makeTaker(handled: handled)
                taker.subscribe(to: captured.signal(disposable: disposable))
                return taker
            }
            let subscriber = captured.subscriber!
            let disposes = round % 2 == 0
            await concurrently(4) { index in
                switch index {
                case 0: subscriber.putNext(1)
                case 1: subscriber.putError(TestError())
                case 2: subscriber.putCompletion()
                default: if disposes { taker.dispose() } else { subscriber.putNext(2) }
                }
            }
            #expect(disposes ? handled.value <= 1 : handled.value == 1)
            #expect(disposable.count.value == 1)
            if handled.value == 1 {
                #expect([1, 2, -1, -2].contains(taker.withExtra { $0 }))
            }
        }
    }
}
