import Foundation
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// A short name for a step, so that expectations read as the queue does.
func describe<Item>(_ step: SerialDeliveryStep<Item>) -> String {
    switch step {
    case .deliver(let item):
        return "deliver \(item)"
    case .handOff:
        return "hand off"
    case .idle:
        return "idle"
    }
}

func describe<Item>(_ submission: SerialDelivery<Item>.Submission) -> String {
    switch submission {
    case .deliverNow(let item):
        return "deliver \(item) now"
    case .queued:
        return "queued"
    case .refused(let item):
        return "refused \(item)"
    }
}

@Suite struct SerialDeliveryTests {
    @Test func theFirstSubmitterDeliversAndLaterOnesQueueInOrder() {
        var delivery = SerialDelivery<Int>()
        #expect(describe(delivery.submit(1)) == "deliver 1 now")
        #expect(delivery.isDelivering)
        #expect(describe(delivery.submit(2)) == "queued")
        #expect(describe(delivery.submit(3)) == "queued")
        #expect(describe(delivery.next()) == "deliver 2")
        #expect(describe(delivery.next()) == "deliver 3")
        #expect(describe(delivery.next()) == "idle")
        #expect(!delivery.isDelivering)
        #expect(delivery.queue.slots.isEmpty, "an idle delivery keeps no queue storage")
        #expect(describe(delivery.submit(4)) == "deliver 4 now")
    }

    @Test func theDeliverersOwnFeedbackNeverCountsAgainstTheAllowance() {
        var delivery = SerialDelivery<Int>()
        _ = delivery.submit(0)
        // A callback that sends into the same operator, on the delivering thread, a thousand times.
        for value in 1...1_000 {
            #expect(describe(delivery.submit(value)) == "queued")
        }
        var delivered: [Int] = []
        while case .deliver(let value) = delivery.next() {
            delivered.append(value)
        }
        #expect(delivered == Array(1...1_000), "all on this thread, no hand-off")
        #expect(!delivery.isDelivering)
    }

    @Test func otherThreadsValuesAreHandedOffAfterTheAllowance() async {
        let delivery = LockedState(SerialDelivery<Int>())
        #expect(describe(delivery.withLock { $0.submit(0) }) == "deliver 0 now")
        // Another thread queues 100 values while this one delivers.
        await onThread {
            for value in 1...100 {
                _ = delivery.withLock { $0.submit(value) }
            }
        }
        var delivered: [Int] = []
        var last = "idle"
        while true {
            let step = delivery.withLock { $0.next() }
            guard case .deliver(let value) = step else {
                last = describe(step)
                break
            }
            delivered.append(value)
        }
        #expect(delivered == Array(1...Int(SerialDelivery<Int>.othersAllowance)))
        #expect(last == "hand off")
        #expect(delivery.withLock { $0.isDelivering }, "the role is kept for the hand-off task")
        #expect(describe(delivery.withLock { $0.submit(101) }) == "queued", "nobody takes the role meanwhile")
        // The hand-off task (any thread) resumes with a fresh allowance.
        #expect(describe(delivery.withLock { $0.resume() }) == "deliver 65")
    }

    @Test func closingDropsTheQueueAndRefusesLaterEvents() {
        var delivery = SerialDelivery<Int>()
        _ = delivery.submit(1)
        _ = delivery.submit(2)
        _ = delivery.submit(3)
        let dropped = delivery.close()
        #expect(dropped.count == 2)
        #expect(describe(delivery.next()) == "idle", "the deliverer stops after the event it holds")
        #expect(describe(delivery.submit(4)) == "refused 4")
    }

    @Test func removedEventsAreHandedBackNotReleasedInside() {
        let tracker = LifetimeTracker()
        var delivery = SerialDelivery<Tracked>()
        let first = delivery.submit(tracker.make())
        _ = delivery.submit(tracker.make())
        _ = delivery.submit(tracker.make())
        #expect(tracker.live.value == 3)
        // Kept alive explicitly: an optimised build may release a value after its last use.
        withExtendedLifetime(first) {
            var dropped = delivery.close()
            withExtendedLifetime(dropped) {
                #expect(dropped.count == 2)
                #expect(tracker.live.value == 3, "held by what close() returned")
            }
            dropped = ValueRing()
            #expect(tracker.live.value == 1, "the one being delivered is the deliverer's")
            withExtendedLifetime(dropped) {}
        }
    }

    @Test func valueRingKeepsOrderAcrossWrapAndGrowth() {
        var ring = ValueRing<Int>()
        #expect(ring.popFirst() == nil)
        var expected: [Int] = []
        var popped: [Int] = []
        for value in 0..<1_000 {
            ring.append(value)
            expected.append(value)
            if value % 3 == 0 { popped.append(ring.popFirst()!) }
        }
        while let value = ring.popFirst() { popped.append(value) }
        #expect(popped == expected)
    }
}

/// A host whose events are strings, delivered into a log, with a virtual-time scheduler for hand-offs.
final class LoggingHost: SerialDeliveryHost, @unchecked Sendable {
    // Safe: `log` is written only by the deliverer (one thread at a time, the role passing under
    // `delivery`'s lock) and read by the test after the threads that deliver have finished.
    let delivery = LockedState(SerialDelivery<Int>())
    let scheduler: VirtualTimeScheduler
    let onDeliver: @Sendable (Int) -> Void
    var log: [Int] = []

    init(scheduler: VirtualTimeScheduler, onDeliver: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.scheduler = scheduler
        self.onDeliver = onDeliver
    }

    var handOffScheduler: any SignalScheduler { self.scheduler }

    func nextDelivery(resuming: Bool) -> SerialDeliveryStep<Int> {
        return self.delivery.withLock { $0.step(resuming: resuming) }
    }

    func deliver(_ value: Int) {
        self.log.append(value)
        self.onDeliver(value)
    }

    func send(_ value: Int) {
        if case .deliverNow(let value) = self.delivery.withLock({ $0.submit(value) }) {
            self.deliverSerially(startingWith: value)
        }
    }
}

@Suite struct SerialDeliveryHostTests {
    @Test func theHandOffRunsOnTheOperatorsSchedulerSoVirtualTimeDrivesIt() async {
        let scheduler = VirtualTimeScheduler()
        let box = LockedState<LoggingHost?>(nil)
        let host = LoggingHost(scheduler: scheduler) { value in
            guard value == 0, let host = box.withLock({ $0 }) else { return }
            // While the first value is delivered, another thread sends 100 more.
            let done = DispatchSemaphore(value: 0)
            let other = Thread {
                for value in 1...100 { host.send(value) }
                done.signal()
            }
            other.start()
            done.wait()  // blocking-check: in a callback on a thread of onThread's, waiting for the other sender
        }
        box.withLock { $0 = host }
        // The sender runs on a thread of its own: it waits for the other thread inside the callback.
        await onThread { host.send(0) }
        #expect(host.log == Array(0...64), "its own value and 64 of the other thread's, then the hand-off")
        #expect(scheduler.scheduledActionCount == 1)
        scheduler.run()
        #expect(host.log == Array(0...100), "the rest, in order, when the scheduler runs")
        #expect(host.delivery.withLock { !$0.isDelivering })
    }

    @Test func aFeedbackLoopStaysOnTheDeliveringThread() async {
        let scheduler = VirtualTimeScheduler()
        let box = LockedState<LoggingHost?>(nil)
        let host = LoggingHost(scheduler: scheduler) { value in
            if value < 1_000, let host = box.withLock({ $0 }) { host.send(value + 1) }
        }
        box.withLock { $0 = host }
        host.send(0)
        #expect(host.log == Array(0...1_000))
        #expect(scheduler.scheduledActionCount == 0, "nothing was handed off")
    }

    /// Order comes first: when another thread's values push the deliverer past the bound, the whole
    /// queue, the loop's own values included, goes on in the scheduler's task, in order, none lost.
    @Test func aFeedbackLoopMixedWithAnotherThreadsValuesKeepsItsOrder() async {
        let scheduler = VirtualTimeScheduler()
        let box = LockedState<LoggingHost?>(nil)
        let host = LoggingHost(scheduler: scheduler) { value in
            guard let host = box.withLock({ $0 }) else { return }
            if value == 0 {
                // While the loop's first value is delivered, another thread sends 100 values.
                let done = DispatchSemaphore(value: 0)
                let other = Thread {
                    for value in 1...100 { host.send(1_000 + value) }
                    done.signal()
                }
                other.start()
                done.wait()  // blocking-check: in a callback on a thread of onThread's, waiting for the other sender
            }
            if value < 200 { host.send(value + 1) }
        }
        box.withLock { $0 = host }
        await onThread { host.send(0) }
        #expect(host.log.count < 301, "handed off: the rest waits for the scheduler")
        scheduler.run()
        let log = host.log
        #expect(log.count == 301)
        #expect(log.filter { $0 < 1_000 } == Array(0...200), "the loop's values, in order")
        #expect(log.filter { $0 > 1_000 } == Array(1_001...1_100), "the other thread's, in order")
    }
}
