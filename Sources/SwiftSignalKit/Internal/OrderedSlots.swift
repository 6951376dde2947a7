/// Elements in insertion order, removable by the key `add` returned.
///
/// Keys only grow, so a binary search finds an element: removal is O(log n), with holes compacted in
/// amortised O(1). Iteration is O(n) without sorting, and copying the structure (to iterate outside a
/// lock) only retains its buffers. Removed elements are returned, never released in place, so that a
/// caller holding a lock can release them after unlocking.
@usableFromInline struct OrderedSlots<Element> {
    @usableFromInline var keys: [Int] = []
    @usableFromInline var items: [Element?] = []
    @usableFromInline var holes = 0
    @usableFromInline var nextKey = 0

    @inlinable init() {}

    @inlinable var count: Int { self.items.count - self.holes }
    @inlinable var isEmpty: Bool { self.count == 0 }

    /// Adds an element and returns its key.
    @inlinable
    mutating func add(_ element: Element) -> Int {
        let key = self.nextKey
        self.nextKey += 1
        self.keys.append(key)
        self.items.append(element)
        return key
    }

    /// Removes the element under `key` and returns it (nil if absent).
    @inlinable
    mutating func remove(_ key: Int) -> Element? {
        guard let slot = self.slot(of: key), let element = self.items[slot] else { return nil }
        self.items[slot] = nil
        self.holes += 1
        if self.holes * 2 > self.items.count {
            self.compact()
        }
        return element
    }

    /// Replaces the element under `key`, if present, and returns the old one (for the caller to release
    /// after unlocking).
    @discardableResult
    mutating func replace(_ key: Int, with element: Element) -> Element? {
        guard let slot = self.slot(of: key), let old = self.items[slot] else { return nil }
        self.items[slot] = element
        return old
    }

    /// Removes every element and returns them, in order.
    mutating func removeAll() -> [Element] {
        let all = Array(self)
        self.keys = []
        self.items = []
        self.holes = 0
        return all
    }

    @inlinable func element(forKey key: Int) -> Element? {
        guard let slot = self.slot(of: key) else { return nil }
        return self.items[slot]
    }

    /// The elements with their keys, in order.
    var keyedElements: [(key: Int, element: Element)] {
        var result: [(key: Int, element: Element)] = []
        result.reserveCapacity(self.count)
        for (key, item) in zip(self.keys, self.items) {
            if let item { result.append((key, item)) }
        }
        return result
    }

    @inlinable func slot(of key: Int) -> Int? {
        var low = 0
        var high = self.keys.count
        while low < high {
            let middle = (low + high) / 2
            if self.keys[middle] < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < self.keys.count && self.keys[low] == key ? low : nil
    }

    @usableFromInline
    mutating func compact() {
        var keys: [Int] = []
        var items: [Element?] = []
        keys.reserveCapacity(self.count)
        items.reserveCapacity(self.count)
        for (key, item) in zip(self.keys, self.items) where item != nil {
            keys.append(key)
            items.append(item)
        }
        self.keys = keys
        self.items = items
        self.holes = 0
    }
}

extension OrderedSlots: Sequence {
    @usableFromInline struct Iterator: IteratorProtocol {
        @usableFromInline var base: IndexingIterator<[Element?]>

        @inlinable init(base: IndexingIterator<[Element?]>) {
            self.base = base
        }

        @inlinable
        mutating func next() -> Element? {
            while let item = self.base.next() {
                if let item { return item }
            }
            return nil
        }
    }

    @inlinable func makeIterator() -> Iterator {
        return Iterator(base: self.items.makeIterator())
    }
}

extension OrderedSlots: Sendable where Element: Sendable {}
