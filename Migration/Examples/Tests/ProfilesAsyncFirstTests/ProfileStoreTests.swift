// Stage 3: the async-first core, tested as async code.

import ProfileDirectory
import ProfilesAsyncFirst
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@Suite struct ProfileStoreTests {
    let ada = Profile(id: "ada", name: "Ada Lovelace")

    @Test func aCachedProfileIsAnsweredWithoutAskingTheDirectory() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let store = ProfileStore(directory: directory)

        let first = try await store.profile(id: "ada")
        let second = try await store.profile(id: "ada")

        #expect(first == ada)
        #expect(second == ada)
        #expect(directory.fetchCount(id: "ada") == 1)
    }

    @Test func anUnavailableDirectoryIsAskedAgainThreeTimesAtMost() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let store = ProfileStore(directory: directory)
        directory.failNextFetches(3)
        #expect(try await store.refreshedProfile(id: "ada") == ada)

        directory.failNextFetches(100)
        await #expect(throws: ProfileError.unavailable) {
            _ = try await store.refreshedProfile(id: "ada")
        }
        #expect(directory.fetchCount(id: "ada") == 4 + 4)
    }

    @Test func anUnknownUserIsNotAskedForAgain() async {
        let directory = ProfileDirectory(profiles: [ada])
        let store = ProfileStore(directory: directory)

        await #expect(throws: ProfileError.notFound) {
            _ = try await store.profile(id: "nobody")
        }
        #expect(directory.fetchCount(id: "nobody") == 1)
    }

    @Test func aCancelledTaskStopsRetrying() async {
        let directory = ProfileDirectory(profiles: [ada])
        let store = ProfileStore(directory: directory)
        directory.failNextFetches(100)

        let task = Task { try await store.refreshedProfile(id: "ada") }
        task.cancel()

        await #expect(throws: ProfileError.unavailable) { try await task.value }
        #expect(directory.fetchCount(id: "ada") < 4)
    }

    @Test func theSignalFacadeAndTheStoreShareOneCache() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let service = ProfileService(directory: directory)
        _ = try await (service.profile(id: "ada") |> last).get()

        let cached = await service.store.cachedProfile(id: "ada")

        #expect(cached == ada)
        #expect(directory.fetchCount(id: "ada") == 1)
    }
}
