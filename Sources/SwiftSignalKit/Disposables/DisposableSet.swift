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
/// disposing it. Removal is O(1) on average, so sets with many members stay cheap.
public final class DisposableSet: Disposable {
    private struct State {
        var isDisposed = false
        var members: [ObjectIdentifier: (disposable: Disposable, count: Int)] = [:]
    }

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
            if let existing = state.members[key] {
                state.members[key] = (existing.disposable, existing.count + 1)
            } else {
                state.members[key] = (disposable, 1)
            }
            return false
        }
        if rejected {
            disposable.dispose()
        }
    }

    /// Forgets a member without disposing it. Does nothing if it is not a member.
    ///
    /// - Parameter disposable: The member to forget (compared by identity).
    public func remove(_ disposable: Disposable) {
        let removed = self.state.withLock { state -> Disposable? in
            let key = ObjectIdentifier(disposable)
            guard let existing = state.members[key] else { return nil }
            if existing.count > 1 {
                state.members[key] = (existing.disposable, existing.count - 1)
                return nil
            }
            state.members[key] = nil
            return existing.disposable
        }
        // Released here, outside the lock.
        withExtendedLifetime(removed) {}
    }

    /// Disposes every member; later ``add(_:)`` calls dispose their argument at once.
    public func dispose() {
        let members = self.state.withLock { state -> [Disposable] in
            guard !state.isDisposed else { return [] }
            state.isDisposed = true
            let members = state.members.values.map { $0.disposable }
            state.members = [:]
            return members
        }
        for member in members {
            member.dispose()
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
public final class DisposableDict<T: Hashable & Sendable>: Disposable {
    private struct State {
        var isDisposed = false
        var entries: [T: Disposable] = [:]
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
        let (previous, rejected) = self.state.withLock { state -> (Disposable?, Disposable?) in
            if state.isDisposed {
                return (nil, disposable)
            }
            let previous = state.entries.removeValue(forKey: key)
            if let disposable {
                state.entries[key] = disposable
            }
            return (previous, nil)
        }
        previous?.dispose()
        rejected?.dispose()
    }

    /// Disposes every entry; later ``set(_:forKey:)`` calls dispose their argument at once.
    public func dispose() {
        let entries = self.state.withLock { state -> [Disposable] in
            guard !state.isDisposed else { return [] }
            state.isDisposed = true
            let entries = Array(state.entries.values)
            state.entries = [:]
            return entries
        }
        for entry in entries {
            entry.dispose()
        }
    }
}
