import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// State that is not thread-safe: only the queue's serial executor may touch it.
final class Tally {
    var count = 0
    var log: [Int] = []
}

/// Gives a `QueueLocalObject` closure access to the actor's value: the closure runs on the queue.
final class TallyDoor {
    let actor: QueueLocalActor<Tally>
    init(_ actor: QueueLocalActor<Tally>) { self.actor = actor }
}

@Suite struct QueueActorTests {
    /// 100,000 increments through three doors: plain `queue.async` blocks, `QueueLocalObject.with`, and
    /// actor calls from many tasks. All run on the queue's one serial executor, so the count is exact
    /// (and ThreadSanitizer, which CI runs on this suite, sees no race).
    @Test func threeDoorsShareOneSerialExecutor() async {
        let queue = Queue(name: "tally")
        let actor = QueueLocalActor(queue: queue, value: Tally())
        let object = QueueLocalObject(queue: queue, generate: { TallyDoor(actor) })
        for _ in 0..<30_000 {
            queue.justDispatch {
                actor.withValueOnQueue { $0.count += 1 }
            }
            object.with { door in
                door.actor.withValueOnQueue { $0.count += 1 }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<5_000 {
                        await actor.withValue { $0.count += 1 }
                    }
                }
            }
        }
        await drain(queue)
        let count = await actor.withValue { $0.count }
        #expect(count == 100_000)
    }

    @Test func assumeIsolatedSucceedsInPlainQueueBlocks() {
        let queue = Queue(name: "plain")
        let actor = QueueLocalActor(queue: queue, value: 1)
        let seen = queue.queue.sync {
            actor.withValueOnQueue { $0 }
        }
        #expect(seen == 1)
        let viaQueueSync = Atomic(value: 0)
        queue.sync {
            viaQueueSync.swap(actor.withValueOnQueue { $0 + 1 })
        }
        #expect(viaQueueSync.with { $0 } == 2)
    }

    /// A global concurrent queue would run an actor's jobs in parallel: refused with a message (a probe
    /// found it accepted, 2026-11-30).
    @Test func anExecutorOnAGlobalConcurrentQueueStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueExecutor(queue: Queue.concurrentDefaultQueue())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("QueueExecutor(queue:): the queue must be serial"))
    }

    /// The actor names itself, not the executor it makes.
    @Test func anActorOnAGlobalConcurrentQueueStopsWithAMessageNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = QueueLocalActor(queue: Queue(queue: .global(qos: .utility)), value: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("QueueLocalActor(queue:value:): the queue must be serial"))
    }

    /// A serial queue of the user's whose label looks like a global queue's is still serial: accepted.
    @Test func aSerialQueueLabelledLikeAGlobalOneIsAccepted() async {
        let queue = Queue(queue: DispatchQueue(label: "com.apple.root.my-serial"))
        let actor = QueueLocalActor(queue: queue, value: 0)
        await actor.withValue { $0 += 1 }
        #expect(await actor.withValue { $0 } == 1)
        _ = QueueExecutor(queue: queue)
    }

    @Test func withValueOnQueueTrapsOffTheQueueNamingTheCall() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let actor = QueueLocalActor(queue: Queue(name: "elsewhere"), value: 0)
            _ = actor.withValueOnQueue { $0 }
        }
        // The message names the call the user made, not only the executor's queue.
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("QueueLocalActor.withValueOnQueue(_:) called off the actor's queue (elsewhere)"))
    }

    /// One submitter, isolated to the actor, alternates plain queue blocks and actor tasks: both doors
    /// enqueue on the same dispatch queue, so the work runs in submission order.
    @Test func workThroughBothDoorsRunsInSubmissionOrder() async {
        let queue = Queue(name: "order")
        let actor = QueueLocalActor(queue: queue, value: Tally())
        let submitted = await actor.submitAlternately(count: 1_000)
        #expect(submitted == 1_000)
        // Runs after everything submitted above, since it is enqueued after it.
        let log = await actor.withValue { $0.log }
        #expect(log == Array(0..<1_000))
    }

    @Test func actorAndValueAreReleasedOnTheQueue() async {
        let queue = Queue(name: "release")
        let releasedOnQueue = Atomic<Bool?>(value: nil)
        do {
            let actor = QueueLocalActor(queue: queue, value: ReleaseProbe(queue: queue, result: releasedOnQueue))
            await actor.withValue { _ in () }
        }
        await eventually {
            await drain(queue)
            return releasedOnQueue.with { $0 } != nil
        }
        #expect(releasedOnQueue.with { $0 } == true)
    }

    /// The last reference goes on a plain thread while the queue is busy: the value is not released on
    /// that thread, but later, on the queue.
    @Test func valueIsReleasedOnTheQueueWhenTheLastReferenceGoesElsewhere() async {
        let queue = Queue(name: "release")
        let releasedOnQueue = Atomic<Bool?>(value: nil)
        let gate = DispatchSemaphore(value: 0)
        queue.justDispatch { _ = blockingWait(gate) }
        do {
            let actor = QueueLocalActor(queue: queue, value: ReleaseProbe(queue: queue, result: releasedOnQueue))
            withExtendedLifetime(actor) {}
        }
        #expect(releasedOnQueue.with { $0 } == nil, "not released while the queue is busy")
        gate.signal()
        await drain(queue)
        #expect(releasedOnQueue.with { $0 } == true)
    }

    /// `withValueOnQueue` from a block nested in `q2.sync` inside `q1.sync`, for an actor on `q1`: the
    /// caller owns `q1`, so the actor is isolated there.
    @Test func withValueOnQueueWorksInsideANestedSync() async {
        let first = Queue(name: "first")
        let second = Queue(name: "second")
        let actor = QueueLocalActor(queue: first, value: Tally())
        let seen = Atomic(value: -1)
        let seenDeeper = Atomic(value: -1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            first.sync {
                second.sync {
                    seen.swap(
                        actor.withValueOnQueue { tally in
                            tally.count += 1
                            return tally.count
                        })
                }
            }
            second.sync {
                first.sync {
                    second.sync {
                        seenDeeper.swap(actor.withValueOnQueue { $0.count })
                    }
                }
            }
            done.signal()
        }.start()
        #expect(await wait(done), "must complete, not trap or hang")
        #expect(seen.with { $0 } == 1)
        #expect(seenDeeper.with { $0 } == 1)
    }

    @Test func subscribeDeliversEventsIsolatedAndInOrder() async {
        let queue = Queue(name: "events")
        let actor = QueueLocalActor(queue: queue, value: Tally())
        let producer = Queue(name: "producer")
        let source = Signal<Int, NoError> { subscriber in
            producer.justDispatch {
                for value in 0..<10_000 { subscriber.putNext(value) }
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let done = Atomic(value: false)
        let subscription = actor.subscribe(
            source,
            next: { actor, value in
                actor.withValueOnQueue { $0.log.append(value) }
            },
            completed: { _ in done.swap(true) })
        await eventually { done.with({ $0 }) }
        let log = await actor.withValue { $0.log }
        #expect(log == Array(0..<10_000))
        subscription.dispose()
    }

    /// The actor's own code sends on a pipe the actor subscribes to: the handler runs after the access
    /// that sent, not in the middle of it, where its own access stopped the process ("called inside
    /// another withValue or withValueOnQueue"; found by a probe on 2026-11-30). The subscription's events
    /// stay in order, and one sent on the queue outside any access, with nothing pending, still runs
    /// inline.
    @Test func anEventSentFromInsideAnAccessIsHandledAfterIt() async {
        let queue = Queue(name: "self-sending")
        let actor = QueueLocalActor(queue: queue, value: [Int]())
        let pipe = ValuePipe<Int>()
        let subscription = actor.subscribe(pipe.signal(), next: { actor, value in actor.withValueOnQueue { $0.append(value) } })
        await actor.withValue { log in
            log.append(0)
            pipe.putNext(1)
            log.append(2)
        }
        await drain(queue)
        #expect(await actor.withValue { $0 } == [0, 2, 1])

        let handledInline = Atomic<[Bool]>(value: [])
        queue.async {
            actor.withValueOnQueue { log in
                log.append(3)
                pipe.putNext(4)
                log.append(5)
            }
            // 4 waits in the queue: 6 goes behind it, though sent outside the access.
            pipe.putNext(6)
            actor.withValueOnQueue { log in handledInline.modify { $0 + [log.last == 6] } }
        }
        await drain(queue)
        queue.async {
            pipe.putNext(7)
            actor.withValueOnQueue { log in handledInline.modify { $0 + [log.last == 7] } }
        }
        await drain(queue)
        #expect(await actor.withValue { $0 } == [0, 2, 1, 3, 5, 4, 6, 7])
        #expect(handledInline.with { $0 } == [false, true])
        subscription.dispose()
    }

    /// Two actors on one queue: a body of the first sends on a pipe the second subscribes to, and that
    /// handler reaches the first actor. It runs after the body, as for an actor's own events; run in the
    /// middle of it, its access to the first actor stopped the process. (Found by a probe on 2026-11-30.)
    @Test func anEventSentFromAnotherActorsAccessIsHandledAfterIt() async {
        let queue = Queue(name: "two-actors-sending")
        let first = QueueLocalActor(queue: queue, value: [String]())
        let second = QueueLocalActor(queue: queue, value: 0)
        let pipe = ValuePipe<Int>()
        let subscription = second.subscribe(
            pipe.signal(),
            next: { actor, value in
                actor.withValueOnQueue { $0 += value }
                first.withValueOnQueue { $0.append("handled \(value)") }
            })
        await first.withValue { log in
            log.append("before")
            pipe.putNext(1)
            log.append("after")
        }
        await drain(queue)
        #expect(await first.withValue { $0 } == ["before", "after", "handled 1"])
        #expect(await second.withValue { $0 } == 1)
        subscription.dispose()
    }

    /// One-expression handlers whose expression has a value: they used to make Swift 6.3 fail ("failed to
    /// produce diagnostic"), so this test compiling is half of it.
    @Test func oneExpressionHandlersCompileAndRun() async {
        let queue = Queue(name: "registry")
        let registry = QueueLocalActor(queue: queue, value: Set<String>())
        let logins = ValuePipe<String>()
        let added = registry.subscribe(logins.signal(), next: { actor, login in actor.withValueOnQueue { $0.insert(login) } })
        let counted = registry.subscribe(logins.signal(), next: { actor, _ in actor.withValue { $0.count } })
        logins.putNext("ada")
        logins.putNext("grace")
        await drain(queue)
        #expect(await registry.withValue { $0 } == ["ada", "grace"])
        added.dispose()
        counted.dispose()
    }

    /// The README's snippet from main-actor code: the body is `sending`, so a closure made on the main
    /// actor may be passed (it used to fail with "sending value of non-Sendable type").
    @Test @MainActor func withValueFromTheMainActor() async {
        let sessions = QueueLocalActor(queue: Queue(name: "main-actor-client"), value: ["a": 1])
        let name = "b"
        await sessions.withValue { $0[name] = 2 }
        let count = await sessions.withValue { $0.count }
        #expect(count == 2)
    }

    @Test func nestedAccessToTheSameActorStopsWithTheLibrarysMessage() async {
        // One exit test per way in: an exit test's body captures nothing.
        let results = [
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await NestedAccess.onQueueInsideWithValue.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await NestedAccess.onQueueInsideOnQueue.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await NestedAccess.onQueueInsideAHandlersOnQueue.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await NestedAccess.onQueueInsideAHandlersWithValue.run()
            },
        ]
        for result in results {
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("QueueLocalActor.withValueOnQueue(_:) called inside another withValue or withValueOnQueue"))
            #expect(message.contains("Pass the value (inout) to the inner code"))
            // Two accesses that overlap on a wrapped concurrent queue stop with this message too (a probe).
            #expect(message.contains("the actor's queue is concurrent"))
            #expect(!message.contains("Simultaneous accesses"))
        }
    }

    /// Since the actors of a queue share its executor, the first part of a `Task.immediate {}` started
    /// inside a body runs there and then, and its `await` into the actor whose body is running is a
    /// nested access (as the docs say); a plain `Task {}` waits for the body to return.
    @Test func anImmediateTaskStartedInABodyEntersTheActorAtOnce() async {
        let immediate = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = Queue(name: "immediate")
            let actor = QueueLocalActor(queue: queue, value: 0)
            await QueuedLogger(queue: queue).startTask(immediately: true, into: actor)
        }
        let message = String(decoding: immediate?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("QueueLocalActor.withValue(_:) called inside another withValue or withValueOnQueue"))
        let queue = Queue(name: "plain")
        let actor = QueueLocalActor(queue: queue, value: 0)
        let task = await QueuedLogger(queue: queue).startTask(immediately: false, into: actor)
        await task.value
        #expect(await actor.withValue { $0 } == 101)
    }

    @Test func sequentialAndOtherActorAccessFromABodyStillWork() async {
        let queue = Queue(name: "two-actors")
        let first = QueueLocalActor(queue: queue, value: 1)
        let second = QueueLocalActor(queue: queue, value: 10)
        let sum = await first.withValue { mine in
            mine += second.withValueOnQueue { $0 }
            return mine
        }
        #expect(sum == 11)
        #expect(await first.withValue { $0 } == 11, "the flag is cleared after the body")
        await onThread {
            queue.sync {
                first.withValueOnQueue { $0 += 1 }
                #expect(first.withValueOnQueue { $0 } == 12)
            }
        }
    }

    /// Where the main queue runs (as under this test runner), work sent to `Queue.mainQueue()` is on the
    /// main actor, and signals delivered there reach `@MainActor` state.
    @Test func mainQueueWorkRunsOnTheMainActor() async {
        let onMainActor = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Queue.mainQueue().justDispatch {
                let isolated = MainActor.assumeIsolated { Queue.mainQueue().isCurrent() }
                continuation.resume(returning: isolated)
            }
        }
        #expect(onMainActor)
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            _ = (Signal<Int, NoError>.single(5) |> deliverOnMainQueue).start(next: { value in
                continuation.resume(returning: MainActor.assumeIsolated { value })
            })
        }
        #expect(delivered == 5)
    }

    @Test func actorsOnOneQueueShareAnExecutionContext() async {
        let queue = Queue(name: "shared")
        let first = QueueLocalActor(queue: queue, value: 1)
        let second = QueueLocalActor(queue: queue, value: 2)
        let sum = await first.withValue { mine in
            // On the queue already: the second actor is reachable synchronously.
            mine + second.withValueOnQueue { $0 }
        }
        #expect(sum == 3)
    }

    /// An actor on a queue calls another actor on the same `Queue` inline, whether each has an executor
    /// of its own or both are `QueueLocalActor`s: the block the caller queued first runs after the call,
    /// not before (a hop would queue the call behind it).
    @Test(arguments: [false, true]) func actorsOfOneQueueCallEachOtherWithoutAHop(queueLocal: Bool) async {
        let queue = Queue(name: "no-hop")
        let log = QueueLocalActor(queue: queue, value: Tally())
        let seenAtReturn =
            queueLocal
            ? await log.queueABlockThenCall(QueueLocalActor(queue: queue, value: Tally()))
            : await QueuedLogger(queue: queue).queueABlockThenCall(QueuedLogger(queue: queue), log: log)
        #expect(seenAtReturn == [2])
        await drain(queue)
        #expect(await log.withValue { $0.log } == [2, 1])
    }

    /// Executors of two `Queue` objects (here two queues) stay two: the call hops, behind the block.
    @Test func actorsOnDifferentQueuesStillHop() async {
        let queue = Queue(name: "hop")
        let log = QueueLocalActor(queue: queue, value: Tally())
        let caller = QueuedLogger(queue: queue)
        let callee = QueuedLogger(queue: Queue(name: "hop-other"))
        _ = await caller.queueABlockThenCall(callee, log: log)
        await drain(queue)
        #expect(await log.withValue { $0.log } == [1, 2])
    }
}

/// An actor with an executor of its own on a queue, as the `QueueExecutor` documentation writes one.
actor QueuedLogger {
    private let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { self.executor.asUnownedSerialExecutor() }
    /// Touched by ``log(_:to:)`` and ``increment()``, so that a call to them runs on this actor's
    /// executor: a release build leaves out the hop to an actor whose method touches none of its state.
    private var calls = 0

    init(queue: Queue) {
        self.executor = QueueExecutor(queue: queue)
    }

    /// Queues a block that logs 1, then has `other` log 2; returns the log as it is when `other` returns.
    func queueABlockThenCall(_ other: QueuedLogger, log: QueueLocalActor<Tally>) async -> [Int] {
        self.executor.queue.justDispatch {
            log.withValueOnQueue { $0.log.append(1) }
        }
        await other.log(2, to: log)
        return await log.withValue { $0.log }
    }

    /// Inside a body of `actor`, starts a task isolated to this actor that adds 100 to the value:
    /// `Task.immediate {}` or `Task {}`.
    @discardableResult
    func startTask(immediately: Bool, into actor: QueueLocalActor<Int>) -> Task<Void, Never> {
        return actor.withValueOnQueue { value in
            value += 1
            if immediately {
                return Task.immediate { [self] in await self.add(100, to: actor) }
            }
            return Task { [self] in await self.add(100, to: actor) }
        }
    }

    func add(_ amount: Int, to actor: QueueLocalActor<Int>) async {
        await actor.withValue { $0 += amount }
    }

    func increment() {
        self.calls += 1
    }

    func log(_ value: Int, to log: QueueLocalActor<Tally>) async {
        self.calls += 1
        await log.withValue { $0.log.append(value) }
    }
}

extension QueueLocalActor where Value == Tally {
    func append(_ value: Int) {
        self.withValueOnQueue { $0.log.append(value) }
    }
}

extension QueueLocalActor where Value == Tally {
    /// Queues a block that logs 1, then has `other` (an actor on the same queue) run a body that logs 2
    /// here; returns the log as it is when `other` returns.
    func queueABlockThenCall(_ other: QueueLocalActor<Tally>) async -> [Int] {
        self.queue.justDispatch {
            self.withValueOnQueue { $0.log.append(1) }
        }
        await other.withValue { _ in
            self.withValueOnQueue { $0.log.append(2) }
        }
        return self.withValueOnQueue { $0.log }
    }
}

extension QueueLocalActor where Value == Tally {
    /// Submits `count` pieces of work from inside the actor, alternating a plain queue block and an actor
    /// task (which, created here, is enqueued on the actor's executor at once); returns the count.
    func submitAlternately(count: Int) -> Int {
        for index in 0..<count {
            if index % 2 == 0 {
                self.queue.justDispatch {
                    self.withValueOnQueue { $0.log.append(index) }
                }
            } else {
                Task { self.append(index) }
            }
        }
        return count
    }
}

/// Records, when released, whether that happened on its queue.
final class ReleaseProbe: Sendable {
    let queue: Queue
    let result: Atomic<Bool?>
    init(queue: Queue, result: Atomic<Bool?>) {
        self.queue = queue
        self.result = result
    }
    deinit { self.result.swap(self.queue.isCurrent()) }
}

/// The ways a body can reach its own actor again. (`withValue` inside a body does not compile: the body
/// is not isolated to the actor, so the call would need an `await`.)
enum NestedAccess: Sendable {
    case onQueueInsideWithValue
    case onQueueInsideOnQueue
    case onQueueInsideAHandlersWithValue
    case onQueueInsideAHandlersOnQueue

    func run() async {
        let queue = Queue(name: "nested")
        let actor = QueueLocalActor(queue: queue, value: 0)
        switch self {
        case .onQueueInsideWithValue:
            await actor.withValue { value in
                value += actor.withValueOnQueue { $0 }
            }
        case .onQueueInsideOnQueue:
            await onThread {
                queue.sync {
                    actor.withValueOnQueue { value in
                        value += actor.withValueOnQueue { $0 }
                    }
                }
            }
        case .onQueueInsideAHandlersWithValue, .onQueueInsideAHandlersOnQueue:
            let nested = self
            let done = DispatchSemaphore(value: 0)
            let subscription = actor.subscribe(
                Signal<Int, NoError>.single(1),
                next: { isolated, _ in
                    if nested == .onQueueInsideAHandlersWithValue {
                        isolated.withValue { value in value += isolated.withValueOnQueue { $0 } }
                    } else {
                        isolated.withValueOnQueue { value in value += isolated.withValueOnQueue { $0 } }
                    }
                    done.signal()
                })
            _ = await wait(done)
            subscription.dispose()
        }
    }
}
