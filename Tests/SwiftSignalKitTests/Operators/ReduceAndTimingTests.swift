import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct ReduceTests {
    @Test func reduceLeftSendsTheFoldOnCompletion() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(values([1, 2, 3]) |> reduceLeft(value: 10, f: +))
        #expect(recorder.events == [.next(16), .completed])
    }

    @Test func reduceLeftWithEmit() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(
            values([1, 2, 3])
                |> reduceLeft(
                    value: 0,
                    f: { sum, next, emit in
                        if next == 2 { emit(100) }
                        return sum + next
                    }))
        #expect(recorder.events == [.next(100), .next(6), .completed])
    }

    @Test func reduceLeftWithGeneratorRunsStepsInOrder() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(
            values([1, 2, 3])
                |> reduceLeft(
                    0,
                    generator: { sum, next in
                        .single((sum + next, next == 3 ? .Some(sum) : .None))
                    }))
        #expect(recorder.events == [.next(3), .next(6), .completed])
    }

    @Test func reduceLeftPassesErrorsOn() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(Signal<Int, TestError>.fail(TestError(code: 6)) |> reduceLeft(value: 0, f: +))
        #expect(recorder.events == [.error(TestError(code: 6))])
    }
}

@Suite struct ReduceStressTests {
    /// Bug 5 of the original: the synchronous forms mutated an unlocked accumulator, so values sent from
    /// several threads were lost.
    @Test func concurrentValuesAreAllFolded() {
        let pipe = ValuePipe<Int>()
        let done = ValuePipe<Void>()
        let recorder = Recorder<Int, NoError>()
        let source = Signal<Int, NoError> { subscriber in
            let values = pipe.signal().start(next: { subscriber.putNext($0) })
            let end = done.signal().start(next: { subscriber.putCompletion() })
            return ActionDisposable {
                values.dispose()
                end.dispose()
            }
        }
        recorder.start(source |> reduceLeft(value: 0, f: +))
        concurrently(4) { _ in
            for _ in 0..<10_000 {
                pipe.putNext(1)
            }
        }
        done.putNext(())
        #expect(recorder.events == [.next(40_000), .completed])
    }
}

@Suite struct TimingTests {
    @Test func delayPostponesTheSubscription() {
        let queue = Queue()
        let started = Flag()
        let done = DispatchSemaphore(value: 0)
        let source = Signal<Int, NoError> { subscriber in
            started.set()
            subscriber.putNext(1)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let recorder = Recorder<Int, NoError>()
        _ = (source |> delay(0.02, queue: queue)).start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
        #expect(!started.isSet, "the source starts only when the timer fires")
        #expect(wait(done))
        #expect(recorder.values == [1])
    }

    @Test func disposedDelayNeverStartsTheSource() {
        let queue = Queue()
        let started = Flag()
        let subscription =
            (Signal<Int, NoError> { _ in
                started.set()
                return EmptyDisposable
            } |> delay(0.01, queue: queue)).start()
        subscription.dispose()
        let check = DispatchSemaphore(value: 0)
        queue.after(0.05) { check.signal() }
        #expect(wait(check))
        #expect(!started.isSet)
    }

    @Test func suspendAwareDelayStartsLater() {
        let done = DispatchSemaphore(value: 0)
        _ = (Signal<Int, NoError>.single(1) |> suspendAwareDelay(0.01, queue: Queue())).start(completed: { done.signal() })
        #expect(wait(done))
        let started = Flag()
        let queue = Queue()
        let cancelled =
            (Signal<Int, NoError> { _ in
                started.set(); return EmptyDisposable
            } |> suspendAwareDelay(0.01, queue: queue)).start()
        cancelled.dispose()
        let check = DispatchSemaphore(value: 0)
        queue.after(0.05) { check.signal() }
        #expect(wait(check))
        #expect(!started.isSet)
    }

    @Test func timeoutSwitchesToAlternateWhenSourceIsSilent() {
        let sourceDisposable = CountingDisposable()
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        _ = (Signal<Int, NoError> { _ in sourceDisposable } |> timeout(0.01, queue: Queue(), alternate: .single(9)))
            .start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
        #expect(wait(done))
        #expect(recorder.values == [9])
        #expect(sourceDisposable.count.value == 1)
    }

    @Test func timeoutKeepsASourceThatAnswersInTime() {
        let queue = Queue()
        let alternateStarted = Flag()
        let alternate = Signal<Int, NoError> { _ in
            alternateStarted.set()
            return EmptyDisposable
        }
        let captured = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(captured.signal() |> timeout(0.02, queue: queue, alternate: alternate))
        captured.subscriber?.putNext(1)
        let check = DispatchSemaphore(value: 0)
        queue.after(0.06) { check.signal() }
        #expect(wait(check))
        captured.subscriber?.putNext(2)
        #expect(recorder.values == [1, 2])
        #expect(!alternateStarted.isSet)
    }

    /// The original started its timer after the source, so a value sent synchronously by the source
    /// could not cancel it, and the alternate replaced a source that had answered.
    @Test func timeoutIsCancelledByASynchronousFirstValue() {
        let queue = Queue()
        let alternateStarted = Flag()
        let alternate = Signal<Int, NoError> { _ in
            alternateStarted.set()
            return EmptyDisposable
        }
        let sourceDisposed = CountingDisposable()
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(1)
            return sourceDisposed
        }
        let subscription = (source |> timeout(0.01, queue: queue, alternate: alternate)).start()
        let check = DispatchSemaphore(value: 0)
        queue.after(0.05) { check.signal() }
        #expect(wait(check))
        #expect(!alternateStarted.isSet)
        #expect(sourceDisposed.count.value == 0)
        subscription.dispose()
    }

    @Test func timeoutRaceStateMachine() {
        var race = TimeoutRace.waiting
        let sourceFirst = race.sourceEvent()
        let timerAfterSource = race.timerFired()
        #expect(sourceFirst && !timerAfterSource)
        var lost = TimeoutRace.waiting
        let timerFirst = lost.timerFired()
        let sourceAfterTimer = lost.sourceEvent()
        #expect(timerFirst && !sourceAfterTimer)
    }
}

@Suite struct TimingStressTests {
    @Test func timeoutRacingTheSourceDeliversFromExactlyOneSide() {
        let queue = Queue()
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let done = DispatchSemaphore(value: 0)
            let recorder = Recorder<Int, NoError>()
            _ = (captured.signal() |> timeout(0.0001, queue: queue, alternate: .single(-1)))
                .start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
            captured.subscriber?.putNext(1)
            captured.subscriber?.putCompletion()
            #expect(wait(done))
            let values = recorder.values
            #expect(values == [1] || values == [-1])
        }
    }
}
