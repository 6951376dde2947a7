// Stage 2 of the migration guide: async callers and async internals bridged in; the signal API and its
// tests unchanged.

import ProfileDirectory
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Why a profile could not be loaded.
public nonisolated enum ProfileError: Error, Equatable, Sendable {
    case notFound
    case unavailable

    init(_ error: DirectoryError) {
        switch error {
        case .notFound: self = .notFound
        case .unavailable: self = .unavailable
        }
    }
}

/// A profile with its owner's presence.
public nonisolated struct ProfileCard: Equatable, Sendable {
    /// The profile.
    public var profile: Profile
    /// Whether its owner is online.
    public var isOnline: Bool
}

/// Profiles loaded so far. Not thread-safe: used only on the service's queue.
nonisolated final class ProfileCache {
    var profiles: [String: Profile] = [:]
}

/// Loads profiles: the cached copy first, then the directory's.
public nonisolated final class ProfileService: Sendable {
    /// The card of the user passed to `watch(id:)`, kept current; nil when nothing is watched.
    public let watchedCard = ValuePromise<ProfileCard?>(nil, ignoreRepeated: true)

    private let directory: ProfileDirectory
    private let queue = Queue(name: "ProfileService")
    private let cache: QueueLocalActor<ProfileCache>
    private let watching = MetaDisposable()

    /// Creates a service that loads from `directory`.
    public init(directory: ProfileDirectory) {
        self.directory = directory
        self.cache = QueueLocalActor(queue: self.queue, value: ProfileCache())
    }

    /// The cached profile, if any, then the directory's, which replaces it in the cache.
    public func profile(id: String) -> Signal<Profile, ProfileError> {
        return self.cachedProfile(id: id) |> castError(ProfileError.self) |> then(self.remoteProfile(id: id))
    }

    /// The profile with its owner's presence, sent again when either changes.
    public func card(id: String) -> Signal<ProfileCard, ProfileError> {
        // `deferred`: a new stream at each start, since an AsyncStream is iterated once, and none before.
        let directory = self.directory
        let presence = deferred { Signal(directory.presenceUpdates(id: id)) } |> castError(ProfileError.self)
        return combineLatest(self.profile(id: id), presence)
            |> map { profile, presence in ProfileCard(profile: profile, isOnline: presence.isOnline) }
    }

    /// Keeps `watchedCard` current with the card of `id`, replacing what was watched before.
    public func watch(id: String) {
        let watchedCard = self.watchedCard
        let updates = self.card(id: id) |> deliverOn(self.queue)
        self.watching.set(
            updates.start(
                next: { card in watchedCard.set(card) },
                error: { _ in watchedCard.set(nil) }))
    }

    /// Stops watching. On the queue, so that no card being delivered can land after the nil.
    public func stopWatching() {
        self.queue.async {
            self.watching.set(nil)
            self.watchedCard.set(nil)
        }
    }

    private func cachedProfile(id: String) -> Signal<Profile, NoError> {
        let cache = self.cache
        return Signal { subscriber in
            if let profile = cache.withValueOnQueue({ $0.profiles[id] }) {
                subscriber.putNext(profile)
            }
            subscriber.putCompletion()
            return EmptyDisposable
        } |> runOn(self.queue)
    }

    private func remoteProfile(id: String) -> Signal<Profile, ProfileError> {
        let cache = self.cache
        let directory = self.directory
        return Signal(operation: { () throws(DirectoryError) in try await directory.profile(id: id) })
            |> retry(
                retryOnError: { $0 == .unavailable }, delayIncrement: 0.01, maxDelay: 0.05, maxRetries: 3,
                onQueue: self.queue)
            |> mapError { ProfileError($0) }
            |> beforeNext { profile in
                cache.queue.async {
                    cache.withValueOnQueue { $0.profiles[id] = profile }
                }
            }
    }
}

// MARK: - For async callers

extension ProfileService {
    /// The cached profile if there is one, otherwise the directory's.
    ///
    /// - Throws: `ProfileError`, or `CancellationError` when the calling task is cancelled.
    public func loadProfile(id: String) async throws -> Profile {
        if let cached = await self.cache.withValue({ $0.profiles[id] }) {
            return cached
        }
        return try await self.remoteProfile(id: id).get()
    }

    /// The card of `id` and each change, for `for try await`; only the newest waits while the loop is busy.
    public func cards(id: String) -> SignalValues<ProfileCard, ProfileError> {
        return self.card(id: id).values(bufferingPolicy: .bufferingNewest(1))
    }
}
