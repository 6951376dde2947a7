import Dispatch
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

@Suite struct IntervalAndTimerTests {
    @Test func intervalCountsEveryPeriodFromTheSubscription() {
        let scheduler = VirtualTimeScheduler()
        scheduler.advance(by: 0.5)
        let recorder = SignalRecorder(interval(2, scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: 7)
        #expect(recorder.mismatch([.next(0, at: 2.5), .next(1, at: 4.5), .next(2, at: 6.5)]) == nil)
        recorder.dispose()
        #expect(scheduler.scheduledActionCount == 0, "disposing stops the timer")
    }

    @Test func eachSubscriptionHasItsOwnCount() {
        let scheduler = VirtualTimeScheduler()
        let ticks = interval(1, scheduler: scheduler)
        let first = SignalRecorder(ticks, scheduler: scheduler)
        scheduler.advance(by: 2)
        let second = SignalRecorder(ticks, scheduler: scheduler)
        scheduler.advance(by: 1)
        #expect(first.values == [0, 1, 2])
        #expect(second.values == [0])
    }

    @Test func oneShotTimerSendsZeroAndCompletes() {
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(timer(3, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "---(a|)", values: ["a": 0]) == nil)
    }

    @Test func timerWithAPeriodGoesOn() {
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(timer(3, period: 1, scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: 6)
        #expect(recorder.mismatch(marbles: "---abcd", values: ["a": 0, "b": 1, "c": 2, "d": 3]) == nil)
    }

    @Test func infinitePeriodNeverSends() {
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(interval(.infinity, scheduler: scheduler), scheduler: scheduler)
        #expect(scheduler.scheduledActionCount == 0)
        scheduler.run()
        #expect(recorder.events.isEmpty)
    }

    @Test func intervalOnAQueueTicks() async {
        let done = DispatchSemaphore(value: 0)
        let subscription = (interval(0.001) |> take(3)).start(completed: { done.signal() })
        #expect(await wait(done))
        subscription.dispose()
    }

    @Test func negativePeriodIsAPreconditionFailureNamingTheArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = interval(-1, scheduler: VirtualTimeScheduler())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("interval(_:scheduler:): period must be a number of seconds ≥ 0"))
    }
}

@Suite struct PerValueTimeoutTests {
    @Test func aGapLongerThanTheIntervalSwitchesToTheAlternate() {
        let mismatch = play(
            "-a--b------c|",
            through: { scheduler in timeout(perValue: 3, scheduler: scheduler, alternate: .fail(TestError())) },
            expect: "-a--b--#")
        #expect(mismatch == nil)
    }

    @Test func aSourceThatKeepsSendingIsNotTimedOut() {
        let mismatch = play(
            "-a-b-c-d|", through: { scheduler in timeout(perValue: 2, scheduler: scheduler, alternate: .fail(TestError())) },
            expect: "-a-b-c-d|")
        #expect(mismatch == nil)
    }

    @Test func theFirstWaitStartsAtSubscription() {
        let mismatch = play(
            "----a|", through: { scheduler in timeout(perValue: 2, scheduler: scheduler, alternate: .single(5)) }, expect: "--(e|)")
        #expect(mismatch == nil)
    }

    /// "A gap of more than the interval": an event exactly one interval after the subscription passes,
    /// as one exactly one interval after a value does. The first wait was scheduled before the source
    /// was subscribed to, so at that instant it ran first and timed out.
    @Test func anEventExactlyOneIntervalAfterTheSubscriptionOrAValuePasses() {
        #expect(
            play("--a-b|", through: { timeout(perValue: 2, scheduler: $0, alternate: .fail(TestError())) }, expect: "--a-b|")
                == nil)
        #expect(play("--a|", through: { timeout(2, scheduler: $0, alternate: .fail(TestError())) }, expect: "--a|") == nil)
        #expect(play("--|", through: { timeout(2, scheduler: $0, alternate: .fail(TestError())) }, expect: "--|") == nil)
    }

    /// The same when the source schedules its event after the wait was armed: the library's own
    /// `interval` schedules its next tick after delivering one, and a second `delay` schedules its
    /// subscription only once the first has fired. Decided when the wait ended, they timed out.
    @Test func anEventDueExactlyAtTheWaitsEndPassesWhenItsSourceScheduledItLater() {
        let scheduler = VirtualTimeScheduler()
        let ticks = SignalRecorder(
            interval(1, scheduler: scheduler) |> take(3) |> timeout(perValue: 1, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        let delayed = SignalRecorder(
            Signal<Int, NoError>.single(7) |> delay(1, scheduler: scheduler) |> delay(1, scheduler: scheduler)
                |> timeout(2, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        scheduler.run()
        #expect(ticks.mismatch([.next(0, at: 1), .next(1, at: 2), .next(2, at: 3), .completed(at: 3)]) == nil)
        #expect(delayed.mismatch([.next(7, at: 2), .completed(at: 2)]) == nil)
    }

    /// An event that takes several actions at the instant the wait ends to arrive (here two
    /// `deliverOn` hops) passes too: the timeout is decided at the end of the instant. Decided in one
    /// action scheduled when the wait's timer fired, it came before the hops and timed out. A nanosecond
    /// later still times out.
    @Test func anEventThatTakesSeveralActionsToArriveWhenTheWaitEndsPasses() {
        let scheduler = VirtualTimeScheduler()
        let hopped = SignalRecorder(
            Signal<Int, NoError>.single(7) |> delay(2, scheduler: scheduler) |> deliverOn(scheduler) |> deliverOn(scheduler)
                |> timeout(2, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        let ticks = SignalRecorder(
            interval(1, scheduler: scheduler) |> take(3) |> deliverOn(scheduler) |> deliverOn(scheduler)
                |> timeout(perValue: 1, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        let late = SignalRecorder(
            Signal<Int, NoError>.single(7) |> delay(2.000_000_001, scheduler: scheduler) |> deliverOn(scheduler)
                |> timeout(2, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        scheduler.run()
        #expect(hopped.mismatch([.next(7, at: 2), .completed(at: 2)]) == nil)
        #expect(ticks.mismatch([.next(0, at: 1), .next(1, at: 2), .next(2, at: 3), .completed(at: 3)]) == nil)
        #expect(late.mismatch([.next(-1, at: 2), .completed(at: 2)]) == nil)
    }

    /// Two waits that end at one instant decide in the order they were armed, as on a real queue: an
    /// inner `timeout` armed first gives its alternate before the outer one decides, and one armed
    /// after a hop (so later) gives it after the outer one has timed out.
    @Test func twoWaitsEndingAtOneInstantDecideInTheOrderTheyWereArmed() {
        let scheduler = VirtualTimeScheduler()
        let request = Signal<Int, NoError>.never() |> timeout(2, scheduler: scheduler, alternate: .single(7))
        let innerFirst = SignalRecorder(
            request |> timeout(2, scheduler: scheduler, alternate: .single(-1)), scheduler: scheduler)
        let innerAfterAHop = SignalRecorder(
            Signal<Int, NoError>.single(0) |> deliverOn(scheduler) |> mapToSignal { _ in request }
                |> timeout(2, scheduler: scheduler, alternate: .single(-1)),
            scheduler: scheduler)
        scheduler.run()
        #expect(innerFirst.mismatch([.next(7, at: 2), .completed(at: 2)]) == nil)
        #expect(innerAfterAHop.mismatch([.next(-1, at: 2), .completed(at: 2)]) == nil)
    }

    @Test func endingTheSourceOrDisposingCancelsTheWait() {
        let scheduler = VirtualTimeScheduler()
        let completing = SignalRecorder(
            scheduler.signal(marbles: "a|", values: letters, error: TestError())
                |> timeout(perValue: 5, scheduler: scheduler, alternate: .fail(TestError())), scheduler: scheduler)
        scheduler.advance(by: 1)
        #expect(completing.mismatch(marbles: "a|", values: letters, error: TestError()) == nil)
        #expect(scheduler.scheduledActionCount == 0)
        let disposed = SignalRecorder(
            Signal<Int, TestError>.never() |> timeout(perValue: 5, scheduler: scheduler, alternate: .fail(TestError())),
            scheduler: scheduler)
        disposed.dispose()
        #expect(scheduler.scheduledActionCount == 0)
    }

}

@Suite struct PerValueTimeoutStressTests {
    @Test func racingTheTimerDeliversFromExactlyOneSide() async {
        let queue = Queue()
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let done = DispatchSemaphore(value: 0)
            let recorder = Recorder<Int, NoError>()
            _ = (captured.signal() |> timeout(perValue: 0.0001, scheduler: queue, alternate: .single(-1)))
                .start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
            captured.subscriber?.putNext(1)
            captured.subscriber?.putCompletion()
            #expect(await wait(done))
            let values = recorder.values
            #expect(values == [1] || values == [-1] || values == [1, -1])
        }
    }
}

@Suite struct TimerSignalsAndRetryStressTests {
    /// Disposing while ticks are scheduled on a real queue: no value after `dispose()` returned, and the
    /// timer and its handler are released.
    @Test func intervalDisposedWhileFiring() async {
        let queue = Queue(name: "ticks")
        let tracker = LifetimeTracker()
        for _ in 0..<100 {
            let afterDispose = Flag()
            let disposed = Flag()
            let fired = DispatchSemaphore(value: 0)
            let token = tracker.make()
            let subscription = interval(0.0001, scheduler: queue).start(next: { _ in
                withExtendedLifetime(token) {}
                if disposed.isSet { afterDispose.set() }
                fired.signal()
            })
            #expect(await wait(fired))
            // On the queue, so that no tick runs between the disposal and the flag; ticks already
            // scheduled must then find the subscription disposed.
            queue.sync {
                subscription.dispose()
                disposed.set()
            }
            await drain(queue)
            #expect(!afterDispose.isSet, "a tick after dispose() returned")
        }
        await drain(queue)
        #expect(await spin(until: { tracker.live.value == 0 }), "every subscription's handler is released")
    }

    /// Disposing while a retry is scheduled on a real queue: the source is never started after
    /// `dispose()` returned, and everything is released.
    @Test func backoffRetryDisposedWhileWaiting() async {
        let queue = Queue(name: "retries")
        let tracker = LifetimeTracker()
        for _ in 0..<100 {
            let startsAfterDispose = Counter()
            let disposed = Flag()
            let failed = DispatchSemaphore(value: 0)
            let token = tracker.make()
            let source = Signal<Int, TestError> { subscriber in
                withExtendedLifetime(token) {}
                if disposed.isSet { startsAfterDispose.increment() }
                subscriber.putError(TestError())
                failed.signal()
                return EmptyDisposable
            }
            let backoff = RetryBackoff.exponential(initial: 0.0001, maxDelay: 0.0001, jitter: .none)
            let subscription = (source |> retry(backoff, maxAttempts: 1_000, scheduler: queue)).start()
            #expect(await wait(failed))
            queue.sync {
                subscription.dispose()
                disposed.set()
            }
            await drain(queue)
            #expect(startsAfterDispose.value == 0, "a retry after dispose() returned")
        }
        await drain(queue)
        #expect(await spin(until: { tracker.live.value == 0 }), "every source is released")
    }
}
