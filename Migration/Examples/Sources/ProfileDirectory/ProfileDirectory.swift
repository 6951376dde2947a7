// The remote service that the migration guide's profile service loads from: a stand-in for an HTTP
// directory of user profiles. Like many client libraries in the middle of a migration, it offers both a
// signal API (the old client) and an async API (the new one), so each stage of the guide can pick its
// side while the tests drive the same fake. Answers come later, on the directory's own queue, as they
// would from a network.

import SwiftSignalKit

/// A user's public profile.
public nonisolated struct Profile: Equatable, Sendable {
    /// The user's identifier.
    public var id: String
    /// The display name.
    public var name: String
    /// Grows with every change the directory stores.
    public var revision: Int

    /// Creates a profile.
    public init(id: String, name: String, revision: Int = 1) {
        self.id = id
        self.name = name
        self.revision = revision
    }
}

/// Whether a user is online.
public nonisolated struct Presence: Equatable, Sendable {
    /// True while the user is connected.
    public var isOnline: Bool

    /// Creates a presence.
    public init(isOnline: Bool) {
        self.isOnline = isOnline
    }
}

/// What the directory answers instead of a profile.
public nonisolated enum DirectoryError: Error, Equatable, Sendable {
    /// No user has this identifier.
    case notFound
    /// The directory could not answer now; asking again may work.
    case unavailable
}

/// A fake remote directory of profiles and presences, with knobs for tests.
public nonisolated final class ProfileDirectory: Sendable {
    private struct State: Sendable {
        var profiles: [String: Profile]
        var failuresLeft = 0
        var fetches: [String: Int] = [:]
        var presenceSubscribers: [String: Int] = [:]
    }

    private let state: Atomic<State>
    private let presences = Atomic<[String: ValuePromise<Presence>]>(value: [:])
    private let queue = Queue(name: "ProfileDirectory")

    /// Creates a directory that knows `profiles`; every user starts offline.
    public init(profiles: [Profile]) {
        var byID: [String: Profile] = [:]
        for profile in profiles {
            byID[profile.id] = profile
        }
        self.state = Atomic(value: State(profiles: byID))
    }

    // MARK: - The old client: signals

    /// Fetches a profile; the answer arrives on the directory's queue.
    public func fetchProfile(id: String) -> Signal<Profile, DirectoryError> {
        return Signal { subscriber in
            self.queue.async {
                switch self.answer(id: id) {
                case .success(let profile):
                    subscriber.putNext(profile)
                    subscriber.putCompletion()
                case .failure(let error):
                    subscriber.putError(error)
                }
            }
            return EmptyDisposable
        }
    }

    /// The user's presence now, then each change. Never completes.
    public func presence(id: String) -> Signal<Presence, NoError> {
        let promise = self.presencePromise(id: id)
        return Signal { subscriber in
            self.state.modify { state in
                var state = state
                state.presenceSubscribers[id, default: 0] += 1
                return state
            }
            let subscription = promise.get().start(next: { subscriber.putNext($0) })
            return ActionDisposable {
                subscription.dispose()
                self.state.modify { state in
                    var state = state
                    state.presenceSubscribers[id, default: 0] -= 1
                    return state
                }
            }
        }
    }

    // MARK: - The new client: async

    /// Fetches a profile.
    ///
    /// - Throws: `DirectoryError`.
    public func profile(id: String) async throws(DirectoryError) -> Profile {
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Profile, DirectoryError>, Never>) in
            self.queue.async {
                continuation.resume(returning: self.answer(id: id))
            }
        }
        return try answer.get()
    }

    /// The user's presence now, then each change. Ends only when the consumer stops.
    public func presenceUpdates(id: String) -> AsyncStream<Presence> {
        let presence = self.presence(id: id)
        return AsyncStream { continuation in
            let subscription = presence.start(next: { continuation.yield($0) })
            continuation.onTermination = { _ in subscription.dispose() }
        }
    }

    // MARK: - Knobs for tests

    /// Makes the next `count` fetches fail with `DirectoryError.unavailable`.
    public func failNextFetches(_ count: Int) {
        self.state.modify { state in
            var state = state
            state.failuresLeft = count
            return state
        }
    }

    /// Stores a new version of a profile, with the next revision number.
    public func update(id: String, name: String) {
        self.state.modify { state in
            var state = state
            let revision = (state.profiles[id]?.revision ?? 0) + 1
            state.profiles[id] = Profile(id: id, name: name, revision: revision)
            return state
        }
    }

    /// Sets a user's presence; current subscribers see it.
    public func setPresence(id: String, isOnline: Bool) {
        self.presencePromise(id: id).set(Presence(isOnline: isOnline))
    }

    /// How many fetches of this profile reached the directory, failed ones included.
    public func fetchCount(id: String) -> Int {
        return self.state.with { $0.fetches[id, default: 0] }
    }

    /// How many subscriptions to this user's presence are open.
    public func presenceSubscriberCount(id: String) -> Int {
        return self.state.with { $0.presenceSubscribers[id, default: 0] }
    }

    // MARK: - Internals

    private func answer(id: String) -> Result<Profile, DirectoryError> {
        var answer: Result<Profile, DirectoryError> = .failure(.notFound)
        self.state.modify { state in
            var state = state
            state.fetches[id, default: 0] += 1
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                answer = .failure(.unavailable)
            } else if let profile = state.profiles[id] {
                answer = .success(profile)
            }
            return state
        }
        return answer
    }

    private func presencePromise(id: String) -> ValuePromise<Presence> {
        return self.presences.modify { promises in
            var promises = promises
            if promises[id] == nil {
                promises[id] = ValuePromise(Presence(isOnline: false), ignoreRepeated: true)
            }
            return promises
        }[id]!
    }
}
