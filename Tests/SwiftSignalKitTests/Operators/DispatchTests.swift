import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct DispatchOperatorTests {
    @Test func deliverOnQueueKeepsOrderAndRunsOnTheQueue() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        let offQueue = Flag()
        _ = (values(Array(0..<1_000)) |> deliverOn(queue)).start(
            next: { value in
                if !queue.isCurrent() { offQueue.set() }
                recorder.append(.next(value))
            }, completed: { done.signal() })
        #expect(await wait(done))
        #expect(recorder.values == Array(0..<1_000))
        #expect(!offQueue.isSet)
    }

    @Test func deliverOnThreadPoolKeepsOrder() async {
        let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)
        let done = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int, NoError>()
        _ = (values(Array(0..<500)) |> deliverOn(pool)).start(
            next: { value in
                recorder.append(.next(value))
            }, completed: { done.signal() })
        #expect(await wait(done))
        #expect(recorder.values == Array(0..<500))
    }

    @Test func runOnQueueStartsTheGeneratorThere() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let generatorOnQueue = Flag()
        let source = Signal<Int, NoError> { subscriber in
            if queue.isCurrent() { generatorOnQueue.set() }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = (source |> runOn(queue)).start(completed: { done.signal() })
        #expect(await wait(done))
        #expect(generatorOnQueue.isSet)
    }

    @Test func runOnQueueDisposedBeforeItRunsNeverStarts() async {
        let queue = Queue()
        let started = Flag()
        let gate = DispatchSemaphore(value: 0)
        queue.justDispatch { _ = blockingWait(gate) }
        let subscription =
            (Signal<Int, NoError> { _ in
                started.set()
                return EmptyDisposable
            } |> runOn(queue)).start()
        subscription.dispose()
        gate.signal()
        await drain(queue)
        #expect(!started.isSet)
    }

    @Test func runOnThreadPoolStartsOnAPoolThread() async {
        let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
        let done = DispatchSemaphore(value: 0)
        let onPool = Flag()
        let source = Signal<Int, NoError> { subscriber in
            if pool.isCurrentThreadInPool() { onPool.set() }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = (source |> runOn(pool)).start(completed: { done.signal() })
        #expect(await wait(done))
        #expect(onPool.isSet)
    }
}

@Suite struct DispatchStressTests {
    @Test func deliverOnRacingDisposeDeliversNothingAfterDispose() async {
        let queue = Queue()
        for _ in 0..<200 {
            let pipe = ValuePipe<Int>()
            let disposed = Flag()
            let late = Counter()
            // Sampled before each send: only a value sent after dispose() returned must never arrive.
            let subscription = (pipe.signal() |> deliverOn(queue)).start(next: { sentAfterDispose in
                if sentAfterDispose == 1 { late.increment() }
            })
            await concurrently(3) { thread in
                if thread == 0 {
                    subscription.dispose()
                    disposed.set()
                } else {
                    for _ in 0..<100 { pipe.putNext(disposed.isSet ? 1 : 0) }
                }
            }
            await drain(queue)
            #expect(late.value == 0)
        }
    }
}
