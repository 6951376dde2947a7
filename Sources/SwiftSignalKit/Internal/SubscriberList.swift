/// Subscribers in the order they joined, with O(1) lookup and removal by key.
///
/// A value type, so it can live inside a ``LockedState``.
struct SubscriberList<Element> {
    private var entries: [Int: (order: Int, element: Element)] = [:]
    private var nextKey = 0

    var isEmpty: Bool { self.entries.isEmpty }
    var count: Int { self.entries.count }

    /// Adds an element and returns its key.
    mutating func add(_ element: Element) -> Int {
        let key = self.nextKey
        self.nextKey += 1
        self.entries[key] = (key, element)
        return key
    }

    /// Removes and returns the element under `key`.
    @discardableResult
    mutating func remove(_ key: Int) -> Element? {
        return self.entries.removeValue(forKey: key)?.element
    }

    func element(forKey key: Int) -> Element? {
        return self.entries[key]?.element
    }

    /// The elements in joining order, keeping those for which `include` is true.
    func snapshot(where include: (Int) -> Bool = { _ in true }) -> [Element] {
        if self.entries.count == 1, let only = self.entries.first {
            return include(only.key) ? [only.value.element] : []
        }
        return self.entries.sorted { $0.value.order < $1.value.order }
            .compactMap { include($0.key) ? $0.value.element : nil }
    }

    mutating func removeAll() -> [Element] {
        let all = self.snapshot()
        self.entries = [:]
        return all
    }
}

extension SubscriberList: Sendable where Element: Sendable {}
