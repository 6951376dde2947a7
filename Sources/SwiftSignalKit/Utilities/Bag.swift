/// An insertion-ordered collection whose items are removed by the index ``add(_:)`` returned.
///
/// Removal is O(log n) plus amortised O(1) compaction, so many subscribers can come and go without
/// quadratic cost (the original removed in O(n)). `Bag` is not thread-safe; guard it with a lock.
public final class Bag<T> {
    /// The handle ``add(_:)`` returns.
    public typealias Index = Int

    private var slots = OrderedSlots<T>()
    /// How many entries at the front of `slots` are known to be holes: where ``first`` starts looking.
    private var leadingHoles = 0

    /// Creates an empty bag.
    public init() {}

    /// Adds an item.
    ///
    /// - Parameter item: The item.
    /// - Returns: The index that removes it.
    public func add(_ item: T) -> Index {
        return self.slots.add(item)
    }

    /// Returns the item added under `index`, or nil if it has been removed.
    ///
    /// - Parameter index: An index from ``add(_:)``.
    /// - Returns: The item, if present.
    public func get(_ index: Index) -> T? {
        return self.slots.element(forKey: index)
    }

    /// Removes the item added under `index`. Does nothing if it is not present.
    ///
    /// - Parameter index: An index from ``add(_:)``.
    public func remove(_ index: Index) {
        let before = self.slots.entries.count
        let removed = self.slots.remove(index)
        if self.slots.entries.count != before {
            // Compacted: the items moved to the front.
            self.leadingHoles = 0
        }
        // Released last: its deinit may use the bag.
        withExtendedLifetime(removed) {}
    }

    /// Removes every item.
    public func removeAll() {
        let removed = self.slots.removeAll()
        self.leadingHoles = 0
        withExtendedLifetime(removed) {}
    }

    /// The items, in insertion order.
    ///
    /// - Returns: A copy of the items.
    public func copyItems() -> [T] {
        return Array(self.slots)
    }

    /// The items with their indices, in insertion order.
    ///
    /// - Returns: A copy of the index-item pairs.
    public func copyItemsWithIndices() -> [(Index, T)] {
        return self.slots.keyedElements.map { ($0.key, $0.element) }
    }

    /// Whether the bag has no items.
    public var isEmpty: Bool {
        return self.slots.isEmpty
    }

    /// The oldest item with its index, or nil when empty. Amortised O(1), also while the bag is drained
    /// from the front (`while let (index, _) = bag.first { bag.remove(index) }`).
    public var first: (Index, T)? {
        // The first entry that holds an item, without building the list of all of them, and from where
        // the last look stopped: the entries before it are holes (removed items) until a compaction.
        let entries = self.slots.entries
        var position = min(self.leadingHoles, entries.count)
        while position < entries.count {
            if let element = entries[position].element {
                self.leadingHoles = position
                return (entries[position].key, element)
            }
            position += 1
        }
        self.leadingHoles = position
        return nil
    }

    /// The number of items.
    var count: Int {
        return self.slots.count
    }
}

@available(*, unavailable, message: "Bag is not thread-safe; guard it with a lock")
extension Bag: Sendable {}

/// A collection keyed by insertion index, with O(1) removal; iteration order is unspecified.
///
/// Not thread-safe; guard it with a lock.
public final class SparseBag<T>: Sequence {
    /// The handle ``add(_:)`` returns.
    public typealias Index = Int

    private var nextIndex: Index = 0
    private var items: [Index: T] = [:]

    /// Creates an empty bag.
    public init() {}

    /// Adds an item.
    ///
    /// - Parameter item: The item.
    /// - Returns: The index that removes it.
    public func add(_ item: T) -> Index {
        let key = self.nextIndex
        self.nextIndex += 1
        self.items[key] = item
        return key
    }

    /// Returns the item under `index`, or nil.
    ///
    /// - Parameter index: An index from ``add(_:)``.
    /// - Returns: The item, if present.
    public func get(_ index: Index) -> T? {
        return self.items[index]
    }

    /// Removes the item under `index`, if present.
    ///
    /// - Parameter index: An index from ``add(_:)``.
    public func remove(_ index: Index) {
        self.items.removeValue(forKey: index)
    }

    /// Removes every item.
    public func removeAll() {
        self.items.removeAll()
    }

    /// Whether the bag has no items.
    public var isEmpty: Bool {
        return self.items.isEmpty
    }

    /// Iterates over the items in unspecified order.
    ///
    /// - Returns: An iterator over a snapshot of the items.
    public func makeIterator() -> AnyIterator<T> {
        var iterator = self.items.makeIterator()
        return AnyIterator { iterator.next()?.value }
    }
}

@available(*, unavailable, message: "SparseBag is not thread-safe; guard it with a lock")
extension SparseBag: Sendable {}

/// A set of counters: ``add()`` hands out a fresh index, ``remove(_:)`` returns it.
///
/// Not thread-safe; guard it with a lock.
public final class CounterBag {
    private var nextIndex = 1
    private var items = Set<Int>()

    /// Creates an empty bag.
    public init() {}

    /// Adds a counter.
    ///
    /// - Returns: Its index.
    public func add() -> Int {
        let index = self.nextIndex
        self.nextIndex += 1
        self.items.insert(index)
        return index
    }

    /// Removes a counter.
    ///
    /// - Parameter index: An index from ``add()``.
    public func remove(_ index: Int) {
        self.items.remove(index)
    }

    /// Whether no counters remain.
    public var isEmpty: Bool {
        return self.items.isEmpty
    }
}

@available(*, unavailable, message: "CounterBag is not thread-safe; guard it with a lock")
extension CounterBag: Sendable {}
