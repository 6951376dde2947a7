import Dispatch
import Foundation
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

@Suite struct QueueTests {
    @Test func namedQueueKnowsWhenItIsCurrent() {
        let queue = Queue(name: "test")
        #expect(!queue.isCurrent())
        let inside = queue.queue.sync { queue.isCurrent() }
        #expect(inside)
        #expect(Queue(name: "other").queue.sync { queue.isCurrent() } == false)
    }

    /// Bug 8 of the original: a wrapped queue never reported `isCurrent()`, so `sync` from inside it
    /// deadlocked.
    @Test func wrappedSerialQueueSyncFromInsideRunsInline() async {
        let dispatchQueue = DispatchQueue(label: "wrapped")
        let queue = Queue(queue: dispatchQueue)
        let done = DispatchSemaphore(value: 0)
        let ranInline = Flag()
        queue.async {
            queue.sync { ranInline.set() }
            done.signal()
        }
        #expect(await wait(done), "sync from inside the wrapped queue must not deadlock")
        #expect(ranInline.isSet)
        let again = Queue(queue: dispatchQueue)
        #expect(dispatchQueue.sync { again.isCurrent() }, "two wrappers of one queue agree")
    }

    /// A serial queue of the user's labelled like a global queue (`com.apple.root.` and more) was taken
    /// for one: its own work was not "current" (so `sync` from inside trapped in Dispatch), and two such
    /// queues shared one marker.
    @Test func aQueueLabelledLikeAGlobalQueueIsAnOrdinaryQueue() {
        let first = DispatchQueue(label: "com.apple.root.mine")
        let second = DispatchQueue(label: "com.apple.root.mine")
        let wrappedFirst = Queue(queue: first)
        let wrappedSecond = Queue(queue: second)
        #expect(first.sync { wrappedFirst.isCurrent() })
        #expect(first.sync { !wrappedSecond.isCurrent() }, "another queue of the same label is not current")
        #expect(!wrappedFirst.isGlobalConcurrentQueue)
    }

    @Test func globalQueuesReportIsCurrentForTheirWork() async {
        for queue in [Queue.concurrentDefaultQueue(), Queue.concurrentBackgroundQueue()] {
            let done = DispatchSemaphore(value: 0)
            let current = Flag()
            queue.async {
                if queue.isCurrent() { current.set() }
                done.signal()
            }
            #expect(await wait(done))
            #expect(current.isSet)
            #expect(!queue.isCurrent())
        }
        #expect(Queue.concurrentDefaultQueue() === Queue.concurrentDefaultQueue())
    }

    /// Two wrappers of one global queue agree, as two of a serial queue do, and a `Timer`'s callback on
    /// a global queue is its work too: identity was per wrapper object, and the timer's handler was not
    /// marked.
    @Test func wrappersOfOneGlobalQueueAgreeAndTimerCallbacksAreItsWork() async {
        let mine = Queue(queue: DispatchQueue.global(qos: .default))
        let done = DispatchSemaphore(value: 0)
        let answers = LockedState<[Bool]>([])
        mine.async {
            answers.withLock { $0 = [mine.isCurrent(), Queue.concurrentDefaultQueue().isCurrent()] }
            done.signal()
        }
        #expect(await wait(done))
        #expect(answers.withLock { $0 } == [true, true])
        #expect(!Queue.concurrentBackgroundQueue().isCurrent())
        let fired = DispatchSemaphore(value: 0)
        let inTimer = LockedState<Bool?>(nil)
        let timer = SwiftSignalKit.Timer(
            timeout: 0.001, repeat: false,
            completion: { _ in
                inTimer.withLock { $0 = Queue.concurrentDefaultQueue().isCurrent() }
                fired.signal()
            }, queue: Queue.concurrentDefaultQueue())
        timer.start()
        #expect(await wait(fired))
        #expect(inTimer.withLock { $0 } == true)
        timer.invalidate()
    }

    @Test func asyncRunsInlineWhenAlreadyOnTheQueue() {
        let queue = Queue()
        let order = LockedState<[String]>([])
        queue.sync {
            queue.async { order.withLock { $0.append("inner") } }
            order.withLock { $0.append("after") }
        }
        #expect(order.withLock { $0 } == ["inner", "after"])
    }

    /// On a queue that may be concurrent (a global one, or any wrapped dispatch queue), `async` from the
    /// queue's own work enqueues, as in the original library: inline, work meant to run beside its
    /// caller waited for it, and work waiting for what the caller does next deadlocked.
    @Test func asyncFromTheWorkOfAQueueThatMayBeConcurrentEnqueues() async {
        let queues = [
            Queue.concurrentDefaultQueue(), Queue.concurrentBackgroundQueue(),
            Queue(queue: DispatchQueue(label: "wrapped concurrent", attributes: .concurrent)),
            Queue(queue: DispatchQueue(label: "wrapped serial")),
            // The main queue wrapped, as the original library enqueued there too (only `mainQueue()` ran
            // its work inline); a probe found it inline (2026-11-30).
            Queue(queue: DispatchQueue.main),
        ]
        for queue in queues {
            let done = DispatchSemaphore(value: 0)
            // The thread inside the outer block's call of `async`, while it is inside it.
            let calling = LockedState<UInt?>(nil)
            let ranInline = Flag()
            queue.async {
                calling.withLock { $0 = currentThreadIdentifier() }
                queue.async {
                    if calling.withLock({ $0 }) == currentThreadIdentifier() { ranInline.set() }
                    done.signal()
                }
                calling.withLock { $0 = nil }
            }
            #expect(await wait(done))
            #expect(!ranInline.isSet, "\(queue.queue.label)")
        }
    }

    /// `deliverOn` and `runOn` run work inline exactly where `async` does: on a queue that may be
    /// concurrent they enqueue, as the original library did. A probe found (2026-11-30) that they ran
    /// inline on the global and wrapped queues when already on them, unlike `async`, and `deliverOn`'s
    /// ordering (inline only with nothing pending) assumes a serial queue.
    @Test func deliverOnAndRunOnEnqueueFromTheWorkOfAQueueThatMayBeConcurrent() async {
        let queues = [
            Queue.concurrentDefaultQueue(),
            Queue(queue: DispatchQueue(label: "wrapped concurrent", attributes: .concurrent)),
            Queue(queue: DispatchQueue(label: "wrapped serial")),
            Queue(queue: DispatchQueue.main),
        ]
        for queue in queues {
            let done = DispatchSemaphore(value: 0)
            // The thread inside the outer block's `putNext` or `start`, while it is inside it: on a
            // concurrent queue, enqueued work may run on another thread before the call returns, so the
            // test asks which thread ran it, not in which order.
            let calling = LockedState<UInt?>(nil)
            let ranInline = LockedState<[String]>([])
            let pipe = ValuePipe<Int>()
            let delivered = (pipe.signal() |> deliverOn(queue)).start(next: { _ in
                if calling.withLock({ $0 }) == currentThreadIdentifier() { ranInline.withLock { $0.append("deliverOn") } }
                done.signal()
            })
            let generator = Signal<Never, NoError> { _ in
                if calling.withLock({ $0 }) == currentThreadIdentifier() { ranInline.withLock { $0.append("runOn") } }
                done.signal()
                return EmptyDisposable
            }
            let started = LockedState<Disposable?>(nil)
            queue.async {
                calling.withLock { $0 = currentThreadIdentifier() }
                pipe.putNext(1)
                started.withLock { $0 = (generator |> runOn(queue)).start() }
                calling.withLock { $0 = nil }
            }
            #expect(await wait(done))
            #expect(await wait(done))
            #expect(ranInline.withLock { $0 } == [], "\(queue.queue.label)")
            delivered.dispose()
            started.withLock { $0 }?.dispose()
        }
    }

    /// On the queues where `async` runs inline, so do `deliverOn` and `runOn`.
    @Test func deliverOnAndRunOnRunInlineOnASerialQueueOfTheirOwn() {
        let queue = Queue(name: "own")
        let order = LockedState<[String]>([])
        let pipe = ValuePipe<Int>()
        let delivered = (pipe.signal() |> deliverOn(queue)).start(next: { _ in order.withLock { $0.append("delivered") } })
        let generator = Signal<Never, NoError> { _ in
            order.withLock { $0.append("generator") }
            return EmptyDisposable
        }
        queue.sync {
            pipe.putNext(1)
            order.withLock { $0.append("after putNext") }
            (generator |> runOn(queue)).start().dispose()
            order.withLock { $0.append("after start") }
        }
        #expect(order.withLock { $0 } == ["delivered", "after putNext", "generator", "after start"])
        delivered.dispose()
    }

    @Test func justDispatchAlwaysEnqueues() async {
        let queue = Queue()
        let order = LockedState<[String]>([])
        let done = DispatchSemaphore(value: 0)
        queue.sync {
            queue.justDispatch {
                order.withLock { $0.append("dispatched") }
                done.signal()
            }
            order.withLock { $0.append("after") }
        }
        #expect(await wait(done))
        #expect(order.withLock { $0 } == ["after", "dispatched"])
        let qos = DispatchSemaphore(value: 0)
        queue.justDispatchWithQoS(qos: .userInitiated) { qos.signal() }
        #expect(await wait(qos))
    }

    @Test func afterRunsLaterOnTheQueue() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        let onQueue = Flag()
        queue.after(0.01) {  // no-sleep-check: tests Queue.after itself, waiting for it to run
            if queue.isCurrent() { onQueue.set() }
            done.signal()
        }
        #expect(await wait(done))
        #expect(onQueue.isSet)
    }

    /// On Linux the main queue may be drained by a thread other than the main thread (after
    /// `dispatchMain()`, and under this test runner), so `isCurrent()` cannot rely on the thread alone.
    @Test func mainQueueKnowsItsOwnWork() async {
        let done = DispatchSemaphore(value: 0)
        let current = Flag()
        DispatchQueue.main.async {
            if Queue.mainQueue().isCurrent() { current.set() }
            done.signal()
        }
        #expect(await wait(done))
        #expect(current.isSet)
    }

    @Test func mainQueueIsCurrentOnlyOnTheMainThread() async {
        let main = Queue.mainQueue()
        #expect(main.isCurrent() == Thread.isMainThread)
        let done = DispatchSemaphore(value: 0)
        let onBackground = LockedState<Bool?>(nil)
        Thread {
            onBackground.withLock { $0 = main.isCurrent() }
            done.signal()
        }.start()
        #expect(await wait(done))
        #expect(onBackground.withLock { $0 } == false)
    }
}

@Suite struct TimerTests {
    @Test func oneShotTimerFiresOnceOnItsQueue() async {
        let queue = Queue()
        let fired = Counter()
        let done = DispatchSemaphore(value: 0)
        let timer = Timer(
            timeout: 0.01, repeat: false,
            completion: {
                if queue.isCurrent() { fired.increment() }
                done.signal()
            }, queue: queue)
        timer.start()
        #expect(await wait(done))
        // A later tick, were there one, would run on the queue after this block.
        await drain(queue)
        #expect(fired.value == 1)
    }

    @Test func repeatingTimerStopsWhenInvalidatedFromItsHandler() async {
        let queue = Queue()
        let ticks = Counter()
        let done = DispatchSemaphore(value: 0)
        let timer = Timer(
            timeout: 0.005, repeat: true,
            completion: { timer in
                if ticks.increment() == 3 {
                    timer.invalidate()
                    done.signal()
                }
            }, queue: queue)
        timer.start()
        #expect(await wait(done))
        let observed = queue.queue.sync { ticks.value }
        #expect(observed == 3)
    }

    @Test func invalidatedTimerNeverFires() {
        let scheduler = VirtualTimeScheduler()
        let fired = Flag()
        let timer = Timer(timeout: 1, repeat: false, scheduler: scheduler) { _ in fired.set() }
        timer.start()
        timer.invalidate()
        #expect(scheduler.scheduledActionCount == 0)
        scheduler.run()
        #expect(!fired.isSet)
    }

    /// `schedule(after:)` on a queue: the caller need not keep the disposable, and disposing releases
    /// the action, so it can never run.
    @Test func queueScheduleRunsWithoutTheDisposableAndDisposingReleasesTheAction() async {
        let queue = Queue()
        let done = DispatchSemaphore(value: 0)
        _ = queue.schedule(after: 0.001) { done.signal() }
        #expect(await wait(done))
        let tracker = LifetimeTracker()
        let scheduled: Disposable = {
            let token = tracker.make()
            return queue.schedule(after: 3600) { withExtendedLifetime(token) {} }
        }()
        #expect(tracker.live.value == 1)
        scheduled.dispose()
        #expect(tracker.live.value == 0)
    }
}

@Suite struct QueueLocalObjectTests {
    final class Box {
        var count = 0
        let tracked: Tracked
        init(tracked: Tracked) { self.tracked = tracked }
    }

    @Test func confinesTheObjectToTheQueueAndReleasesItThere() async {
        let queue = Queue()
        let tracker = LifetimeTracker()
        var local: QueueLocalObject<Box>? = QueueLocalObject(queue: queue, generate: { Box(tracked: tracker.make()) })
        let wrongQueue = Flag()
        for _ in 0..<100 {
            local?.with { box in
                if !queue.isCurrent() { wrongQueue.set() }
                box.count += 1
            }
        }
        #expect(local?.syncWith { $0.count } == 100)
        let recorder = Recorder<Int, NoError>()
        let signalDone = DispatchSemaphore(value: 0)
        _ = local!.signalWith { (box: Box, subscriber: Subscriber<Int, NoError>) in
            subscriber.putNext(box.count)
            subscriber.putCompletion()
            signalDone.signal()
            return EmptyDisposable
        }.start(next: { recorder.append(.next($0)) })
        #expect(await wait(signalDone))
        #expect(recorder.values == [100])
        local = nil
        await drain(queue)
        #expect(tracker.live.value == 0, "the object is released (on the queue) with its wrapper")
        #expect(!wrongQueue.isSet)
    }

    /// Made on its own queue, the object is there at once, and `with` runs inline, on every kind of
    /// queue: on a wrapped dispatch queue, whose `async` always enqueues (it may be concurrent), `init`
    /// queued `generate`, and `syncWith` right after it trapped ("the object is not there").
    @Test func madeOnItsOwnQueueTheObjectIsThereAtOnce() async {
        for queue in [Queue(name: "named"), Queue(queue: DispatchQueue(label: "wrapped"))] {
            let done = DispatchSemaphore(value: 0)
            let seen = LockedState<[Int?]>([])
            queue.async {
                let local = QueueLocalObject(queue: queue, generate: { Box(tracked: LifetimeTracker().make()) })
                seen.withLock { $0.append(local.unsafeGet()?.count) }
                local.with { $0.count += 1 }
                seen.withLock { $0.append(local.unsafeGet()?.count) }
                done.signal()
            }
            #expect(await wait(done))
            #expect(seen.withLock { $0 } == [0, 1], "\(queue.queue.label)")
        }
    }

    /// `signalWith` subscribed on the object's own queue runs at once on every kind of queue, as `with`
    /// does. A re-probe found (2026-11-30) that once `runOn` stopped running inline on wrapped queues,
    /// the subscription hopped there: after the caller went on, and, had the object been released
    /// before the hop ran, with nothing for the subscriber.
    @Test func signalWithOnItsOwnQueueRunsAtOnce() async {
        for queue in [Queue(name: "named"), Queue(queue: DispatchQueue(label: "wrapped"))] {
            let done = DispatchSemaphore(value: 0)
            let events = LockedState<[String]>([])
            queue.async {
                var local: QueueLocalObject<Box>? = QueueLocalObject(queue: queue, generate: { Box(tracked: LifetimeTracker().make()) })
                local!.with { $0.count = 7 }
                let signal = local!.signalWith { (box: Box, subscriber: Subscriber<Int, NoError>) in
                    subscriber.putNext(box.count)
                    subscriber.putCompletion()
                    return EmptyDisposable
                }
                _ = signal.start(
                    next: { value in events.withLock { $0.append("next \(value)") } },
                    completed: { events.withLock { $0.append("completed") } })
                local = nil
                events.withLock { $0.append("end of block") }
                done.signal()
            }
            #expect(await wait(done))
            #expect(events.withLock { $0 } == ["next 7", "completed", "end of block"], "\(queue.queue.label)")
        }
    }
}

@Suite struct QueueLocalObjectCompatibilityTests {
    final class Context {
        var count = 0
        let control = MetaDisposable()
    }

    /// Current SwiftSignalKit returns the closure's result itself: Telegram-iOS destructures it. Call
    /// sites written when `syncWith` returned an optional still compile and bind the result.
    @Test func syncWithReturnsTheClosureResultItself() {
        let impl = QueueLocalObject(queue: Queue(name: "impl"), generate: { Context() })
        let (disposable, count) = impl.syncWith { impl -> (Disposable, Int) in
            impl.count += 1
            return (impl.control, impl.count)
        }
        #expect(count == 1)
        #expect(disposable is MetaDisposable)
        let fresh = impl.syncWith { _ in Context() }
        #expect(fresh.count == 0)

        guard let bound = impl.syncWith({ $0.count }) else {
            Issue.record("the object is there")
            return
        }
        #expect(bound == 1)
    }

    @Test func unsafeGetReturnsTheObjectOnItsQueue() {
        let queue = Queue(name: "impl")
        let impl = QueueLocalObject(queue: queue, generate: { Context() })
        let sameObject = impl.syncWith { object in
            impl.unsafeGet() === object
        }
        #expect(sameObject)
    }

    /// On the queue, work queued before the object's `generate` closure finds no object yet.
    @Test func unsafeGetIsNilBeforeTheObjectIsMade() async {
        let queue = Queue(name: "impl")
        let gate = DispatchSemaphore(value: 0)
        let made = DispatchSemaphore(value: 0)
        let holder = LockedState<QueueLocalObject<Context>?>(nil)
        let wasNil = LockedState<Bool?>(nil)
        queue.justDispatch {
            // Runs before the `generate` closure that `init` queues below.
            _ = blockingWait(gate)
            let impl = holder.withLock { $0 }
            wasNil.withLock { $0 = impl?.unsafeGet() == nil }
        }
        holder.withLock { $0 = QueueLocalObject(queue: queue, generate: { Context() }) }
        gate.signal()
        queue.justDispatch { made.signal() }
        #expect(await wait(made))
        #expect(wasNil.withLock { $0 } == true)
        #expect(holder.withLock { $0 }?.syncWith { $0.count } == 0)
    }

    /// A probe found (2026-11-30) that a global concurrent queue was accepted, and the object's updates
    /// raced (76 of 80,000 lost in a debug build).
    @Test func aGlobalConcurrentQueueStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Object {}
            _ = QueueLocalObject(queue: Queue.concurrentDefaultQueue(), generate: { Object() })
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("QueueLocalObject(queue:generate:): the queue must be serial"))
    }

    @Test func unsafeGetOffTheQueueIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            final class Object {}
            let impl = QueueLocalObject(queue: Queue(name: "elsewhere"), generate: { Object() })
            _ = impl.unsafeGet()
        }
    }
}

@Suite struct ThreadPoolTests {
    /// `execute()` is public, as in the original: it runs the task inline unless it was cancelled.
    @Test func aTaskExecutesInlineUnlessCancelled() {
        let runs = Counter()
        let task = ThreadPoolTask { state in
            if !state.cancelled.with({ $0 }) { runs.increment() }
        }
        task.execute()
        #expect(runs.value == 1)
        task.cancel()
        task.execute()
        #expect(runs.value == 1)
    }

    @Test func laneRunsTasksInOrderAndPoolReportsItsThreads() async {
        let pool = ThreadPool(threadCount: 3, threadPriority: 0.5)
        let lane = pool.nextQueue()
        let order = LockedState<[Int]>([])
        let inPool = Counter()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<100 {
            lane.addTask(
                ThreadPoolTask { _ in
                    if pool.isCurrentThreadInPool() { inPool.increment() }
                    order.withLock { $0.append(index) }
                    if index == 99 { done.signal() }
                })
        }
        #expect(await wait(done))
        #expect(order.withLock { $0 } == Array(0..<100))
        #expect(inPool.value == 100)
        #expect(!pool.isCurrentThreadInPool())
        #expect(lane == lane)
        #expect(lane != pool.nextQueue())
    }

    /// A lane with a long queue drops the slots of the tasks it has run while others still wait (it
    /// kept one for every task it ever ran until it emptied), and keeps its order through that.
    @Test func aLongLaneRunsInOrderWhileItDropsTheSlotsItHasRun() async {
        let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
        let lane = pool.nextQueue()
        let gate = DispatchSemaphore(value: 0)
        let order = LockedState<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        lane.addTask(ThreadPoolTask { _ in _ = blockingWait(gate) })
        for index in 0..<1_000 {
            lane.addTask(
                ThreadPoolTask { _ in
                    order.withLock { $0.append(index) }
                    // Half way, more arrive behind the ones still waiting.
                    if index == 500 {
                        for later in 1_000..<1_200 {
                            lane.addTask(ThreadPoolTask { _ in order.withLock { $0.append(later) } })
                        }
                        lane.addTask(ThreadPoolTask { _ in done.signal() })
                    }
                })
        }
        gate.signal()
        #expect(await wait(done))
        #expect(order.withLock { $0 } == Array(0..<1_200))
    }

    @Test func cancelledTaskDoesNotRun() async {
        let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
        let lane = pool.nextQueue()
        let gate = DispatchSemaphore(value: 0)
        let ran = Flag()
        let done = DispatchSemaphore(value: 0)
        lane.addTask(ThreadPoolTask { _ in _ = blockingWait(gate) })
        let cancelled = ThreadPoolTask { _ in ran.set() }
        lane.addTask(cancelled)
        lane.addTask(ThreadPoolTask { _ in done.signal() })
        cancelled.cancel()
        gate.signal()
        #expect(await wait(done))
        #expect(!ran.isSet)
    }

    /// Bug 10 of the original: pool threads looped forever, even after the pool was released.
    @Test func threadsExitWhenThePoolIsReleased() async {
        let exited = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        do {
            let pool = ThreadPool(threadCount: 4, threadPriority: 0.5, onThreadExit: { exited.signal() })
            pool.addTask(ThreadPoolTask { _ in done.signal() })
            #expect(await wait(done))
        }
        for _ in 0..<4 {
            #expect(await wait(exited), "every pool thread exits")
        }
    }
}

@Suite struct ThreadPoolStressTests {
    @Test func manyLanesFromManyThreadsRunEveryTaskOnce() async {
        let pool = ThreadPool(threadCount: 4, threadPriority: 0.5)
        let runs = Counter()
        let done = DispatchSemaphore(value: 0)
        let total = 8 * 500
        await concurrently(8) { _ in
            let lane = pool.nextQueue()
            for _ in 0..<500 {
                lane.addTask(
                    ThreadPoolTask { _ in
                        if runs.increment() == total { done.signal() }
                    })
            }
        }
        #expect(await wait(done))
        #expect(runs.value == total)
    }
}

@Suite struct QueueStressTests {
    /// Queue creation registers a marker under a shared `Lock`; many threads create and wrap queues at once.
    @Test func concurrentCreationAndWrappingAgree() async {
        let shared = DispatchQueue(label: "shared")
        let disagreements = Counter()
        await concurrently(8) { _ in
            for _ in 0..<200 {
                let own = Queue(name: "own")
                let wrapper = Queue(queue: shared)
                if own.queue.sync(execute: { own.isCurrent() }) == false { disagreements.increment() }
                if shared.sync(execute: { wrapper.isCurrent() }) == false { disagreements.increment() }
            }
        }
        #expect(disagreements.value == 0)
    }
}
