/// Elements in insertion order, removable by the key `add` returned.
///
/// Keys only grow, so a binary search finds an element: removal is O(log n), with holes compacted in
/// amortised O(1). Iteration is O(n) without sorting, and copying the structure (to iterate outside a
/// lock) only retains its buffer. Removed elements are returned, never released in place, so that a
/// caller holding a lock can release them after unlocking.
///
/// Keys and elements share one array: a list with one member (a promise with one subscriber) costs one
/// allocation, not two.
@usableFromInline struct OrderedSlots<Element> {
    /// One slot: a key, and its element until the element is removed (a hole, until compaction).
    @usableFromInline struct Entry {
        @usableFromInline let key: Int
        @usableFromInline var element: Element?

        @inlinable init(key: Int, element: Element?) {
            self.key = key
            self.element = element
        }
    }

    /// Sorted by key, since keys only grow.
    @usableFromInline var entries: [Entry] = []
    @usableFromInline var holes = 0
    @usableFromInline var nextKey = 0

    @inlinable init() {}

    @inlinable var count: Int { self.entries.count - self.holes }
    @inlinable var isEmpty: Bool { self.count == 0 }

    /// Whether ``close()`` emptied the list for good: nothing may be added any more.
    @inlinable var isClosed: Bool { self.nextKey < 0 }

    /// Empties the list for good (its owner is going, and nobody will use the elements again), marking
    /// it closed with a negative next key. Returns what it held, to be released after unlocking.
    @inlinable mutating func close() -> OrderedSlots {
        var closed = OrderedSlots()
        closed.nextKey = .min
        swap(&closed, &self)
        return closed
    }

    /// Adds an element and returns its key.
    @inlinable
    mutating func add(_ element: Element) -> Int {
        assert(!self.isClosed, "OrderedSlots: an element added after the list was closed")
        let key = self.nextKey
        self.nextKey += 1
        self.entries.append(Entry(key: key, element: element))
        return key
    }

    /// Removes the element under `key` and returns it (nil if absent).
    @inlinable
    mutating func remove(_ key: Int) -> Element? {
        guard let slot = self.slot(of: key), let element = self.entries[slot].element else { return nil }
        self.entries[slot].element = nil
        self.holes += 1
        if self.holes * 2 > self.entries.count {
            self.compact()
        }
        return element
    }

    /// Replaces the element under `key`, if present, and returns the old one (for the caller to release
    /// after unlocking).
    @inlinable @discardableResult
    mutating func replace(_ key: Int, with element: Element) -> Element? {
        guard let slot = self.slot(of: key), let old = self.entries[slot].element else { return nil }
        self.entries[slot].element = element
        return old
    }

    /// Removes every element and returns them, in order.
    @inlinable mutating func removeAll() -> [Element] {
        let all = Array(self)
        self.entries = []
        self.holes = 0
        return all
    }

    @inlinable func element(forKey key: Int) -> Element? {
        guard let slot = self.slot(of: key) else { return nil }
        return self.entries[slot].element
    }

    /// The elements with their keys, in order.
    var keyedElements: [(key: Int, element: Element)] {
        var result: [(key: Int, element: Element)] = []
        result.reserveCapacity(self.count)
        for entry in self.entries {
            if let element = entry.element { result.append((entry.key, element)) }
        }
        return result
    }

    @inlinable func slot(of key: Int) -> Int? {
        var low = 0
        var high = self.entries.count
        while low < high {
            let middle = (low + high) / 2
            if self.entries[middle].key < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < self.entries.count && self.entries[low].key == key ? low : nil
    }

    /// Drops the holes. When every element is gone the buffer goes too: a list that once had many
    /// members does not keep their space once they have left. A buffer at most eight times the size the
    /// elements need is compacted in place, so that a list whose one extra member keeps joining and
    /// leaving (a promise or a share with a steady subscriber) allocates nothing after the first time;
    /// a larger one is replaced by one of the right size.
    ///
    /// Why eight: with `count` steady elements, that pattern reaches `2 * count + 1` entries before it
    /// compacts, and doubling growth gives a buffer of up to `4 * count`. An array's capacity is what the
    /// allocator handed back, which can be a slot or two more than asked for (glibc does not split off a
    /// remainder too small to be a chunk), so a limit of exactly four times was crossed depending on the
    /// allocator's state, and the buffer was then replaced at every other compaction.
    @inlinable
    mutating func compact() {
        guard self.count > 0 else {
            self.entries = []
            self.holes = 0
            return
        }
        if self.entries.capacity <= 8 * self.count {
            // Keeps the order of the elements left, so the keys stay sorted.
            self.entries.removeAll(where: { $0.element == nil })
            self.holes = 0
            return
        }
        var entries: [Entry] = []
        entries.reserveCapacity(self.count)
        for entry in self.entries where entry.element != nil {
            entries.append(entry)
        }
        self.entries = entries
        self.holes = 0
    }
}

extension OrderedSlots: Sequence {
    @usableFromInline struct Iterator: IteratorProtocol {
        @usableFromInline var base: IndexingIterator<[Entry]>

        @inlinable init(base: IndexingIterator<[Entry]>) {
            self.base = base
        }

        @inlinable
        mutating func next() -> Element? {
            while let entry = self.base.next() {
                if let element = entry.element { return element }
            }
            return nil
        }
    }

    @inlinable func makeIterator() -> Iterator {
        return Iterator(base: self.entries.makeIterator())
    }
}

extension OrderedSlots.Entry: Sendable where Element: Sendable {}
extension OrderedSlots: Sendable where Element: Sendable {}
