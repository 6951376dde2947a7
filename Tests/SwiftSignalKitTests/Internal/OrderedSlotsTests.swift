import Testing

@testable import SwiftSignalKit

/// The member list under every hot source: elements in insertion order, found by key through a binary
/// search, so compaction must keep the keys sorted.
struct OrderedSlotsTests {
    @Test func compactingInPlaceKeepsTheOrderAndEveryKeyFindsItsElement() {
        var slots = OrderedSlots<String>()
        let keys = (0..<8).map { slots.add("e\($0)") }
        // Removing five of eight leaves more holes than elements: the list compacts, in its own buffer
        // (eight entries for three elements is within eight times).
        for key in [keys[1], keys[2], keys[4], keys[5], keys[7]] {
            #expect(slots.remove(key) != nil)
        }
        #expect(slots.holes == 0, "compacted")
        #expect(slots.entries.count == 3)
        #expect(Array(slots) == ["e0", "e3", "e6"])
        #expect(slots.element(forKey: keys[0]) == "e0")
        #expect(slots.element(forKey: keys[3]) == "e3")
        #expect(slots.element(forKey: keys[6]) == "e6")
        #expect(slots.element(forKey: keys[4]) == nil)
        // Keys keep growing after a compaction, and the new element goes last.
        let later = slots.add("e8")
        #expect(later > keys[7])
        #expect(Array(slots) == ["e0", "e3", "e6", "e8"])
        #expect(slots.remove(keys[3]) == "e3")
        #expect(slots.element(forKey: later) == "e8")
    }

    @Test func aMemberThatKeepsJoiningAndLeavingBesideASteadyOneReusesTheBuffer() {
        var slots = OrderedSlots<Int>()
        let steady = slots.add(0)
        // The first rounds grow the buffer; after that a round allocates nothing.
        for round in 1...4 {
            #expect(slots.remove(slots.add(round)) == round)
        }
        let buffer = slots.entries.withUnsafeBufferPointer { $0.baseAddress }
        for round in 5...100 {
            #expect(slots.remove(slots.add(round)) == round)
            #expect(slots.entries.withUnsafeBufferPointer { $0.baseAddress } == buffer, "round \(round) reallocated")
        }
        #expect(Array(slots) == [0])
        #expect(slots.element(forKey: steady) == 0)
    }

    @Test func aBufferTheAllocatorRoundedUpIsStillReused() {
        var slots = OrderedSlots<Int>()
        _ = slots.add(0)
        // Growth from two to four entries can come back with room for five (the allocator's rounding,
        // seen under load); the list must still compact in place rather than replace its buffer.
        slots.entries.reserveCapacity(5)
        let buffer = slots.entries.withUnsafeBufferPointer { $0.baseAddress }
        for round in 1...20 {
            #expect(slots.remove(slots.add(round)) == round)
            #expect(slots.entries.withUnsafeBufferPointer { $0.baseAddress } == buffer, "round \(round) reallocated")
        }
        // Likewise for two steady members, whose pattern grows the buffer to eight.
        _ = slots.add(-1)
        slots.entries.reserveCapacity(9)
        let larger = slots.entries.withUnsafeBufferPointer { $0.baseAddress }
        for round in 21...40 {
            #expect(slots.remove(slots.add(round)) == round)
            #expect(slots.entries.withUnsafeBufferPointer { $0.baseAddress } == larger, "round \(round) reallocated")
        }
        #expect(Array(slots) == [0, -1])
    }

    @Test func aListThatShrankFarBelowItsBufferGetsABufferOfItsSize() {
        var slots = OrderedSlots<Int>()
        let keys = (0..<1_000).map { slots.add($0) }
        for key in keys.dropFirst(2) {
            _ = slots.remove(key)
        }
        #expect(Array(slots) == [0, 1])
        // At most eight times its count (the in-place limit), plus the allocator's rounding.
        #expect(slots.entries.capacity <= 8 * 2 + 4, "a list that once had many members does not keep their space")
        for key in keys.prefix(2) {
            _ = slots.remove(key)
        }
        #expect(slots.isEmpty)
        #expect(slots.entries.capacity == 0, "the last member leaving frees the buffer")
    }
}
