// Stage 3 of the migration guide: the service's core is an actor with async methods.

import ProfileDirectory

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

/// Loads profiles and keeps the newest copy of each.
public actor ProfileStore {
    private let directory: ProfileDirectory
    private var profiles: [String: Profile] = [:]

    /// Creates a store that loads from `directory`.
    public init(directory: ProfileDirectory) {
        self.directory = directory
    }

    /// The cached copy, if any.
    public func cachedProfile(id: String) -> Profile? {
        return self.profiles[id]
    }

    /// The cached profile if there is one, otherwise the directory's.
    ///
    /// - Throws: `ProfileError`.
    public func profile(id: String) async throws(ProfileError) -> Profile {
        if let cached = self.profiles[id] {
            return cached
        }
        return try await self.refreshedProfile(id: id)
    }

    /// The directory's profile, asked again up to three times while the directory is unavailable; it
    /// replaces the cached copy.
    ///
    /// - Throws: `ProfileError`; `.unavailable` also when the task is cancelled while waiting to ask again.
    public func refreshedProfile(id: String) async throws(ProfileError) -> Profile {
        var retries = 0
        while true {
            do throws(DirectoryError) {
                let profile = try await self.directory.profile(id: id)
                self.profiles[id] = profile
                return profile
            } catch .unavailable where retries < 3 {
                retries += 1
                do {
                    try await Task.sleep(for: .milliseconds(10 * retries))
                } catch {
                    throw .unavailable
                }
            } catch {
                throw ProfileError(error)
            }
        }
    }
}
