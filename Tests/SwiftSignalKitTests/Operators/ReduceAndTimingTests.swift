import Dispatch
import SwiftSignalKitTesting
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

    /// As in the original library: an emitted value reaches the subscriber inside `f`, when `emit` is
    /// called (it was held until `f` returned).
    @Test func reduceLeftEmitsAtOnce() {
        let log = LockedState<[String]>([])
        _ =
            (values([1])
            |> reduceLeft(
                value: 2,
                f: { sum, next, emit in
                    log.withLock { $0.append("before emit") }
                    emit(20)
                    log.withLock { $0.append("after emit") }
                    return sum + next
                })).start(next: { value in log.withLock { $0.append("next \(value)") } })
        #expect(log.withLock { $0 } == ["before emit", "next 20", "after emit", "next 3"])
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
    @Test func concurrentValuesAreAllFolded() async {
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
        await concurrently(4) { _ in
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
        let scheduler = VirtualTimeScheduler()
        let started = Flag()
        let source = Signal<Int, NoError> { subscriber in
            started.set()
            subscriber.putNext(1)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let recorder = SignalRecorder(source |> delay(2, scheduler: scheduler), scheduler: scheduler)
        scheduler.advance(by: 1.9)
        #expect(!started.isSet, "the source starts only when the wait is over")
        scheduler.advance(by: 0.1)
        #expect(recorder.mismatch([.next(1, at: 2), .completed(at: 2)]) == nil)
    }

    /// Once the source's first value has won, `timeout`'s alternate can never start: what it captures is
    /// released then, not when the subscription ends (a probe, 2026-12-02). `timeout(perValue:)` keeps it,
    /// since any later gap may still time out.
    @Test func timeoutReleasesItsAlternateOnceTheSourceHasWon() {
        let scheduler = VirtualTimeScheduler()
        let tracker = LifetimeTracker()
        let pipe = ValuePipe<Int>()
        /// An alternate that holds a tracked object.
        func alternate() -> Signal<Int, NoError> {
            let captured = tracker.make()
            return Signal { subscriber in
                withExtendedLifetime(captured) { subscriber.putCompletion() }
                return EmptyDisposable
            }
        }

        let firstEvent = (pipe.signal() |> timeout(60, scheduler: scheduler, alternate: alternate())).start()
        #expect(tracker.live.value == 1, "held while the timer may still win")
        pipe.putNext(1)
        #expect(tracker.live.value == 0, "released once the source has won")
        firstEvent.dispose()

        let everyGap = (pipe.signal() |> timeout(perValue: 60, scheduler: scheduler, alternate: alternate())).start()
        pipe.putNext(2)
        #expect(tracker.live.value == 1, "every gap may still time out")
        everyGap.dispose()
        #expect(tracker.live.value == 0)
    }

    @Test func disposedDelayNeverStartsTheSource() {
        let scheduler = VirtualTimeScheduler()
        let started = Flag()
        let subscription =
            (Signal<Int, NoError> { _ in
                started.set()
                return EmptyDisposable
            } |> delay(1, scheduler: scheduler)).start()
        subscription.dispose()
        #expect(scheduler.scheduledActionCount == 0, "disposing cancels the wait")
        scheduler.run()
        #expect(!started.isSet)
    }

    @Test func delayOnAQueueStartsTheSourceOnTheQueue() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let onQueue = Flag()
        let source = Signal<Int, NoError> { subscriber in
            if queue.isCurrent() { onQueue.set() }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = (source |> delay(0.01, queue: queue)).start(completed: { done.signal() })
        #expect(await wait(done))
        #expect(onQueue.isSet)
    }

    @Test func suspendAwareDelayStartsLater() async {
        let done = DispatchSemaphore(value: 0)
        _ = (Signal<Int, NoError>.single(1) |> suspendAwareDelay(0.01, queue: Queue())).start(completed: { done.signal() })
        #expect(await wait(done))
    }

    /// Disposing releases the source, so it can never start: no waiting for an absence.
    @Test func disposedSuspendAwareDelayReleasesTheSource() {
        let tracker = LifetimeTracker()
        let subscription: Disposable = {
            let token = tracker.make()
            let source = Signal<Int, NoError> { _ in
                withExtendedLifetime(token) {}
                return EmptyDisposable
            }
            return (source |> suspendAwareDelay(3600, queue: Queue())).start()
        }()
        #expect(tracker.live.value == 1)
        subscription.dispose()
        #expect(tracker.live.value == 0)
    }

    @Test func timeoutSwitchesToAlternateWhenSourceIsSilent() {
        let scheduler = VirtualTimeScheduler()
        let sourceDisposable = CountingDisposable()
        let recorder = SignalRecorder(
            Signal<Int, NoError> { _ in sourceDisposable } |> timeout(1, scheduler: scheduler, alternate: .single(9)), scheduler: scheduler)
        scheduler.advance(by: 0.9)
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: 0.1)
        #expect(recorder.mismatch([.next(9, at: 1), .completed(at: 1)]) == nil)
        #expect(sourceDisposable.count.value == 1)
    }

    @Test func timeoutOnAQueueSwitchesToAlternate() async {
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        _ = (Signal<Int, NoError> { _ in EmptyDisposable } |> timeout(0.01, queue: Queue(), alternate: .single(9)))
            .start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
        #expect(await wait(done))
        #expect(recorder.values == [9])
    }

    @Test func timeoutKeepsASourceThatAnswersInTime() {
        let scheduler = VirtualTimeScheduler()
        let alternateStarted = Flag()
        let alternate = Signal<Int, NoError> { _ in
            alternateStarted.set()
            return EmptyDisposable
        }
        let captured = CapturedSubscriber<Int, NoError>()
        let recorder = SignalRecorder(captured.signal() |> timeout(2, scheduler: scheduler, alternate: alternate), scheduler: scheduler)
        scheduler.advance(by: 1)
        captured.subscriber?.putNext(1)
        #expect(scheduler.scheduledActionCount == 0, "the first event cancels the wait")
        scheduler.advance(by: 10)
        captured.subscriber?.putNext(2)
        #expect(recorder.mismatch([.next(1, at: 1), .next(2, at: 11)]) == nil)
        #expect(!alternateStarted.isSet)
    }

    /// The original started its timer after the source, so a value sent synchronously by the source
    /// could not cancel it, and the alternate replaced a source that had answered.
    @Test func timeoutIsCancelledByASynchronousFirstValue() {
        let scheduler = VirtualTimeScheduler()
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
        let subscription = (source |> timeout(1, scheduler: scheduler, alternate: alternate)).start()
        #expect(scheduler.scheduledActionCount == 0)
        scheduler.run()
        #expect(!alternateStarted.isSet)
        #expect(sourceDisposed.count.value == 0)
        subscription.dispose()
    }
}

@Suite struct TimingStressTests {
    @Test func timeoutRacingTheSourceDeliversFromExactlyOneSide() async {
        let queue = Queue()
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let done = DispatchSemaphore(value: 0)
            let recorder = Recorder<Int, NoError>()
            _ = (captured.signal() |> timeout(0.0001, queue: queue, alternate: .single(-1)))
                .start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
            captured.subscriber?.putNext(1)
            captured.subscriber?.putCompletion()
            #expect(await wait(done))
            let values = recorder.values
            #expect(values == [1] || values == [-1])
        }
    }
}
