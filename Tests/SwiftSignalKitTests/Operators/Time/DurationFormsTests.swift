import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// Each `Duration` form against its `Double` form: the same diagram on virtual time, with a fractional
/// duration, so a form that dropped the attoseconds or read milliseconds as seconds would differ.
@Suite struct DurationFormsTests {
    @Test func conversionKeepsFractionsAndSigns() {
        #expect(Duration.milliseconds(300).secondsForSignals == 0.3)
        #expect(Duration.milliseconds(1500).secondsForSignals == 1.5)
        #expect(Duration.microseconds(-250).secondsForSignals == -0.00025)
        #expect(Duration.zero.secondsForSignals == 0)
        #expect(Duration.seconds(Int64.max).secondsForSignals == Double(Int64.max))
    }

    @Test func debounceThrottleAndDelayTakeCombinesLabels() {
        #expect(play("ab--c-----d|", through: { debounce(for: .milliseconds(2000), scheduler: $0) }, expect: "---b--c----(d|)") == nil)
        #expect(play("ab--c----d--|", through: { throttle(for: .seconds(3), scheduler: $0) }, expect: "---b---c----(d|)") == nil)
        #expect(play("abc|", through: { delay(for: .seconds(2), scheduler: $0) }, expect: "--abc|") == nil)
    }

    @Test func framesAndAdvancesTakeDurations() {
        let scheduler = VirtualTimeScheduler()
        let source: Signal<Int, TestError> = scheduler.signal(
            marbles: "ab--c|", values: letters, error: TestError(), frame: .milliseconds(100))
        let recorder = SignalRecorder(source |> debounce(for: .milliseconds(150), scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: .milliseconds(250))
        #expect(recorder.values == [2], "b at 0.1 s, sent 0.15 s later")
        scheduler.advance(to: .seconds(1))
        #expect(recorder.mismatch(marbles: "---b-(c|)", values: letters, error: TestError(), frame: .milliseconds(50)) != nil)
        #expect(recorder.mismatch([.next(2, at: 0.25), .next(3, at: 0.5), .completed(at: 0.5)]) == nil)
        let plain: Signal<Int, NoError> = scheduler.signal(marbles: "a|", values: letters, frame: .seconds(2))
        let second = SignalRecorder(plain, scheduler: scheduler)
        scheduler.advance(by: .seconds(4))
        #expect(second.mismatch(marbles: "a|", values: letters, frame: .seconds(2)) == nil)
    }

    @Test func timeoutsTakeDurations() {
        let alternate = Signal<Int, TestError>.single(5)
        #expect(play("----a|", through: { timeout(.seconds(2), scheduler: $0, alternate: alternate) }, expect: "--(e|)") == nil)
        #expect(
            play("-a---b|", through: { timeout(perValue: .milliseconds(2000), scheduler: $0, alternate: alternate) }, expect: "-a-(e|)")
                == nil)
    }

    @Test func timerSignalsTakeDurations() {
        let scheduler = VirtualTimeScheduler()
        let ticks = SignalRecorder(interval(.milliseconds(500), scheduler: scheduler), scheduler: scheduler)
        let once = SignalRecorder(timer(.seconds(1), scheduler: scheduler), scheduler: scheduler)
        let repeating = SignalRecorder(timer(.seconds(1), period: .milliseconds(250), scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: .seconds(1.5))
        #expect(ticks.values == [0, 1, 2])
        #expect(once.mismatch([.next(0, at: 1), .completed(at: 1)]) == nil)
        #expect(repeating.values == [0, 1, 2])
        ticks.dispose()
        repeating.dispose()
    }

    @Test func retriesAndBackoffTakeDurations() {
        let scheduler = VirtualTimeScheduler()
        let starts = LockedState<[Double]>([])
        let failing = Signal<Int, TestError> { subscriber in
            starts.withLock { $0.append(scheduler.now) }
            subscriber.putError(TestError())
            return EmptyDisposable
        }
        let recorder = SignalRecorder(
            failing |> retry(.milliseconds(500), maxDelay: .seconds(1), scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: .seconds(3))
        #expect(starts.withLock { $0 } == [0, 0.5, 1.5, 2.5])
        recorder.dispose()

        starts.withLock { $0 = [] }
        let limited = SignalRecorder(
            failing
                |> retry(
                    retryOnError: { _ in true }, delayIncrement: .milliseconds(500), maxDelay: .seconds(10), maxRetries: 2,
                    scheduler: scheduler),
            scheduler: scheduler)
        scheduler.run()
        #expect(starts.withLock { $0 } == [3, 3.5, 4.5])
        limited.dispose()

        let backoff = RetryBackoff.exponential(initial: .milliseconds(500), multiplier: 2, maxDelay: .seconds(3), jitter: .none)
        #expect((0..<4).map { backoff.delay(forRetry: $0) } == [0.5, 1, 2, 3])
    }

    @Test func timersAndSchedulersTakeDurations() {
        let scheduler = VirtualTimeScheduler()
        let fired = LockedState<[Double]>([])
        let timer = Timer(timeout: .milliseconds(750), repeat: true, scheduler: scheduler) { _ in
            fired.withLock { $0.append(scheduler.now) }
        }
        timer.start()
        let once = scheduler.schedule(after: .milliseconds(100)) { fired.withLock { $0.append(-scheduler.now) } }
        scheduler.advance(by: .seconds(2))
        timer.invalidate()
        once.dispose()
        #expect(fired.withLock { $0 } == [-0.1, 0.75, 1.5])
    }

    @Test func queueFormsRunOnTheQueue() async {
        let queue = Queue(name: "duration-forms")
        let ran = Counter()
        queue.after(.milliseconds(1)) { ran.increment() }  // no-sleep-check: tests Queue.after's Duration form
        let timer = Timer(timeout: .milliseconds(1), repeat: false, completion: { ran.increment() }, queue: queue)
        timer.start()
        let delayed = (Signal<Int, NoError>.single(1) |> delay(for: .milliseconds(1), queue: queue))
            .start(next: { _ in ran.increment() })
        let wallClock = (Signal<Int, NoError>.single(1) |> suspendAwareDelay(.milliseconds(1), queue: queue))
            .start(next: { _ in ran.increment() })
        let timedOut = (Signal<Int, NoError>.never() |> timeout(.milliseconds(1), queue: queue, alternate: .single(2)))
            .start(next: { _ in ran.increment() })
        #expect(await spin(until: { ran.value == 5 }))
        withExtendedLifetime(timer) {}
        delayed.dispose()
        wallClock.dispose()
        timedOut.dispose()
    }

    /// A negative `Duration` where a length cannot be negative stops the program with a message that
    /// names the API and the argument and shows the duration as written (before: the `Double` form's
    /// message, "-1.0" seconds and a hint about `.infinity`, which no `Duration` can be).
    @Test func aNegativeDurationStopsWithAMessageShowingTheDuration() async {
        let period = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = interval(.seconds(-1), scheduler: VirtualTimeScheduler())
        }
        let periodMessage = String(decoding: period?.standardErrorContent ?? [], as: UTF8.self)
        #expect(periodMessage.contains("interval(_:scheduler:): period must not be negative, got -1.0 seconds"))
        let timer = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Timer(timeout: .milliseconds(-250), repeat: true, completion: {}, queue: Queue(name: "negative"))
        }
        let timerMessage = String(decoding: timer?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            timerMessage.contains(
                "Timer(timeout:repeat:completion:queue:): a repeating timer's timeout must not be negative, got -0.25 seconds"))
        let retrying = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let operation: (Signal<Int, TestError>) -> Signal<Int, NoError> = retry(
                .seconds(1), maxDelay: .seconds(-2), scheduler: VirtualTimeScheduler())
            _ = operation
        }
        let retryingMessage = String(decoding: retrying?.standardErrorContent ?? [], as: UTF8.self)
        #expect(retryingMessage.contains("retry(_:maxDelay:scheduler:): maxDelay must not be negative, got -2.0 seconds"))
        let backoff = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.exponential(initial: .seconds(-3), maxDelay: .seconds(10))
        }
        let backoffMessage = String(decoding: backoff?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            backoffMessage.contains(
                "RetryBackoff.exponential(initial:multiplier:maxDelay:jitter:random:): initial must not be negative, got -3.0 seconds"))
    }

    /// A one-shot `Duration` timer may be negative, as the `Double` form's: it fires at once.
    @Test func aNegativeOneShotTimerIsNotRefused() async {
        let fired = Flag()
        let timer = Timer(timeout: .seconds(-1), repeat: false, completion: { fired.set() }, queue: Queue(name: "once"))
        timer.start()
        #expect(await spin(until: { fired.isSet }))
        withExtendedLifetime(timer) {}
    }
}
