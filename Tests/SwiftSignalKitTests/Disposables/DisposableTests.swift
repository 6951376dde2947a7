import Testing

@testable import SwiftSignalKit

/// A key type whose keys all share one hash value, and whose `==`, comparing two keys below 1000, sets
/// a key above 5000 of `collidingDict` (the documentation allows a key's `==` to use the dictionary for other
/// keys). After 10,000 comparisons it stops, so that a search that starts again for ever ends the test.
private struct CollidingKey: Hashable, Sendable {
    let id: Int

    func hash(into hasher: inout Hasher) { hasher.combine(0) }

    static func == (lhs: CollidingKey, rhs: CollidingKey) -> Bool {
        if collidingComparisons.increment() < 10_000 && lhs.id < 1000 && rhs.id < 1000 {
            collidingDict.set(EmptyDisposable, forKey: CollidingKey(id: 5000 + lhs.id))
        }
        return lhs.id == rhs.id
    }
}

private let collidingDict = DisposableDict<CollidingKey>()
private let collidingComparisons = Counter()

/// Keys of one hash value whose `==`, comparing key 2 with key 1, sets key 1 again in `resettingDict`:
/// as another thread that keeps setting key 1 while a slow comparison runs. After 1,000 such sets it
/// stops, so that a search that compares with every new entry for ever ends the test.
private struct ResettingKey: Hashable, Sendable {
    let id: Int

    func hash(into hasher: inout Hasher) { hasher.combine(0) }

    static func == (lhs: ResettingKey, rhs: ResettingKey) -> Bool {
        if Set([lhs.id, rhs.id]) == [1, 2] && resets.increment() <= 1000 {
            resettingDict.set(EmptyDisposable, forKey: ResettingKey(id: 1))
        }
        return lhs.id == rhs.id
    }
}

private let resettingDict = DisposableDict<ResettingKey>()
private let resets = Counter()

@Suite struct DisposableTests {
    /// Every comparison changed the bucket (the nested `set`), so `set` searched it again, compared
    /// again, and never returned. A search that starts again now compares only entries added since.
    @Test func aKeyWhoseEqualitySetsAnotherKeyOfTheSameHashDoesNotSearchForEver() {
        let first = CountingDisposable()
        let second = CountingDisposable()
        collidingDict.set(first, forKey: CollidingKey(id: 1))
        collidingDict.set(second, forKey: CollidingKey(id: 2))
        #expect(collidingComparisons.value < 100, "\(collidingComparisons.value) comparisons")
        collidingDict.set(nil, forKey: CollidingKey(id: 1))
        #expect(first.count.value == 1)
        #expect(second.count.value == 0)
        collidingDict.dispose()
        #expect(second.count.value == 1)
    }

    /// Each set of key 1 made a new entry, which a search for key 2 had not compared yet, so every
    /// search compared again, and each comparison, slower than the sets, saw another: `set` never
    /// returned (a probe, 2026-12-02, with a thread setting a key of the same hash every millisecond and
    /// an `==` of 10 ms). A key set again keeps its key's stamp, which the answers are kept by.
    @Test func aKeySetAgainWhileASlowComparisonRunsIsNotComparedAgain() {
        let held = CountingDisposable()
        resettingDict.set(EmptyDisposable, forKey: ResettingKey(id: 1))
        resettingDict.set(held, forKey: ResettingKey(id: 2))
        #expect(resets.value == 1, "\(resets.value) comparisons of key 2 with key 1")
        resettingDict.set(nil, forKey: ResettingKey(id: 2))
        #expect(held.count.value == 1)
        resettingDict.dispose()
    }

    #if !DEBUG
        /// In an optimised build the shared empty disposable is a static object, whose reference count
        /// the runtime never writes: generators on many threads return it without sharing a written
        /// cache line. (An unoptimised build allocates it at run time, so the check needs release.)
        @Test func theSharedEmptyDisposableIsNeverCounted() {
            let before = _getRetainCount(EmptyDisposable)
            let copies = (0..<100).map { _ in EmptyDisposable }
            #expect(_getRetainCount(EmptyDisposable) == before)
            withExtendedLifetime(copies) {}
        }
    #endif

    @Test func actionDisposableRunsOnce() {
        let runs = Counter()
        let disposable = ActionDisposable { runs.increment() }
        disposable.dispose()
        disposable.dispose()
        #expect(runs.value == 1)
    }

    @Test func actionDisposableReleasesItsClosureWithoutRunning() {
        let tracker = LifetimeTracker()
        let runs = Counter()
        do {
            let object = tracker.make()
            _ = ActionDisposable {
                _ = object; runs.increment()
            }
        }
        #expect(tracker.live.value == 0)
        #expect(runs.value == 0)
    }

    @Test func metaDisposableDisposesPreviousOnSet() {
        let meta = MetaDisposable()
        let first = CountingDisposable()
        let second = CountingDisposable()
        meta.set(first)
        meta.set(second)
        #expect(first.count.value == 1)
        #expect(second.count.value == 0)
        meta.set(nil)
        #expect(second.count.value == 1)
    }

    @Test func metaDisposableDisposesNewDisposableAtOnceAfterDispose() {
        let meta = MetaDisposable()
        let held = CountingDisposable()
        meta.set(held)
        meta.dispose()
        meta.dispose()
        #expect(held.count.value == 1)
        let late = CountingDisposable()
        meta.set(late)
        #expect(late.count.value == 1)
    }

    @Test func disposableSetDisposesAllMembersAndLateAdditions() {
        let set = DisposableSet()
        let members = (0..<5).map { _ in CountingDisposable() }
        members.forEach(set.add)
        set.remove(members[0])
        set.dispose()
        set.dispose()
        #expect(members.map { $0.count.value } == [0, 1, 1, 1, 1])
        let late = CountingDisposable()
        set.add(late)
        #expect(late.count.value == 1)
    }

    /// As in the original, whose set was an array: client code adds a subscription, then an
    /// `ActionDisposable` that cleans up after it, and relies on that order. Kept by identity, the
    /// members were disposed in an order that depended on their addresses and the hash seed.
    @Test func disposableSetDisposesInTheOrderMembersWereAdded() {
        let order = LockedState<[Int]>([])
        for _ in 0..<50 {
            order.withLock { $0 = [] }
            let set = DisposableSet()
            let members = (0..<8).map { index in ActionDisposable { order.withLock { $0.append(index) } } }
            members.forEach(set.add)
            // Removed and added again: it goes to the end. Added twice: its first place counts.
            set.remove(members[2])
            set.add(members[2])
            set.add(members[5])
            set.dispose()
            #expect(order.withLock { $0 } == [0, 1, 3, 4, 5, 6, 7, 2])
        }
    }

    @Test func disposableSetCountsRepeatedAdds() {
        let set = DisposableSet()
        let member = CountingDisposable()
        set.add(member)
        set.add(member)
        set.remove(member)
        set.dispose()
        #expect(member.count.value == 1)
    }

    /// `removeLast()` (the original's, from 2024) forgets the latest addition without disposing it, as
    /// the original's list did, also among members added more than once.
    @Test func disposableSetRemoveLastForgetsTheLatestAddition() {
        let set = DisposableSet()
        let (a, b, c) = (CountingDisposable(), CountingDisposable(), CountingDisposable())
        set.removeLast()  // empty: nothing to do (the original trapped)
        // The original's list: [b, a, b, c].
        set.add(b)
        set.add(a)
        set.add(b)
        set.add(c)
        set.removeLast()  // [b, a, b]
        #expect(c.count.value == 0)
        set.removeLast()  // [b, a]: b's latest addition
        set.removeLast()  // [b]
        #expect(a.count.value == 0)
        set.dispose()
        #expect([a.count.value, b.count.value, c.count.value] == [0, 1, 0])
        set.removeLast()  // disposed: nothing to do
    }

    /// `remove(_:)` forgets a member's earliest addition, as the original's list did: what `dispose()`
    /// then disposes first follows the additions left.
    @Test func disposableSetRemoveForgetsTheEarliestAddition() {
        let set = DisposableSet()
        let order = LockedState<[String]>([])
        let a = ActionDisposable { order.withLock { $0.append("a") } }
        let b = ActionDisposable { order.withLock { $0.append("b") } }
        // The original's list: [a, b, a]; after remove(a): [b, a].
        set.add(a)
        set.add(b)
        set.add(a)
        set.remove(a)
        set.removeLast()  // [b]
        set.add(a)  // [b, a]
        set.dispose()
        #expect(order.withLock { $0 } == ["b", "a"])
    }

    /// Random `add`, `remove` and `removeLast` calls on a few members, against the original's list: the
    /// same members are disposed, in the same order (each once, at its first place in the list).
    @Test func disposableSetAnswersAsTheOriginalsListWould() {
        var random = SplitMix64(seed: 0x5EED)
        for _ in 0..<2_000 {
            let order = LockedState<[Int]>([])
            let members = (0..<5).map { index in ActionDisposable { order.withLock { $0.append(index) } } }
            let set = DisposableSet()
            var list: [Int] = []
            for _ in 0..<Int(random.next() % 24) {
                let index = Int(random.next() % 5)
                switch random.next() % 4 {
                case 0, 1:
                    set.add(members[index])
                    list.append(index)
                case 2:
                    set.remove(members[index])
                    if let position = list.firstIndex(of: index) { list.remove(at: position) }
                default:
                    set.removeLast()
                    if !list.isEmpty { list.removeLast() }
                }
            }
            set.dispose()
            var expected: [Int] = []
            for index in list where !expected.contains(index) { expected.append(index) }
            #expect(order.withLock { $0 } == expected, "list \(list)")
        }
    }

    /// Bug 7 of the original: `set(nil, forKey:)` disposed the entry but left it in the dictionary, so the
    /// final `dispose()` disposed it a second time.
    @Test func disposableDictSetNilRemovesTheEntry() {
        let dict = DisposableDict<String>()
        let entry = CountingDisposable()
        dict.set(entry, forKey: "a")
        dict.set(nil, forKey: "a")
        #expect(entry.count.value == 1)
        dict.dispose()
        #expect(entry.count.value == 1, "the removed entry is not disposed again")
    }

    @Test func disposableDictReplacesAndDisposesLateEntries() {
        let dict = DisposableDict<Int>()
        let first = CountingDisposable()
        let second = CountingDisposable()
        dict.set(first, forKey: 1)
        dict.set(second, forKey: 1)
        #expect(first.count.value == 1)
        dict.dispose()
        #expect(second.count.value == 1)
        let late = CountingDisposable()
        dict.set(late, forKey: 2)
        #expect(late.count.value == 1)
    }

    /// The entries are disposed in the order they were stored, whatever the process's hash seed: they
    /// were disposed in the order of a dictionary's buckets, which changes from one process to the next,
    /// so a test on virtual time that disposed per-key subscriptions together saw its events reordered.
    @Test func disposableDictDisposesInTheOrderEntriesWereStored() {
        let order = LockedState<[String]>([])
        let dict = DisposableDict<String>()
        let keys = (0..<32).map { "key \($0)" }
        for key in keys {
            dict.set(ActionDisposable { order.withLock { $0.append(key) } }, forKey: key)
        }
        // Set again: its latest store counts. Removed: disposed then, not again.
        dict.set(ActionDisposable { order.withLock { $0.append("key 3") } }, forKey: "key 3")
        dict.set(nil, forKey: "key 5")
        order.withLock { $0 = [] }
        dict.dispose()
        let expected = keys.filter { $0 != "key 3" && $0 != "key 5" } + ["key 3"]
        #expect(order.withLock { $0 } == expected)
    }

    @Test func strictDisposableForwardsDispose() {
        let inner = CountingDisposable()
        let strict = inner.strict()
        strict.dispose()
        #expect(inner.count.value == 1)
    }

    @Test func emptyDisposableIsShared() {
        EmptyDisposable.dispose()
        #expect(EmptyDisposable === EmptyDisposable)
    }
}

@Suite struct DisposableStressTests {
    @Test func metaDisposableSetRacingDisposeDisposesEverything() async {
        for _ in 0..<200 {
            let meta = MetaDisposable()
            let members = (0..<8).map { _ in CountingDisposable() }
            await concurrently(members.count + 1) { index in
                if index == members.count {
                    meta.dispose()
                } else {
                    meta.set(members[index])
                }
            }
            meta.set(nil)
            #expect(members.allSatisfy { $0.count.value == 1 }, "each member is disposed exactly once")
        }
    }

    @Test func disposableSetAddRacingDisposeDisposesEverything() async {
        for _ in 0..<200 {
            let set = DisposableSet()
            let members = (0..<16).map { _ in CountingDisposable() }
            await concurrently(members.count + 1) { index in
                if index == members.count {
                    set.dispose()
                } else {
                    set.add(members[index])
                }
            }
            #expect(members.allSatisfy { $0.count.value == 1 })
        }
    }

    @Test func disposableDictConcurrentSetsDisposeEachEntryOnce() async {
        let dict = DisposableDict<Int>()
        let entries = (0..<400).map { _ in CountingDisposable() }
        await concurrently(8) { thread in
            for index in stride(from: thread, to: entries.count, by: 8) {
                dict.set(entries[index], forKey: index % 10)
            }
        }
        dict.dispose()
        #expect(entries.allSatisfy { $0.count.value == 1 })
    }

    @Test func actionDisposableRunsOnceUnderContention() async {
        for _ in 0..<500 {
            let runs = Counter()
            let disposable = ActionDisposable { runs.increment() }
            await concurrently(4) { _ in disposable.dispose() }
            #expect(runs.value == 1)
        }
    }
}
