/// A group of disposables disposed together.
///
/// ```swift
/// final class Session {
///     private let disposables = DisposableSet()
///     func begin() {
///         disposables.add(updates.start(next: { print($0) }))
///         disposables.add(heartbeat.start())
///     }
///     deinit { disposables.dispose() }
/// }
/// ```
///
/// Adding to a disposed set disposes the new member at once. ``remove(_:)`` forgets a member without
/// disposing it. Removal is O(1) on average, so sets with many members stay cheap. ``dispose()``
/// disposes the members in the order they were added, as the original library did (code that adds a
/// subscription, then an `ActionDisposable` that cleans up after it, relies on that).
///
/// The original kept a list, and this set answers as that list would: ``remove(_:)`` forgets a
/// member's earliest addition, ``removeLast()`` the latest addition of all; a member added twice is
/// still disposed only once.
public final class DisposableSet: Disposable {
    private struct State {
        var isDisposed = false
        /// Each member with how many times it was added, and when it was first added (``dispose()``
        /// disposes in that order).
        var members: [ObjectIdentifier: Member] = [:]
        /// The numbers of every addition, in order, of each member added more than once (a member added
        /// once was added at its `added`): what ``remove(_:)`` and ``removeLast()`` need to answer as a
        /// list would. Empty unless a member is added twice, so a set of distinct members pays nothing.
        /// A slice, so that forgetting the earliest or the latest addition takes constant time.
        var repeated: [ObjectIdentifier: ArraySlice<UInt64>] = [:]
        /// Every addition in order, once ``removeLast()`` has been called (nil before, so a set that
        /// never calls it pays nothing per addition). Entries whose addition was forgotten by
        /// ``remove(_:)`` stay until ``removeLast()`` passes them, or until they outnumber the rest.
        var order: [(added: UInt64, key: ObjectIdentifier)]?
        /// Additions not forgotten: the sum of the members' counts.
        var held = 0
        var additions: UInt64 = 0

        /// The latest addition of the member under `key`, if it is a member.
        func latestAddition(of key: ObjectIdentifier) -> UInt64? {
            guard let member = self.members[key] else { return nil }
            return member.count > 1 ? self.repeated[key]?.last : member.added
        }

        /// Every addition not forgotten, in order.
        func currentOrder() -> [(added: UInt64, key: ObjectIdentifier)] {
            var order: [(added: UInt64, key: ObjectIdentifier)] = []
            order.reserveCapacity(self.held)
            for (key, member) in self.members {
                if member.count > 1, let additions = self.repeated[key] {
                    order.append(contentsOf: additions.lazy.map { (added: $0, key: key) })
                } else {
                    order.append((member.added, key))
                }
            }
            order.sort { $0.added < $1.added }
            return order
        }

        /// Forgets one addition of the member under `key`: its earliest, or its `latest`. Returns the
        /// member when that was its last addition, for the caller to release after unlocking.
        mutating func forget(_ key: ObjectIdentifier, latest: Bool) -> Disposable? {
            guard let member = self.members[key] else { return nil }
            self.held -= 1
            // Taken out of the dictionary, so that it is changed in place rather than copied.
            guard member.count > 1, var additions = self.repeated.removeValue(forKey: key) else {
                self.members[key] = nil
                return member.disposable
            }
            if latest {
                additions.removeLast()
            } else {
                additions.removeFirst()
            }
            self.members[key] = (member.disposable, member.count - 1, additions.first ?? member.added)
            if additions.count > 1 {
                self.repeated[key] = additions
            }
            return nil
        }
    }

    private typealias Member = (disposable: Disposable, count: Int, added: UInt64)

    private let state = LockedState<State>(State())

    /// Creates an empty set.
    public init() {}

    /// Adds a member, or disposes it at once if the set has been disposed.
    ///
    /// Adding the same object twice keeps it until it has been removed twice.
    ///
    /// - Parameter disposable: The member to add.
    public func add(_ disposable: Disposable) {
        let rejected = self.state.withLock { state -> Bool in
            if state.isDisposed { return true }
            let key = ObjectIdentifier(disposable)
            state.additions += 1
            state.held += 1
            if let existing = state.members[key] {
                state.members[key] = (existing.disposable, existing.count + 1, existing.added)
                state.repeated[key, default: [existing.added]].append(state.additions)
            } else {
                state.members[key] = (disposable, 1, state.additions)
            }
            state.order?.append((state.additions, key))
            return false
        }
        if rejected {
            disposable.dispose()
        }
    }

    /// Forgets a member without disposing it (its earliest addition, if it was added more than once).
    /// Does nothing if it is not a member.
    ///
    /// - Parameter disposable: The member to forget (compared by identity).
    public func remove(_ disposable: Disposable) {
        let removed = self.state.withLock { state -> Disposable? in
            let removed = state.forget(ObjectIdentifier(disposable), latest: false)
            // The forgotten addition's entry stays in `order`: rebuilt once such entries outnumber the
            // rest, so a set that adds and removes for ever after a `removeLast()` stays bounded.
            if let count = state.order?.count, count > 2 * state.held + 32 {
                state.order = state.currentOrder()
            }
            return removed
        }
        // Released here, outside the lock.
        withExtendedLifetime(removed) {}
    }

    /// Forgets, without disposing it, the member added last (of a member added more than once, that
    /// addition). Does nothing if the set is empty or disposed (the original trapped).
    ///
    /// The first call sorts the additions (time in proportion to their number, times its logarithm);
    /// from then on the set keeps them in order, and each call takes constant time on average.
    public func removeLast() {
        let removed = self.state.withLock { state -> Disposable? in
            guard !state.isDisposed else { return nil }
            if state.order == nil {
                state.order = state.currentOrder()
            }
            // The latest entry whose addition is not forgotten is the latest addition of all; entries
            // passed on the way were forgotten by `remove(_:)`.
            while let last = state.order?.popLast() {
                if state.latestAddition(of: last.key) == last.added {
                    return state.forget(last.key, latest: true)
                }
            }
            return nil
        }
        // Released here, outside the lock.
        withExtendedLifetime(removed) {}
    }

    /// Disposes every member, in the order they were added; later ``add(_:)`` calls dispose their
    /// argument at once.
    public func dispose() {
        let members = self.state.withLock { state -> [ObjectIdentifier: Member] in
            guard !state.isDisposed else { return [:] }
            state.isDisposed = true
            state.repeated = [:]
            state.order = nil
            state.held = 0
            var members: [ObjectIdentifier: Member] = [:]
            swap(&members, &state.members)
            return members
        }
        // Sorted after unlocking: the lock is held only to take the members.
        for member in members.values.sorted(by: { $0.added < $1.added }) {
            member.disposable.dispose()
        }
    }
}

/// Disposables kept under keys; setting a key disposes what it held.
///
/// ```swift
/// let downloads = DisposableDict<String>()
/// downloads.set(download(url).start(), forKey: url)
/// downloads.set(nil, forKey: url) // cancels that download and removes the key
/// ```
///
/// Your key type's `hash(into:)` and `==` run outside the dictionary's lock, so they may use this
/// dictionary for other keys. Concurrent calls for the same key take effect one after the other, each
/// disposing what the previous one stored.
///
/// A call compares its key with each key of the same hash value once, also while other threads set them
/// again; a key stored by another thread meanwhile is compared too, before the call takes effect. So
/// while other threads keep storing new keys of that hash value faster than `==` answers (a slow `==`
/// and a hash that many keys share), a call goes on comparing: give keys a hash that tells them apart.
public final class DisposableDict<T: Hashable & Sendable>: Disposable {
    /// The entries whose keys share one hash value, with the stamp of the change that last wrote them.
    private struct Bucket {
        var stamp: UInt64
        /// Each entry with the stamp of the change that added it (the order `dispose()` follows) and
        /// its key's: the stamp of the change that first stored a key equal to it, kept when the key is
        /// set again. A search that must start again compares the key only with keys stored since (see
        /// `set`).
        var entries: [(key: T, disposable: Disposable, added: UInt64, keyStamp: UInt64)]
    }

    private struct State {
        var isDisposed = false
        /// Keyed by the keys' hash values, computed outside the lock: hashing and comparing `Int`s runs
        /// no user code. Keys within a bucket are compared outside the lock too (see `set`).
        var buckets: [Int: Bucket] = [:]
        /// Advanced by every change and stamped on the bucket it wrote, so that `set` can tell whether
        /// the bucket it searched unlocked is still current. A stamp is never reused, so a bucket that
        /// was emptied and filled again meanwhile is not mistaken for the one searched.
        var lastStamp: UInt64 = 0
    }

    private let state = LockedState<State>(State())

    /// Creates an empty dictionary.
    public init() {}

    /// Stores `disposable` under `key`, disposing whatever the key held.
    ///
    /// - Parameters:
    ///   - disposable: The new disposable, or nil to dispose and remove the key's entry.
    ///   - key: The key. If the dictionary has been disposed, `disposable` is disposed at once.
    public func set(_ disposable: Disposable?, forKey key: T) {
        let hash = key.hashValue
        // What `key == entry.key` answered for each key compared so far, by the entry's key stamp: a
        // search that starts again asks only about keys stored since. Otherwise a key whose `==` sets
        // another key of the same hash value changed the bucket at every comparison, and the search
        // started again for ever. By the key's stamp, not the entry's: a key that another thread kept
        // setting again made a new entry each time, and a search whose `==` was slower than those sets
        // compared with each new one and never finished (a probe, 2026-12-02). A key set again is equal
        // to the one it replaced, so (`==` being an equivalence) the answer about the first holds for it.
        // A dictionary, not a list: with many keys of one hash value, a list made each search quadratic.
        var compared: [UInt64: Bool] = [:]
        while true {
            // Read the bucket under the lock, search it unlocked (the user's `==`), then apply the
            // change only if that bucket did not change meanwhile; otherwise search again. Changes to
            // other buckets (a key's `==` that sets another key, say) do not make it search again.
            let (bucket, isDisposed) = self.state.withLock { state in
                (state.buckets[hash], state.isDisposed)
            }
            if isDisposed {
                disposable?.dispose()
                return
            }
            var updated = bucket?.entries ?? []
            var previous: Disposable?
            let index = updated.firstIndex { entry in
                if let known = compared[entry.keyStamp] { return known }
                let equal = entry.key == key
                compared[entry.keyStamp] = equal
                return equal
            }
            // 0: the key is new to the bucket, and its stamp is the change's own, given under the lock.
            var keyStamp: UInt64 = 0
            if let index {
                let removed = updated.remove(at: index)
                previous = removed.disposable
                keyStamp = removed.keyStamp
            }
            if let disposable {
                // Named under the lock, below.
                updated.append((key, disposable, 0, keyStamp))
            } else if previous == nil {
                // Removing a key that is not there changes nothing.
                return
            }
            let (applied, replaced) = self.state.withLock { state -> (Bool, Bucket?) in
                guard state.buckets[hash]?.stamp == bucket?.stamp, !state.isDisposed else { return (false, nil) }
                state.lastStamp += 1
                let replaced = state.buckets.removeValue(forKey: hash)
                if disposable != nil {
                    updated[updated.count - 1].added = state.lastStamp
                    if keyStamp == 0 {
                        updated[updated.count - 1].keyStamp = state.lastStamp
                    }
                }
                if !updated.isEmpty {
                    state.buckets[hash] = Bucket(stamp: state.lastStamp, entries: updated)
                }
                return (true, replaced)
            }
            // The old bucket, and with it a replaced key, is released here, after unlocking.
            withExtendedLifetime(replaced) {}
            if applied {
                previous?.dispose()
                return
            }
        }
    }

    /// Disposes every entry, in the order the entries were stored (a key set again counts from its
    /// latest ``set(_:forKey:)``); later ``set(_:forKey:)`` calls dispose their argument at once.
    public func dispose() {
        let buckets = self.state.withLock { state -> [Int: Bucket] in
            guard !state.isDisposed else { return [:] }
            state.isDisposed = true
            var buckets: [Int: Bucket] = [:]
            swap(&buckets, &state.buckets)
            return buckets
        }
        // In the order the entries were stored, not the buckets' (a dictionary's order changes with the
        // process's hash seed, and a test on virtual time would see its events in another order on each
        // run). Sorted after unlocking: stamps are `UInt64`s, no user code.
        let entries = buckets.values.flatMap(\.entries).sorted { $0.added < $1.added }
        for entry in entries {
            entry.disposable.dispose()
        }
    }
}
