import Dispatch
import Testing

@testable import SwiftSignalKit

/// The thread helpers every stress test relies on (Tests/Shared/TestThreads.swift): they must tell a
/// task from a thread of the test's, and the blocking forms must refuse to run in a task.
@Suite struct TestThreadsTests {
    @Test func aTestRunsInATaskAndOnThreadDoesNot() async {
        #expect(isInATask)
        #expect(await onThread { isInATask } == false)
        let onQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Queue(name: "helpers").justDispatch { continuation.resume(returning: isInATask) }
        }
        #expect(onQueue == false, "a queue's block is not a task")
    }

    @Test func concurrentlyRunsEveryBodyOnAThreadOfItsOwn() async {
        let ran = LockedState<[Int]>([])
        let inTask = Counter()
        await concurrently(5) { index in
            if isInATask { inTask.increment() }
            ran.withLock { $0.append(index) }
        }
        #expect(ran.withLock { $0 }.sorted() == [0, 1, 2, 3, 4])
        #expect(inTask.value == 0)
    }

    @Test func waitAndDrainReturnOnceTheWorkIsDone() async {
        let signalled = DispatchSemaphore(value: 0)
        let queue = Queue(name: "drained")
        let order = LockedState<[String]>([])
        queue.justDispatch {
            _ = blockingWait(signalled)
            order.withLock { $0.append("queued block") }
        }
        signalled.signal()
        await drain(queue)
        order.withLock { $0.append("drained") }
        #expect(order.withLock { $0 } == ["queued block", "drained"])
        let ready = DispatchSemaphore(value: 0)
        ready.signal()
        #expect(await wait(ready))
        #expect(await wait(DispatchSemaphore(value: 0), seconds: 0.01) == false)
    }

    @Test func aBlockingWaitInATaskStopsTheProcessWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let ready = DispatchSemaphore(value: 0)
            ready.signal()
            _ = blockingWait(ready)
        }
        await #expect(processExitsWith: .failure) {
            blockingSpin(until: { true })
        }
    }
}
