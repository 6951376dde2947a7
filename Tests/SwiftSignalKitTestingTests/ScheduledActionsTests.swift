import Testing

@testable import SwiftSignalKitTesting

/// The scheduler's action queue: a heap since 2026-11-30 (a sorted array shifted every later entry, so
/// tens of thousands of sleepers took seconds). It must give exactly the order the array gave.
@Suite struct ScheduledActionsTests {
    /// Random schedules, cancellations and runs, with many ties, against a sorted array: the same action
    /// comes next every time, and the count agrees.
    @Test func givesTheOrderOfASortedList() {
        var random = SeededRandom(seed: 0x5EED)
        var queue = ScheduledActions()
        var reference: [ScheduledActions.Key] = []
        var nextOrder: UInt64 = 0
        for _ in 0..<20_000 {
            switch random.next() % 10 {
            case 0..<5:
                let key = ScheduledActions.Key(
                    due: Int64(random.next() % 50), endsInstant: random.next() % 4 == 0, order: nextOrder)
                nextOrder += 1
                queue.insert(VirtualTimeScheduler.Entry(due: key.due, endsInstant: key.endsInstant, order: key.order, action: {}))
                reference.insert(key, at: reference.firstIndex(where: { runsBefore(key, $0) }) ?? reference.endIndex)
            case 5..<7:
                guard !reference.isEmpty else { continue }
                let index = Int(random.next() % UInt64(reference.count))
                let removed = queue.remove(order: reference[index].order)
                #expect(removed?.order == reference[index].order)
                reference.remove(at: index)
                // Removing it twice finds nothing.
                #expect(queue.remove(order: removed?.order ?? .max) == nil)
            default:
                let first = queue.first()
                #expect(first?.order == reference.first?.order)
                if first != nil {
                    queue.removeFirst()
                    reference.removeFirst()
                }
            }
            #expect(queue.count == reference.count)
        }
        while let first = queue.first() {
            #expect(first.order == reference.removeFirst().order)
            queue.removeFirst()
        }
        #expect(reference.isEmpty)
    }

    /// A cancelled action is released when it is cancelled, not when its time would have come: what it
    /// holds (an operator, a subscriber) goes with it.
    @Test func aCancelledActionIsReleasedAtOnce() {
        final class Held: Sendable {}
        var queue = ScheduledActions()
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            queue.insert(VirtualTimeScheduler.Entry(due: 10, endsInstant: false, order: 0, action: { withExtendedLifetime(held) {} }))
            queue.insert(VirtualTimeScheduler.Entry(due: 5, endsInstant: false, order: 1, action: {}))
        }
        #expect(weakHeld != nil)
        _ = queue.remove(order: 0)
        #expect(weakHeld == nil)
        #expect(queue.count == 1)
        #expect(queue.first()?.order == 1)
    }
}

/// The order the scheduler documents, written out apart from the queue's own comparison: due time, then
/// actions for the end of an instant last, then scheduling order.
private func runsBefore(_ a: ScheduledActions.Key, _ b: ScheduledActions.Key) -> Bool {
    return (a.due, a.endsInstant ? 1 : 0, a.order) < (b.due, b.endsInstant ? 1 : 0, b.order)
}
