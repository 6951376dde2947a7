import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct CombineLatestTests {
    @Test func waitsForEverySourceThenSendsLatestTuples() {
        let a = ValuePipe<Int>()
        let b = ValuePipe<String>()
        let recorder = Recorder<String, NoError>()
        recorder.start(combineLatest(a.signal(), b.signal()) |> map { "\($0)\($1)" })
        a.putNext(1)
        a.putNext(2)
        b.putNext("x")
        a.putNext(3)
        b.putNext("y")
        #expect(recorder.values == ["2x", "3x", "3y"])
    }

    @Test func initialValuesFormSendsAtOnce() {
        let a = ValuePipe<Int>()
        let b = ValuePipe<Int>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(combineLatest(a.signal(), 1, b.signal(), 10) |> map { $0 + $1 })
        b.putNext(20)
        #expect(recorder.values == [11, 21])
    }

    @Test func completesWhenEverySourceCompletesAndFailsOnFirstError() {
        let completed = Recorder<Int, TestError>()
        completed.start(combineLatest(values([1], TestError.self), values([2], TestError.self)) |> map { $0 + $1 })
        #expect(completed.events == [.next(3), .completed])

        let a = CapturedSubscriber<Int, TestError>()
        let b = CapturedSubscriber<Int, TestError>()
        let bDisposable = CountingDisposable()
        let failed = Recorder<Int, TestError>()
        failed.start(combineLatest(a.signal(), b.signal(disposable: bDisposable)) |> map { $0 + $1 })
        a.subscriber?.putError(TestError(code: 1))
        b.subscriber?.putError(TestError(code: 2))
        #expect(failed.events == [.error(TestError(code: 1))])
        #expect(bDisposable.count.value == 1, "the error disposes the other sources")
    }

    /// As the original library: a source that ends without a value leaves the result waiting for the
    /// others, which stay subscribed (the documented behaviour, which RxJava's does not share).
    @Test func aSourceThatCompletesEmptyLeavesTheResultWaitingForTheOthers() {
        let b = CapturedSubscriber<Int, NoError>()
        let bDisposable = CountingDisposable()
        let recorder = Recorder<Int, NoError>()
        recorder.start(combineLatest(Signal<Int, NoError>.complete(), b.signal(disposable: bDisposable)) |> map { $0 + $1 })
        b.subscriber?.putNext(1)
        #expect(recorder.events.isEmpty)
        #expect(bDisposable.count.value == 0, "the other source stays subscribed")
        b.subscriber?.putCompletion()
        #expect(recorder.events == [.completed])

        let arrayRecorder = Recorder<[Int], NoError>()
        let pipe = ValuePipe<Int>()
        let subscription = arrayRecorder.start(combineLatest([Signal<Int, NoError>.complete(), pipe.signal()]))
        pipe.putNext(1)
        #expect(arrayRecorder.events.isEmpty)
        subscription.dispose()
    }

    @Test func everyArityFromThreeToTwentySixCombines() {
        let three = Recorder<Int, NoError>()
        three.start(combineLatest(values([1]), values([2]), values([3])) |> map { $0 + $1 + $2 })
        #expect(three.events == [.next(6), .completed])

        let s = values([1])
        let twentySix = Recorder<Int, NoError>()
        twentySix.start(
            combineLatest(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s)
                |> map { tuple in
                    tuple.0 + tuple.12 + tuple.25
                })
        #expect(twentySix.events == [.next(3), .completed])

        let mixed = Recorder<String, NoError>()
        mixed.start(combineLatest(values([1]), values(["a"]), values([true]), values([2.5])) |> map { "\($0)\($1)\($2)\($3)" })
        #expect(mixed.values == ["1atrue2.5"])
    }

    @Test func arrayForm() {
        let pipes = (0..<3).map { _ in ValuePipe<Int>() }
        let recorder = Recorder<[Int], NoError>()
        recorder.start(combineLatest(pipes.map { $0.signal() }))
        pipes[0].putNext(1)
        pipes[1].putNext(2)
        pipes[2].putNext(3)
        pipes[1].putNext(20)
        #expect(recorder.values == [[1, 2, 3], [1, 20, 3]])

        let empty = Recorder<[Int], NoError>()
        empty.start(combineLatest([Signal<Int, NoError>]()))
        #expect(empty.events == [.next([]), .completed])
    }

    @Test func queueArgumentDeliversOnTheQueue() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let onQueue = Flag()
        _ = combineLatest(queue: queue, values([1]), values([2])).start(
            next: { _ in
                if queue.isCurrent() { onQueue.set() }
            }, completed: { done.signal() })
        #expect(await wait(done))
        #expect(onQueue.isSet)
    }

    @Test func disposeReleasesSourcesAndCapturedState() {
        let tracker = LifetimeTracker()
        let a = ValuePipe<Tracked>()
        let b = ValuePipe<Int>()
        let subscription = combineLatest(a.signal(), b.signal()).start()
        a.putNext(tracker.make())
        b.putNext(1)
        #expect(tracker.live.value == 1)
        subscription.dispose()
        #expect(tracker.live.value == 0)
    }

    @Test func noSourceStartsAfterAnEarlierOneFailedWhileStarting() {
        // The first source fails inside `start`: the subscription has ended, so the second is never
        // started (it used to start, only to be disposed with the subscription), as with `zip`.
        let second = CountingDisposable()
        let starts = Counter()
        let errors = LockedState<[TestError]>([])
        let subscription = combineLatest(
            Signal<Int, TestError>.fail(TestError(code: 3)),
            Signal<Int, TestError> { _ in
                starts.increment()
                return second
            }
        )
        .start(error: { error in errors.withLock { $0.append(error) } })
        #expect(errors.withLock { $0 } == [TestError(code: 3)])
        #expect(starts.value == 0)
        subscription.dispose()
        #expect(second.count.value == 0)
    }
}
