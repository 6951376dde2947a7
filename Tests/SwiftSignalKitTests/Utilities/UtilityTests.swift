import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct BagTests {
    @Test func keepsInsertionOrderAcrossRemovals() {
        let bag = Bag<String>()
        let a = bag.add("a")
        let b = bag.add("b")
        let c = bag.add("c")
        bag.remove(b)
        #expect(bag.copyItems() == ["a", "c"])
        #expect(bag.get(a) == "a")
        #expect(bag.get(b) == nil)
        #expect(bag.first?.0 == a)
        #expect(bag.copyItemsWithIndices().map { $0.0 } == [a, c])
        bag.remove(a)
        bag.remove(c)
        bag.remove(c)
        #expect(bag.isEmpty)
        #expect(bag.first == nil)
    }

    @Test func manyAddsAndRandomRemovalsStayConsistent() {
        let bag = Bag<Int>()
        var indices = (0..<10_000).map { bag.add($0) }
        var generator = SplitMix64(seed: 7)
        indices.shuffle(using: &generator)
        let removed = Set(indices.prefix(7_000))
        for index in indices.prefix(7_000) {
            bag.remove(index)
        }
        #expect(bag.count == 3_000)
        #expect(bag.copyItems() == (0..<10_000).filter { !removed.contains($0) })
        bag.removeAll()
        #expect(bag.isEmpty)
    }

    /// `first` starts where its last look stopped (the entries before it are removed items), so that a
    /// bag drained from the front is not quadratic: that place must move back when removals compact the
    /// bag, and stay right when an item's deinit adds or removes items. Checked against a plain list.
    @Test func firstStaysTheOldestItemThroughRemovalsAndCompactions() {
        final class Item {
            let value: Int
            let onDeinit: (() -> Void)?
            init(_ value: Int, onDeinit: (() -> Void)? = nil) {
                self.value = value
                self.onDeinit = onDeinit
            }
            deinit { self.onDeinit?() }
        }
        let bag = Bag<Item>()
        var model: [(index: Int, value: Int)] = []
        var random = SystemRandomNumberGenerator()
        var next = 0
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                next += 1
                model.append((bag.add(Item(next)), next))
            case 4..<7:
                // Drain from the front, as `while let (index, _) = bag.first { bag.remove(index) }` does.
                if let (index, _) = bag.first {
                    bag.remove(index)
                    model.removeFirst()
                }
            case 7..<9:
                if !model.isEmpty {
                    let removed = model.remove(at: Int.random(in: 0..<model.count, using: &random))
                    bag.remove(removed.index)
                }
            default:
                // An item whose deinit, run inside `remove`, adds an item and removes the oldest.
                let special = bag.add(
                    Item(0) {
                        next += 1
                        model.append((bag.add(Item(next)), next))
                        let oldest = model.removeFirst()
                        bag.remove(oldest.index)
                    })
                bag.remove(special)
            }
            let first = bag.first
            #expect(first?.0 == model.first?.index && first?.1.value == model.first?.value, "step \(step)")
            if first?.0 != model.first?.index { break }
        }
    }

    @Test func sparseBagAndCounterBag() {
        let sparse = SparseBag<Int>()
        let one = sparse.add(1)
        _ = sparse.add(2)
        sparse.remove(one)
        #expect(Array(sparse) == [2])
        #expect(sparse.get(one) == nil)
        sparse.removeAll()
        #expect(sparse.isEmpty)

        let counters = CounterBag()
        let first = counters.add()
        let second = counters.add()
        #expect(first != second)
        counters.remove(first)
        counters.remove(second)
        #expect(counters.isEmpty)
    }
}

@Suite struct AtomicTests {
    @Test func withModifySwap() throws {
        let atomic = Atomic(value: 1)
        #expect(atomic.with { $0 * 2 } == 2)
        #expect(atomic.modify { $0 + 1 } == 2)
        #expect(atomic.swap(10) == 2)
        #expect(try atomic.tryWith { $0 } == 10)
    }

    @Test func tryWithThrowsWhileLocked() async {
        let atomic = Atomic(value: 0)
        // Holds the lock while it waits for another thread: on a thread of its own, not on the task pool's.
        let result: Result<Int, Error> = await onThread {
            atomic.with { _ in
                // The lock is held here; a try from another thread fails instead of waiting (from this
                // thread too: see tryWithFromInsideWithThrows).
                let box = LockedState<Result<Int, Error>?>(nil)
                let done = Flag()
                let thread = Thread {
                    box.withLock { $0 = Result { try atomic.tryWith { $0 } } }
                    done.set()
                }
                thread.start()
                blockingSpin(until: { done.isSet })
                return box.withLock { $0! }
            }
        }
        #expect(throws: AtomicLockError.isLocked) { try result.get() }
    }

    /// The thread inside `with` that tries the same `Atomic` gets `isLocked`, as in the original
    /// library, rather than a deadlock or a stop.
    @Test func tryWithFromInsideWithThrows() {
        let atomic = Atomic(value: 0)
        let result: Result<Int, Error> = atomic.with { _ in Result { try atomic.tryWith { $0 } } }
        #expect(throws: AtomicLockError.isLocked) { try result.get() }
    }

    @Test func lockRunsCriticalSections() throws {
        let lock = Lock()
        #expect(lock.locked { 5 } == 5)
        #expect(throws: TestError.self) {
            try lock.throwingLocked { throw TestError() }
        }
        #expect(lock.locked { true }, "the lock was released after the throw")
    }

    @Test func weakDoesNotRetain() {
        let tracker = LifetimeTracker()
        var object: Tracked? = tracker.make()
        let weak = Weak(object!)
        #expect(weak.value != nil)
        object = nil
        #expect(weak.value == nil)
        _ = object
    }
}

@Suite struct AtomicStressTests {
    @Test func concurrentModifyIsExact() async {
        let atomic = Atomic(value: 0)
        await concurrently(8) { _ in
            for _ in 0..<10_000 {
                atomic.modify { $0 + 1 }
            }
        }
        #expect(atomic.with { $0 } == 80_000)
    }
}

/// A small seeded generator, so shuffles are reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { self.state = seed }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
