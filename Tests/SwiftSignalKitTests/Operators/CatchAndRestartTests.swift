import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct CatchTests {
    @Test func catchSwitchesToTheReplacement() {
        let recorder = Recorder<Int, TestError>()
        let source = Signal<Int, TestError> { subscriber in
            subscriber.putNext(1)
            subscriber.putError(TestError(code: 1))
            return EmptyDisposable
        }
        recorder.start(source |> `catch` { error in values([error.code * 10, 99], TestError.self) })
        #expect(recorder.events == [.next(1), .next(10), .next(99), .completed])
    }

    @Test func disposingDisposesTheReplacement() {
        let replacement = CountingDisposable()
        let subscription =
            (Signal<Int, TestError>.fail(TestError())
            |> `catch` { _ in
                Signal<Int, TestError> { _ in replacement }
            }).start()
        subscription.dispose()
        #expect(replacement.count.value == 1)
    }
}

@Suite struct RestartTests {
    /// Bug 9 of the original: each synchronous completion restarted from inside the previous `start`,
    /// so 100,000 restarts overflowed the stack. (A synchronous loop cannot be stopped from downstream
    /// while `start` is still running, so the source itself ends the run with an error.)
    @Test func hundredThousandSynchronousRestartsDoNotGrowTheStack() async {
        let starts = Counter()
        let source = Signal<Int, TestError> { subscriber in
            let start = starts.increment()
            if start == 100_000 {
                subscriber.putError(TestError(code: start))
            } else {
                subscriber.putNext(start)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let received = Counter()
        let recorder = Recorder<Int, TestError>()
        // A stress of synchronous work: on a thread of its own, not on one of the task pool's.
        await onThread { _ = restart(source).start(next: { _ in received.increment() }, error: { recorder.append(.error($0)) }) }
        #expect(received.value == 99_999)
        #expect(recorder.events == [.error(TestError(code: 100_000))])
    }

    @Test func synchronousRestartLoopStopsWhenDownstreamTakesEnough() async {
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(starts.increment())
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let recorder = Recorder<Int, NoError>()
        // 100,000 synchronous restarts: on a thread of its own, not on one of the task pool's.
        await onThread { recorder.start(restart(source) |> filter { $0 == 100_000 } |> take(1)) }
        #expect(recorder.events == [.next(100_000), .completed])
        #expect(starts.value == 100_000, "the loop notices the ended downstream before restarting")
    }

    /// A consumer at the end of a chain that has gone after `after` values, and never disposes: a loop
    /// inside a generator can learn it only by asking (see `SignalDemand.consumerHasGone`).
    final class ConsumerGone: SignalDemand {
        let taken = Counter()
        let after: Int
        let pacesProducers: Bool

        init(after: Int, pacesProducers: Bool) {
            self.after = after
            self.pacesProducers = pacesProducers
        }

        var consumerHasGone: Bool { self.taken.value >= self.after }

        func waitForRoom() async -> Bool { !self.consumerHasGone }
    }

    /// The synchronous loop asks the consumer at the end of the chain, through a fused `map |> filter`
    /// and a `take`, before each restart: the consumer of a `for await` loop that ended can say so
    /// before the subscription's disposable exists. A consumer that only links (it does not pace) is
    /// not offered to producers as room.
    @Test(arguments: [true, false])
    func synchronousRestartLoopStopsWhenTheConsumerHasGone(pacesProducers: Bool) {
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(starts.increment())
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let consumer = ConsumerGone(after: 5, pacesProducers: pacesProducers)
        let chain = restart(source) |> take(1_000) |> map { $0 * 2 } |> filter { $0 > 0 }
        let subscription = chain.start(
            next: { _ in consumer.taken.increment() }, error: nil, completed: nil, pacedBy: consumer)
        #expect(starts.value == 5, "the loop ran on after the consumer had gone")
        subscription.dispose()

        let subscriber = OperatorSubscriber(CallbacksOnly<Int, NoError>(), next: nil, error: nil, completed: nil, demand: consumer)
        #expect((subscriber.demand != nil) == pacesProducers)
        #expect(subscriber.isTerminated, "the consumer has gone")
    }

    @Test func recurseRestartsLikeRestart() {
        let starts = Counter()
        let source = Signal<Int, TestError> { subscriber in
            let start = starts.increment()
            if start == 4 {
                subscriber.putError(TestError())
            } else {
                subscriber.putNext(start)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let recorder = Recorder<Int, TestError>()
        recorder.start(source |> recurse(nil))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .error(TestError())])
    }

    @Test func asynchronousRestartsStopWhenDownstreamCompletes() async {
        let queue = Queue()
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            let start = starts.increment()
            queue.justDispatch {
                subscriber.putNext(start)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        _ = (restart(source) |> take(3)).start(next: { recorder.append(.next($0)) }, completed: { done.signal() })
        #expect(await wait(done))
        await drain(queue)
        #expect(recorder.values == [1, 2, 3])
        #expect(starts.value == 3)
    }

    @Test func restartIfErrorRestartsOnErrorsOnly() async {
        let attempts = Counter()
        let source = Signal<Int, TestError> { subscriber in
            let attempt = attempts.increment()
            if attempt < 100_000 {
                subscriber.putError(TestError(code: attempt))
            } else {
                subscriber.putNext(attempt)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let recorder = Recorder<Int, NoError>()
        // 100,000 synchronous restarts: on a thread of its own, not on one of the task pool's.
        await onThread { recorder.start(restartIfError(source)) }
        #expect(recorder.events == [.next(100_000), .completed])
    }

    @Test func restartPassesErrorsOn() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(restart(Signal<Int, TestError>.fail(TestError(code: 2))))
        #expect(recorder.events == [.error(TestError(code: 2))])
    }

    @Test func disposeStopsAnAsynchronousRestartLoop() async {
        let queue = Queue()
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            starts.increment()
            queue.justDispatch { subscriber.putCompletion() }
            return EmptyDisposable
        }
        let subscription = restart(source).start()
        await spin(until: { starts.value >= 10 })
        subscription.dispose()
        await drain(queue)
        let afterDispose = starts.value
        await drain(queue)
        await drain(queue)
        #expect(starts.value <= afterDispose + 1)
    }

    @Test func retryResubscribesAfterErrorsUntilSuccess() async {
        let attempts = Counter()
        let source = Signal<Int, TestError> { subscriber in
            let attempt = attempts.increment()
            if attempt < 3 {
                subscriber.putError(TestError(code: attempt))
            } else {
                subscriber.putNext(attempt)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        _ = (source |> retry(0.001, maxDelay: 0.002, onQueue: Queue())).start(
            next: { recorder.append(.next($0)) },
            completed: {
                recorder.append(.completed)
                done.signal()
            })
        #expect(await wait(done))
        #expect(recorder.events == [.next(3), .completed])
    }

    @Test func retryWithPredicateStopsOnRejectedErrorsAndAfterMaxRetries() async {
        let rejected = DispatchSemaphore(value: 0)
        let rejectedRecorder = Recorder<Int, TestError>()
        _ =
            (Signal<Int, TestError>.fail(TestError(code: 7))
            |> retry(retryOnError: { $0.code != 7 }, delayIncrement: 0.001, maxDelay: 0.001, maxRetries: 5, onQueue: Queue()))
            .start(error: {
                rejectedRecorder.append(.error($0)); rejected.signal()
            })
        #expect(await wait(rejected))
        #expect(rejectedRecorder.events == [.error(TestError(code: 7))])

        let attempts = Counter()
        let exhausted = DispatchSemaphore(value: 0)
        let source = Signal<Int, TestError> { subscriber in
            subscriber.putError(TestError(code: attempts.increment()))
            return EmptyDisposable
        }
        let recorder = Recorder<Int, TestError>()
        _ = (source |> retry(retryOnError: { _ in true }, delayIncrement: 0.001, maxDelay: 0.001, maxRetries: 3, onQueue: Queue()))
            .start(error: {
                recorder.append(.error($0)); exhausted.signal()
            })
        #expect(await wait(exhausted))
        #expect(attempts.value == 4, "the first attempt plus three retries")
        #expect(recorder.events == [.error(TestError(code: 4))])
    }
}

@Suite struct RestartStressTests {
    @Test func disposeRacingAsynchronousRestartsLeavesNothingSubscribed() async {
        let dispatchQueue = DispatchQueue(label: "restart.stress", attributes: .concurrent)
        let queue = Queue(queue: dispatchQueue)
        for _ in 0..<200 {
            let active = Counter()
            let starts = Counter()
            let source = Signal<Int, NoError> { subscriber in
                active.increment()
                starts.increment()
                queue.justDispatch {
                    subscriber.putNext(1)
                    subscriber.putCompletion()
                }
                return ActionDisposable { active.decrement() }
            }
            let subscription = restart(source).start()
            // Disposed by the thread that sees the fifth start. From the test's task, which then waits
            // its turn on the pool, the restarts went on meanwhile: thousands a round in a parallel
            // `swift test`, a tenth of its processor time.
            await onThread {
                blockingSpin(until: { starts.value >= 5 })
                subscription.dispose()
            }
            await drain(dispatchQueue, barrier: true)
            #expect(active.value == 0, "every started subscription was disposed")
        }
    }
}
