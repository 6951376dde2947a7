// The legacy service's tests, as they were written before the migration: XCTest, signals, expectations.
//
// The same file runs against every stage of the guide (the other test targets link to it), which is the
// proof that each stage keeps the signal API its callers rely on. Only the import changes.

import Foundation
import ProfileDirectory
import SwiftSignalKit
import XCTest

#if MIGRATION_STAGE_ASYNC_FIRST
    import ProfilesAsyncFirst
#elseif MIGRATION_STAGE_BRIDGED
    import ProfilesBridged
#else
    import ProfilesLegacy
#endif

nonisolated final class ProfileServiceTests: XCTestCase {
    private let ada = Profile(id: "ada", name: "Ada Lovelace")

    func testProfileComesFromTheDirectory() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)

        let events = self.record(service.profile(id: "ada"))

        XCTAssertEqual(events.values, [self.ada])
        XCTAssertNil(events.error)
    }

    func testCachedProfileComesFirstThenTheDirectorysNewerOne() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        _ = self.record(service.profile(id: "ada"))
        directory.update(id: "ada", name: "Augusta Ada King")

        let events = self.record(service.profile(id: "ada"))

        XCTAssertEqual(events.values.map(\.revision), [1, 2])
        XCTAssertEqual(events.values.last?.name, "Augusta Ada King")
    }

    func testAnUnavailableDirectoryIsAskedAgain() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        directory.failNextFetches(2)

        let events = self.record(service.profile(id: "ada"))

        XCTAssertEqual(events.values, [self.ada])
        XCTAssertEqual(directory.fetchCount(id: "ada"), 3)
    }

    func testAnUnknownUserIsNotAskedForAgain() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)

        let events = self.record(service.profile(id: "nobody"))

        XCTAssertEqual(events.values, [])
        XCTAssertEqual(events.error, .notFound)
        XCTAssertEqual(directory.fetchCount(id: "nobody"), 1)
    }

    func testTheServiceGivesUpAfterThreeRetries() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        directory.failNextFetches(100)

        let events = self.record(service.profile(id: "ada"))

        XCTAssertEqual(events.error, .unavailable)
        XCTAssertEqual(directory.fetchCount(id: "ada"), 4)
    }

    func testTheCardFollowsPresence() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        let cards = Atomic<[ProfileCard]>(value: [])
        let subscription = service.card(id: "ada").start(next: { card in
            cards.modify { $0 + [card] }
        })
        defer { subscription.dispose() }
        self.waitUntil { cards.with { $0.count } == 1 }

        directory.setPresence(id: "ada", isOnline: true)

        self.waitUntil { cards.with { $0.count } == 2 }
        XCTAssertEqual(cards.with { $0.map(\.isOnline) }, [false, true])
    }

    func testACardSignalSubscribesOnlyWhenStartedAndCanBeStartedAgain() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        let card = service.card(id: "ada")
        XCTAssertEqual(directory.presenceSubscriberCount(id: "ada"), 0)

        let first = self.record(card |> take(1))
        let second = self.record(card |> take(1))

        XCTAssertEqual(first.values.map(\.profile), [self.ada])
        XCTAssertEqual(second.values.map(\.profile), [self.ada])
    }

    func testWatchingKeepsTheWatchedCardCurrentUntilStopped() {
        let directory = ProfileDirectory(profiles: [self.ada])
        let service = ProfileService(directory: directory)
        let latest = Atomic<ProfileCard?>(value: nil)
        let subscription = service.watchedCard.get().start(next: { card in
            _ = latest.swap(card)
        })
        defer { subscription.dispose() }

        service.watch(id: "ada")
        self.waitUntil { latest.with { $0?.profile } == self.ada }
        directory.setPresence(id: "ada", isOnline: true)
        self.waitUntil { latest.with { $0?.isOnline } == true }
        service.stopWatching()

        self.waitUntil { latest.with { $0 } == nil }
        self.waitUntil { directory.presenceSubscriberCount(id: "ada") == 0 }
    }

    // MARK: - Helpers

    /// Starts `signal` and waits for it to end; returns what it sent.
    private func record<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> (values: [T], error: E?) {
        let values = Atomic<[T]>(value: [])
        let failure = Atomic<E?>(value: nil)
        let ended = self.expectation(description: "the signal ends")
        let subscription = signal.start(
            next: { value in values.modify { $0 + [value] } },
            error: { error in
                _ = failure.swap(error)
                ended.fulfill()
            },
            completed: { ended.fulfill() })
        self.wait(for: [ended], timeout: 10)  // blocking-check: XCTest runs its tests on the main thread, not on the task pool
        subscription.dispose()
        return (values.with { $0 }, failure.with { $0 })
    }

    /// Waits for something another thread does, yielding the processor between checks; fails the test
    /// after 30 seconds.
    private func waitUntil(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = DispatchTime.now() + 30
        while DispatchTime.now() < deadline {
            if condition() { return }
            sched_yield()  // blocking-check: XCTest runs its tests on the main thread, not on the task pool
        }
        XCTFail("still not true after 30 seconds", file: file, line: line)
    }
}
