import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// A source that records the virtual time of each subscription, sends `attempt` and fails with it.
private func failingSource(_ scheduler: VirtualTimeScheduler, starts: LockedState<[Double]>) -> Signal<Int, TestError> {
    return Signal { subscriber in
        let attempt = starts.withLock { starts -> Int in
            starts.append(scheduler.now)
            return starts.count
        }
        subscriber.putNext(attempt)
        subscriber.putError(TestError(code: attempt))
        return EmptyDisposable
    }
}

@Suite struct RetryOnVirtualTimeTests {
    @Test func waitsGrowByTheIncrementUpToTheMaximum() {
        let scheduler = VirtualTimeScheduler()
        let starts = LockedState<[Double]>([])
        let recorder = SignalRecorder(
            failingSource(scheduler, starts: starts) |> retry(1, maxDelay: 2.5, scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: 10)
        // Waits 1, 2, 2.5, 2.5: attempts at 0, 1, 3, 5.5, 8.
        #expect(starts.withLock { $0 } == [0, 1, 3, 5.5, 8])
        #expect(recorder.values == [1, 2, 3, 4, 5])
        recorder.dispose()
        #expect(scheduler.scheduledActionCount == 0, "disposing cancels the wait")
    }

    @Test func retryOnErrorStopsAfterMaxRetries() {
        let scheduler = VirtualTimeScheduler()
        let starts = LockedState<[Double]>([])
        let recorder = SignalRecorder(
            failingSource(scheduler, starts: starts)
                |> retry(retryOnError: { _ in true }, delayIncrement: 1, maxDelay: 10, maxRetries: 2, scheduler: scheduler),
            scheduler: scheduler)
        scheduler.run()
        #expect(starts.withLock { $0 } == [0, 1, 3])
        #expect(recorder.events.last?.event == .error(TestError(code: 3)))
    }
}

@Suite struct RetryBackoffTests {
    @Test func boundsGrowExponentiallyUpToTheCap() {
        let backoff = RetryBackoff.exponential(initial: 0.5, multiplier: 2, maxDelay: 3, jitter: .none)
        #expect((0..<5).map { backoff.delay(forRetry: $0) } == [0.5, 1, 2, 3, 3])
    }

    @Test func fullJitterDrawsBelowTheBound() {
        let backoff = RetryBackoff.exponential(initial: 1, maxDelay: 100, random: { 0.25 })
        #expect((0..<4).map { backoff.delay(forRetry: $0) } == [0.25, 0.5, 1, 2])
        let wild = RetryBackoff.exponential(initial: 1, maxDelay: 100, random: { 7 })
        #expect(wild.delay(forRetry: 1) == 2, "a random source above 1 is clamped to the bound")
    }

    @Test func hugeRetryNumbersStayAtTheCap() {
        let capped = RetryBackoff.exponential(initial: 1, multiplier: 10, maxDelay: 60, jitter: .none)
        #expect(capped.delay(forRetry: 10_000) == 60)
        let uncapped = RetryBackoff.exponential(initial: 1, multiplier: 10, maxDelay: .infinity, jitter: .none)
        #expect(uncapped.delay(forRetry: 10_000) == TimeIntervalValidation.maximumSeconds)
        let zero = RetryBackoff.exponential(initial: 0, multiplier: 10, maxDelay: .infinity, jitter: .none)
        #expect(zero.delay(forRetry: 10_000) == 0, "0 × growth stays 0")
    }

    @Test func retriesWithTheDrawnWaitsAndGivesUpAfterMaxAttempts() {
        let scheduler = VirtualTimeScheduler()
        let starts = LockedState<[Double]>([])
        let fractions = LockedState<[Double]>([0.5, 1, 0.1])
        let backoff = RetryBackoff.exponential(initial: 2, maxDelay: 5) { fractions.withLock { $0.removeFirst() } }
        let recorder = SignalRecorder(
            failingSource(scheduler, starts: starts) |> retry(backoff, maxAttempts: 4, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        // Bounds 2, 4, 5; waits 1, 4, 0.5: attempts at 0, 1, 5, 5.5, then the fourth error is sent.
        #expect(starts.withLock { $0 } == [0, 1, 5, 5.5])
        #expect(recorder.events.last == .error(TestError(code: 4), at: 5.5))
    }

    @Test func errorsThePredicateRejectsAreSentAtOnce() {
        let scheduler = VirtualTimeScheduler()
        let starts = LockedState<[Double]>([])
        let recorder = SignalRecorder(
            failingSource(scheduler, starts: starts)
                |> retry(.exponential(initial: 1, maxDelay: 1), maxAttempts: 10, scheduler: scheduler) { error in error.code < 2 },
            scheduler: scheduler)
        scheduler.run()
        #expect(starts.withLock { $0 }.count == 2)
        #expect(recorder.events.last?.event == .error(TestError(code: 2)))
    }

    @Test func aCompletionEndsTheRetries() {
        let scheduler = VirtualTimeScheduler()
        let source = scheduler.signal(marbles: "a|", values: letters, error: TestError())
        let recorder = SignalRecorder(
            source |> retry(.exponential(initial: 1, maxDelay: 1), maxAttempts: 3, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "a|", values: letters, error: TestError()) == nil)
    }

    @Test func nonsenseArgumentsArePreconditionFailures() async {
        await #expect(processExitsWith: .failure) {
            _ = RetryBackoff.exponential(initial: .nan, maxDelay: 1)
        }
        await #expect(processExitsWith: .failure) {
            _ = RetryBackoff.exponential(initial: 1, multiplier: 0.5, maxDelay: 1)
        }
        await #expect(processExitsWith: .failure) {
            _ = RetryBackoff.exponential(initial: 1, maxDelay: -1)
        }
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: (Signal<Int, TestError>) -> Signal<Int, TestError> = retry(.exponential(initial: 1, maxDelay: 1), maxAttempts: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("maxAttempts must be at least 1"))
    }
}
