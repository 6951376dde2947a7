/// A first-in, first-out buffer of values in a ring, for the buffers that live under a lock: the one
/// queue type of the library (``SerialDelivery``'s queue, `zip`'s buffers, the bridges' buffers).
///
/// `package`: shared with the other modules of this package, not API.
///
/// Every removal moves the value out and leaves an empty slot, so the buffer never holds a consumed
/// value and never releases one itself: the caller receives each removed value and releases it after
/// unlocking (a value's `deinit` is user code). Growing moves the values into a larger array, which
/// releases none of them.
@usableFromInline package struct ValueRing<Element> {
    @usableFromInline package var slots: [Element?] = []
    @usableFromInline package var head = 0
    @usableFromInline package private(set) var count = 0

    @inlinable package init() {}

    @inlinable package var isEmpty: Bool { self.count == 0 }

    /// Adds `element` at the end.
    @inlinable package mutating func append(_ element: Element) {
        if self.count == self.slots.count {
            self.grow()
        }
        var index = self.head + self.count
        if index >= self.slots.count { index -= self.slots.count }
        self.slots[index] = element
        self.count += 1
    }

    /// Removes and returns the first element, or nil when the buffer is empty.
    @inlinable package mutating func popFirst() -> Element? {
        return self.count == 0 ? nil : self.removeFirst()
    }

    /// Removes and returns the first element; the buffer must not be empty.
    @inlinable package mutating func removeFirst() -> Element {
        precondition(self.count > 0, "ValueRing.removeFirst() on an empty buffer")
        let element = self.slots[self.head].take()!
        self.head += 1
        if self.head == self.slots.count { self.head = 0 }
        self.count -= 1
        if self.count == 0 { self.head = 0 }
        return element
    }

    /// Moves every element, last first, to the end of `target`: the consumer then takes them in order
    /// with `popLast()`, which moves each one out, so none stays alive after it was handed out.
    @inlinable package mutating func moveAllReversed(into target: inout [Element]) {
        target.reserveCapacity(target.count + self.count)
        while self.count > 0 {
            var index = self.head + self.count - 1
            if index >= self.slots.count { index -= self.slots.count }
            target.append(self.slots[index].take()!)
            self.count -= 1
        }
        self.head = 0
    }

    /// Empties the buffer and returns its storage, for the caller to release after unlocking.
    @inlinable package mutating func removeAll() -> [Element?] {
        var taken: [Element?] = []
        swap(&taken, &self.slots)
        self.head = 0
        self.count = 0
        return taken
    }

    /// Doubles the storage. Inlinable, so that it is specialised with the buffer: unspecialised, filling
    /// the new array went element by element through generic code that allocated for each one.
    @inlinable package mutating func grow() {
        var larger = [Element?](repeating: nil, count: Swift.max(8, self.slots.count * 2))
        for offset in 0..<self.count {
            var index = self.head + offset
            if index >= self.slots.count { index -= self.slots.count }
            larger[offset] = self.slots[index].take()
        }
        self.slots = larger
        self.head = 0
    }
}

extension ValueRing: Sendable where Element: Sendable {}
