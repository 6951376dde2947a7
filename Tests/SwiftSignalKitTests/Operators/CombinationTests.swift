import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct CombineLatestInitialValuesTests {
    @Test func threeAndFourSourcesSendTheInitialTupleAtOnce() {
        let a = ValuePipe<Int>()
        let b = ValuePipe<String>()
        let c = ValuePipe<Bool>()
        let three = Recorder<String, NoError>()
        three.start(combineLatest(a.signal(), 1, b.signal(), "x", c.signal(), false) |> map { "\($0)\($1)\($2)" })
        #expect(three.values == ["1xfalse"])
        b.putNext("y")
        c.putNext(true)
        #expect(three.values == ["1xfalse", "1yfalse", "1ytrue"])

        let d = ValuePipe<Double>()
        let four = Recorder<String, NoError>()
        four.start(combineLatest(a.signal(), 1, b.signal(), "x", c.signal(), false, d.signal(), 0.5) |> map { "\($0)\($1)\($2)\($3)" })
        d.putNext(1.5)
        #expect(four.values == ["1xfalse0.5", "1xfalse1.5"])
    }

    @Test func completesWhenEverySourceCompletesAndFailsOnTheFirstError() {
        let completed = Recorder<Int, TestError>()
        completed.start(
            combineLatest(values([1], TestError.self), 0, values([2], TestError.self), 0, values([3], TestError.self), 0)
                |> map { $0 + $1 + $2 })
        #expect(completed.events == [.next(0), .next(1), .next(3), .next(6), .completed])

        let failed = Recorder<Int, TestError>()
        failed.start(
            combineLatest(Signal<Int, TestError>.fail(TestError(code: 1)), 0, values([2], TestError.self), 0, Signal.never(), 0)
                |> map { $0 + $1 + $2 })
        #expect(failed.events == [.next(0), .error(TestError(code: 1))])
    }

    @Test func arrayFormSendsTheInitialValuesAtOnce() {
        let pipes = (0..<3).map { _ in ValuePipe<Int>() }
        let recorder = Recorder<[Int], NoError>()
        recorder.start(combineLatest(pipes.map { $0.signal() }, initialValues: [1, 2, 3]))
        pipes[1].putNext(20)
        #expect(recorder.values == [[1, 2, 3], [1, 20, 3]])

        let empty = Recorder<[Int], NoError>()
        empty.start(combineLatest([Signal<Int, NoError>](), initialValues: []))
        #expect(empty.events == [.next([]), .completed])
    }

    @Test func queueArgumentDeliversOnTheQueue() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let offQueue = Flag()
        _ = combineLatest(queue: queue, [values([1]), values([2])], initialValues: [0, 0]).start(
            next: { values in
                // The initial array is sent on the starting thread; every later one on the queue.
                if values != [0, 0] && !queue.isCurrent() { offQueue.set() }
            }, completed: { done.signal() })
        #expect(await wait(done))
        #expect(!offQueue.isSet)
    }

    @Test func mismatchedCountsStopWithAMessageNamingBoth() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = combineLatest([Signal<Int, NoError>.never(), Signal.never(), Signal.never()], initialValues: [1, 2])
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("got 3 signals and 2 initial values"))
    }
}

@Suite struct StartWithTests {
    @Test func sendsTheValuesBeforeTheSource() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(values([3, 4], TestError.self) |> startWith(1, 2))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .next(4), .completed])

        let failing = Recorder<Int, TestError>()
        failing.start(Signal<Int, TestError>.fail(TestError(code: 1)) |> startWith(0))
        #expect(failing.events == [.next(0), .error(TestError(code: 1))])

        let single = Recorder<[Int], NoError>()
        single.start(values([[1]]) |> startWith([]))
        #expect(single.values == [[], [1]], "an array value is one value")
    }

    @Test func theSourceIsNotStartedWhenDownstreamTookEnough() {
        let started = Counter()
        let source = Signal<Int, NoError> { _ in
            started.increment()
            return EmptyDisposable
        }
        let recorder = Recorder<Int, NoError>()
        recorder.start(source |> startWith(1, 2) |> take(1))
        #expect(recorder.events == [.next(1), .completed])
        #expect(started.value == 0)

        recorder.start(source |> startWith(1))
        #expect(started.value == 1)
    }

    @Test func disposingDisposesTheSource() {
        let disposable = CountingDisposable()
        let source = CapturedSubscriber<Int, NoError>()
        let subscription = (source.signal(disposable: disposable) |> startWith(0)).start()
        subscription.dispose()
        #expect(disposable.count.value == 1)
    }
}

@Suite struct SkipTests {
    @Test func dropsTheFirstValues() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(values([1, 2, 3, 4], TestError.self) |> skip(2))
        #expect(recorder.events == [.next(3), .next(4), .completed])

        let all = Recorder<Int, NoError>()
        all.start(values([1, 2]) |> skip(5))
        #expect(all.events == [.completed])

        let failing = Recorder<Int, TestError>()
        failing.start(Signal<Int, TestError>.fail(TestError(code: 1)) |> skip(1))
        #expect(failing.events == [.error(TestError(code: 1))])
    }

    @Test func skipZeroReturnsTheSource() {
        let source = values([1, 2])
        #expect((source |> skip(0)) === source)
    }

    @Test func negativeCountStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let operation: (Signal<Int, NoError>) -> Signal<Int, NoError> = skip(-3)
            _ = operation
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("skip(_:) needs a count of at least 0, got -3"))
    }
}

@Suite struct TakeUntilSignalTests {
    @Test func completesOnTheNotifiersFirstValueAndDisposesBoth() {
        let source = CapturedSubscriber<Int, TestError>()
        let notifier = CapturedSubscriber<String, NoError>()
        let sourceDisposable = CountingDisposable()
        let notifierDisposable = CountingDisposable()
        let recorder = Recorder<Int, TestError>()
        recorder.start(source.signal(disposable: sourceDisposable) |> take(until: notifier.signal(disposable: notifierDisposable)))
        source.subscriber?.putNext(1)
        source.subscriber?.putNext(2)
        notifier.subscriber?.putNext("stop")
        source.subscriber?.putNext(3)
        #expect(recorder.events == [.next(1), .next(2), .completed])
        #expect(sourceDisposable.count.value == 1)
        #expect(notifierDisposable.count.value == 1)
    }

    @Test func aNotifierThatEndsWithoutAValueIsIgnored() {
        let completing = Recorder<Int, NoError>()
        completing.start(values([1, 2]) |> take(until: Signal<Void, NoError>.complete()))
        #expect(completing.events == [.next(1), .next(2), .completed])

        let source = CapturedSubscriber<Int, TestError>()
        let failing = Recorder<Int, TestError>()
        failing.start(source.signal() |> take(until: Signal<Void, TestError>.fail(TestError(code: 5))))
        source.subscriber?.putNext(1)
        source.subscriber?.putError(TestError(code: 6))
        #expect(failing.events == [.next(1), .error(TestError(code: 6))], "the notifier's error is not the result's")
    }

    @Test func aNotifierThatFiresAtOnceKeepsTheSourceFromStarting() {
        let started = Counter()
        let source = Signal<Int, NoError> { _ in
            started.increment()
            return EmptyDisposable
        }
        let recorder = Recorder<Int, NoError>()
        recorder.start(source |> take(until: Signal<Int, NoError>.single(0)))
        #expect(recorder.events == [.completed])
        #expect(started.value == 0)
    }

    @Test func disposingDisposesSourceAndNotifier() {
        let sourceDisposable = CountingDisposable()
        let notifierDisposable = CountingDisposable()
        let source = CapturedSubscriber<Int, NoError>()
        let notifier = CapturedSubscriber<Int, NoError>()
        let signal = source.signal(disposable: sourceDisposable) |> take(until: notifier.signal(disposable: notifierDisposable))
        let subscription = signal.start()
        subscription.dispose()
        #expect(sourceDisposable.count.value == 1)
        #expect(notifierDisposable.count.value == 1)
    }

    /// The closure form and the signal form share the label `until:`: each call site picks its own.
    @Test func closureAndSignalFormsResolve() {
        let byClosure = Recorder<Int, NoError>()
        byClosure.start(values([1, 2, 3]) |> take(until: { SignalTakeAction(passthrough: true, complete: $0 == 2) }))
        #expect(byClosure.events == [.next(1), .next(2), .completed])

        let byTrailingClosure = Recorder<Int, NoError>()
        byTrailingClosure.start(
            values([1, 2, 3])
                |> take { value in
                    SignalTakeAction(passthrough: value < 2, complete: value == 2)
                })
        #expect(byTrailingClosure.events == [.next(1), .completed])

        let stop = ValuePipe<Void>()
        let bySignal = Recorder<Int, NoError>()
        let pipe = ValuePipe<Int>()
        bySignal.start(pipe.signal() |> take(until: stop.signal()))
        pipe.putNext(1)
        stop.putNext(())
        pipe.putNext(2)
        #expect(bySignal.events == [.next(1), .completed])
    }
}

@Suite struct CombinationStressTests {
    @Test func skipFromManyThreadsDropsExactlyCount() async {
        let source = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(source.signal() |> skip(250))
        await concurrentlyTogether(4) { thread in
            for value in 0..<1_000 {
                source.subscriber!.putNext(thread * 1_000 + value)
            }
        }
        #expect(recorder.values.count == 4_000 - 250)
        #expect(Set(recorder.values).count == 4_000 - 250)
    }

    /// The notifier firing while the source sends from other threads: exactly one completion, and
    /// (once the senders have returned) nothing more.
    @Test func takeUntilRacingSendersCompletesOnce() async {
        for _ in 0..<100 {
            let source = CapturedSubscriber<Int, NoError>()
            let notifier = CapturedSubscriber<Void, NoError>()
            let sourceDisposable = CountingDisposable()
            let completions = Counter()
            let subscription = (source.signal(disposable: sourceDisposable) |> take(until: notifier.signal())).start(
                completed: { completions.increment() })
            await concurrentlyTogether(3) { thread in
                if thread == 0 {
                    notifier.subscriber!.putNext(())
                } else {
                    for value in 0..<200 { source.subscriber!.putNext(value) }
                }
            }
            #expect(completions.value == 1)
            #expect(sourceDisposable.count.value == 1)
            subscription.dispose()
        }
    }
}
