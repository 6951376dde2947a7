// Stage 2: the new async callers of the bridged service.

import Dispatch
import Foundation
import ProfileDirectory
import ProfilesBridged
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@Suite struct AsyncCallerTests {
    let ada = Profile(id: "ada", name: "Ada Lovelace")

    @Test func loadProfileAsksTheDirectoryOnceThenAnswersFromTheCache() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let service = ProfileService(directory: directory)

        let first = try await service.loadProfile(id: "ada")
        let second = try await service.loadProfile(id: "ada")

        #expect(first == ada)
        #expect(second == ada)
        #expect(directory.fetchCount(id: "ada") == 1)
    }

    @Test func loadProfileSeesWhatTheSignalAPICached() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let service = ProfileService(directory: directory)
        _ = try await (service.profile(id: "ada") |> last).get()

        _ = try await service.loadProfile(id: "ada")

        #expect(directory.fetchCount(id: "ada") == 1)
    }

    @Test func loadProfileThrowsTheServicesError() async {
        let service = ProfileService(directory: ProfileDirectory(profiles: [ada]))

        await #expect(throws: ProfileError.notFound) {
            _ = try await service.loadProfile(id: "nobody")
        }
    }

    @Test func cardsFollowPresenceAndLeavingTheLoopEndsTheSubscription() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let service = ProfileService(directory: directory)

        var seen: [Bool] = []
        for try await card in service.cards(id: "ada") {
            seen.append(card.isOnline)
            if seen.count == 1 {
                directory.setPresence(id: "ada", isOnline: true)
            } else {
                break
            }
        }

        #expect(seen == [false, true])
        // The presence subscription behind the bridged AsyncStream ends on the stream's own task.
        await eventually { directory.presenceSubscriberCount(id: "ada") == 0 }
    }

    @Test func cancellingTheIteratingTaskEndsTheSubscription() async throws {
        let directory = ProfileDirectory(profiles: [ada])
        let service = ProfileService(directory: directory)
        let iterating = Task {
            for try await _ in service.cards(id: "ada") {}
        }
        await eventually { directory.presenceSubscriberCount(id: "ada") == 1 }

        iterating.cancel()

        try await iterating.value
        await eventually { directory.presenceSubscriberCount(id: "ada") == 0 }
    }
}
