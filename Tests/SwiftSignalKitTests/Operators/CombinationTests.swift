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

    @Test func queueArgumentDeliversOnTheQueue() {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let offQueue = Flag()
        _ = combineLatest(queue: queue, [values([1]), values([2])], initialValues: [0, 0]).start(
            next: { values in
                // The initial array is sent on the starting thread; every later one on the queue.
                if values != [0, 0] && !queue.isCurrent() { offQueue.set() }
            }, completed: { done.signal() })
        #expect(wait(done))
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
