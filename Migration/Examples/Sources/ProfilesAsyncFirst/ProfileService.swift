// Stage 3 of the migration guide: async first. The signal API that remaining callers use is a thin facade
// over `ProfileStore`.

import ProfileDirectory
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// A profile with its owner's presence.
public nonisolated struct ProfileCard: Equatable, Sendable {
    /// The profile.
    public var profile: Profile
    /// Whether its owner is online.
    public var isOnline: Bool
}

/// Loads profiles: the cached copy first, then the directory's.
public nonisolated final class ProfileService: Sendable {
    /// The card of the user passed to `watch(id:)`, kept current; nil when nothing is watched.
    public let watchedCard = ValuePromise<ProfileCard?>(nil, ignoreRepeated: true)
    /// The async API; new code calls it directly.
    public let store: ProfileStore

    private let directory: ProfileDirectory
    private let queue = Queue(name: "ProfileService")
    private let watching = MetaDisposable()

    /// Creates a service that loads from `directory`.
    public init(directory: ProfileDirectory) {
        self.directory = directory
        self.store = ProfileStore(directory: directory)
    }

    /// The cached profile, if any, then the directory's, which replaces it in the cache.
    public func profile(id: String) -> Signal<Profile, ProfileError> {
        let store = self.store
        let cached =
            Signal(operation: { await store.cachedProfile(id: id) })
            |> mapToSignal { profile -> Signal<Profile, NoError> in profile.map { .single($0) } ?? .complete() }
        let fresh = Signal(operation: { () throws(ProfileError) in try await store.refreshedProfile(id: id) })
        return cached |> castError(ProfileError.self) |> then(fresh)
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
}

// MARK: - For async callers

extension ProfileService {
    /// The cached profile if there is one, otherwise the directory's.
    ///
    /// - Throws: `ProfileError`.
    @available(*, deprecated, message: "call store.profile(id:)")
    public func loadProfile(id: String) async throws -> Profile {
        return try await self.store.profile(id: id)
    }

    /// The card of `id` and each change, for `for try await`; only the newest waits while the loop is busy.
    public func cards(id: String) -> SignalValues<ProfileCard, ProfileError> {
        return self.card(id: id).values(bufferingPolicy: .bufferingNewest(1))
    }
}
