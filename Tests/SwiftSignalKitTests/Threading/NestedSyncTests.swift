import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

/// `Queue.sync` nested through other queues: the caller owns every queue it waits on, so the nested
/// blocks run inline on those queues instead of trapping in libdispatch ("dispatch_sync called on queue
/// already owned by current thread").
///
/// Each scenario runs on a thread of its own and the test waits for it with a generous bound (60 s),
/// so a deadlock fails the test instead of hanging the suite. (A libdispatch trap stops the process.)
@Suite struct NestedSyncTests {
    /// Runs `body` on a new thread; returns whether it finished within 60 seconds.
    private func completes(_ body: @escaping @Sendable () -> Void) async -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return await wait(done)
    }

    /// `isCurrent()` answers true for the owned queues inside, and false again after; the ownership is
    /// the waiting caller's, so a block that runs later, elsewhere, does not inherit it.
    @Test func syncBackToAQueueThroughAnotherRunsInline() async {
        let first = Queue(name: "first")
        let second = Queue(name: "second")
        let elsewhere = Queue(name: "elsewhere")
        let seen = LockedState<[String: Bool]>([:])
        let ranElsewhere = DispatchSemaphore(value: 0)
        let finished = await self.completes {
            first.sync {
                second.sync {
                    first.sync {
                        seen.withLock {
                            $0["innermost first"] = first.isCurrent()
                            $0["innermost second"] = second.isCurrent()
                        }
                    }
                    seen.withLock { $0["inside second, first owned"] = first.isCurrent() }
                    elsewhere.justDispatch {
                        seen.withLock { $0["later elsewhere, first"] = first.isCurrent() }
                        ranElsewhere.signal()
                    }
                }
                seen.withLock { $0["back on first, second"] = second.isCurrent() }
            }
            seen.withLock {
                $0["after, first"] = first.isCurrent()
                $0["after, second"] = second.isCurrent()
            }
        }
        #expect(finished, "first.sync { second.sync { first.sync {} } } must complete")
        #expect(await wait(ranElsewhere))
        #expect(
            seen.withLock { $0 } == [
                "innermost first": true, "innermost second": true, "inside second, first owned": true,
                "later elsewhere, first": false, "back on first, second": false, "after, first": false,
                "after, second": false,
            ])
    }

    @Test func asyncToAnOwnedQueueRunsInline() async {
        let first = Queue(name: "first")
        let second = Queue(name: "second")
        let order = LockedState<[String]>([])
        let finished = await self.completes {
            first.sync {
                second.sync {
                    first.async { order.withLock { $0.append("inner") } }
                    order.withLock { $0.append("after") }
                }
            }
        }
        #expect(finished)
        #expect(order.withLock { $0 } == ["inner", "after"])
    }

    @Test func asyncBlockSyncingBackToItsOwnQueue() async {
        let first = Queue(name: "first")
        let second = Queue(name: "second")
        let done = DispatchSemaphore(value: 0)
        let ranInline = Flag()
        second.async {
            first.sync {
                second.sync {
                    if second.isCurrent() && first.isCurrent() { ranInline.set() }
                }
            }
            done.signal()
        }
        #expect(await wait(done), "second.async { first.sync { second.sync {} } } must complete")
        #expect(ranInline.isSet)
    }

    @Test func ownershipHoldsAtAnyDepth() async {
        let queues = (0..<4).map { Queue(name: "level \($0)") }
        let allCurrent = Flag()
        @Sendable func descend(_ path: ArraySlice<Queue>) {
            guard let next = path.first else {
                if queues.allSatisfy({ $0.isCurrent() }) { allCurrent.set() }
                return
            }
            next.sync { descend(path.dropFirst()) }
        }
        // Through every queue, then through every queue again: the second pass runs inline.
        let finished = await self.completes { descend(ArraySlice(queues + queues)) }
        #expect(finished)
        #expect(allCurrent.isSet)
    }

    @Test func queueLocalObjectIsReachableFromANestedBlock() async {
        final class Store {
            var entries = 0
        }
        let database = Queue(name: "database")
        let cache = Queue(name: "cache")
        let store = QueueLocalObject(queue: database, generate: { Store() })
        let count = LockedState(0)
        let finished = await self.completes {
            store.with { $0.entries = 41 }
            database.sync {
                cache.sync {
                    let entries = store.syncWith { store -> Int in
                        store.entries += 1
                        return store.entries
                    }
                    count.withLock { $0 = entries }
                }
            }
        }
        #expect(finished)
        #expect(count.withLock { $0 } == 42)
    }
}
