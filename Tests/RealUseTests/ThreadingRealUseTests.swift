import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// Queues, timers and queue-confined state, used the way an app or a server uses them.
@Suite struct ThreadingRealUseTests {
    /// A server keeps each room's connections in a `QueueLocalActor`. A request thread closes the room
    /// and drops the last reference while the room's queue is still busy: the connections (not
    /// thread-safe) are released on the room's queue, after the work queued before, not on the request
    /// thread. (The actor used an `isolated deinit` for this, which broke release builds.)
    @Test func roomConnectionsAreReleasedOnTheRoomQueue() async {
        final class Connection {
            let closedOnQueue: Atomic<Bool?>
            let queue: Queue
            init(queue: Queue, closedOnQueue: Atomic<Bool?>) {
                self.queue = queue
                self.closedOnQueue = closedOnQueue
            }
            deinit { self.closedOnQueue.swap(self.queue.isCurrent()) }
        }
        let queue = Queue(name: "room")
        let closedOnQueue = Atomic<Bool?>(value: nil)
        let busy = DispatchSemaphore(value: 0)
        let scenario: @Sendable () -> Void = {
            let room = QueueLocalActor(
                queue: queue, value: [1: Connection(queue: queue, closedOnQueue: closedOnQueue)])
            queue.justDispatch {
                // Work in flight on the room's queue when the room is closed.
                _ = blockingWait(busy, seconds: hangLimit)
            }
            // The request thread lets go of the room here, while the queue is busy.
            withExtendedLifetime(room) {}
        }
        let finished = await finishes { scenario() }
        #expect(finished)
        let releasedWhileBusy = closedOnQueue.with { $0 } != nil
        busy.signal()
        await drain(queue)
        #expect(!releasedWhileBusy, "nothing is released while the queue is busy")
        #expect(closedOnQueue.with { $0 } == true, "the connections are released on the room's queue")
    }

    /// Telegram-iOS code that caches per-peer contexts in a `QueueLocalObject` and hands out a
    /// disposable and a control from `syncWith`, from several threads at once; queue blocks reach the
    /// cache with `unsafeGet()`.
    @Test func contextCacheHandsOutDisposablesAndControls() async {
        final class Control: Sendable {
            let peerId: Int
            init(peerId: Int) { self.peerId = peerId }
        }
        final class ContextsImpl {
            var subscribers: [Int: Int] = [:]
            func getContext(peerId: Int) -> (Disposable, Control) {
                self.subscribers[peerId, default: 0] += 1
                return (EmptyDisposable, Control(peerId: peerId))
            }
        }
        let queue = Queue(name: "contexts")
        let impl = QueueLocalObject(queue: queue, generate: { ContextsImpl() })
        let mismatches = Count()
        let scenario: @Sendable () -> Void = {
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<4 {
                Thread {
                    for peerId in 0..<250 {
                        let (disposable, control) = impl.syncWith { impl -> (Disposable, Control) in
                            return impl.getContext(peerId: peerId)
                        }
                        if control.peerId != peerId { mismatches.increment() }
                        disposable.dispose()
                    }
                    done.signal()
                }.start()
            }
            for _ in 0..<4 { _ = blockingWait(done, seconds: 2 * hangLimit) }
        }
        let finished = await finishes { scenario() }
        #expect(finished)
        #expect(mismatches.value == 0)
        let counted = Atomic(value: 0)
        queue.sync {
            counted.swap(impl.unsafeGet()?.subscribers.values.reduce(0, +) ?? -1)
        }
        #expect(counted.with { $0 } == 1_000)
    }

    /// An app schedules a refresh when an offer expires (`expiresAt - now`, which is negative once it
    /// has expired), polls with a period from its settings (where "effectively never" is written as
    /// `1e11` seconds, which made Dispatch trap), and retries at once with `delay(0)`.
    @Test func timersWithDeadlinesFromTheAppDoNotCrash() async {
        let queue = Queue(name: "refresh")
        let refreshed = DispatchSemaphore(value: 0)
        let refreshedInTime = Atomic(value: false)
        let retriedInTime = Atomic(value: false)
        let polled = Count()
        let expiresAt = Date().timeIntervalSince1970 - 30
        let scenario: @Sendable () -> Void = {
            let refresh = Timer(
                timeout: expiresAt - Date().timeIntervalSince1970, repeat: false, completion: { refreshed.signal() }, queue: queue)
            refresh.start()
            let settingsPeriod = 1e11
            let poll = Timer(timeout: settingsPeriod, repeat: true, completion: { polled.increment() }, queue: queue)
            poll.start()
            refreshedInTime.swap(blockingWait(refreshed, seconds: hangLimit))
            // The timer fires only while referenced.
            withExtendedLifetime(refresh) {}
            let retried = DispatchSemaphore(value: 0)
            _ = (Signal<Int, NoError>.single(1) |> delay(0, queue: queue)).start(next: { _ in retried.signal() })
            retriedInTime.swap(blockingWait(retried, seconds: hangLimit))
            queue.sync {}  // blocking-check: on the scenario's own thread
            poll.invalidate()
        }
        let finished = await finishes { scenario() }
        #expect(finished)
        #expect(refreshedInTime.with { $0 }, "an offer that has expired is refreshed at once")
        #expect(retriedInTime.with { $0 }, "delay(0) subscribes")
        #expect(polled.value == 0, "a period of 1e11 s does not fire in the test's lifetime")
    }

    /// A database queue and a cache queue call each other synchronously: a database read fills the
    /// cache, and the cache, on a miss, reads the database while the first read waits. The state on both
    /// sides is queue-confined (`QueueLocalObject`, `QueueLocalActor`).
    @Test func databaseAndCacheCallEachOtherSynchronously() async {
        final class Database {
            var rows: [Int: String] = [1: "one", 2: "two"]
        }
        final class Cache {
            var entries: [Int: String] = [:]
        }
        let databaseQueue = Queue(name: "database")
        let cacheQueue = Queue(name: "cache")
        let database = QueueLocalObject(queue: databaseQueue, generate: { Database() })
        let cache = QueueLocalActor(queue: cacheQueue, value: Cache())
        let read = Log<String>()
        let scenario: @Sendable () -> Void = {
            databaseQueue.sync {
                let row = database.syncWith { $0.rows[1] ?? "" }
                cacheQueue.sync {
                    cache.withValueOnQueue { $0.entries[1] = row }
                    // A miss: the cache reads the database, whose queue the caller owns.
                    let missing = database.syncWith { $0.rows[2] ?? "" }
                    cache.withValueOnQueue { $0.entries[2] = missing }
                    read.append(missing)
                }
            }
            let done = DispatchSemaphore(value: 0)
            cacheQueue.async {
                databaseQueue.sync {
                    cacheQueue.sync {
                        read.append(cache.withValueOnQueue { $0.entries[1] ?? "" })
                    }
                }
                done.signal()
            }
            _ = blockingWait(done, seconds: hangLimit)
        }
        let finished = await finishes { scenario() }
        #expect(finished)
        #expect(read.entries == ["two", "one"])
    }
}
