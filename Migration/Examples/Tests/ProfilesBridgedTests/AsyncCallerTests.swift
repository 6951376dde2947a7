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

/// Waits (up to 30 seconds) for something another thread does, without sleeping and without keeping a
/// pool thread busy: the condition is checked again each time the test helpers report a change
/// (``TestProgress/changed()``), and at least every 0.2 seconds (the watchdog's tick, for conditions on
/// state nothing reports).
func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        let version = TestProgress.shared.version
        if condition() { return }
        await TestProgress.shared.change(after: version)
    }
    Issue.record("still not true after 30 seconds", sourceLocation: sourceLocation)
}

/// Tells tasks in `eventually` that something they may wait for has changed. Here only a watchdog thread
/// reports, every 0.2 seconds; the conditions are on the examples' own state.
final class TestProgress: Sendable {
    static let shared = TestProgress()
    private let state = Atomic<(version: UInt64, waiting: [CheckedContinuation<Void, Never>])>(value: (0, []))

    private init() {
        let tick = DispatchSemaphore(value: 0)
        let watchdog = Thread { [self] in
            while true {
                _ = tick.wait(timeout: .now() + 0.2)
                self.changed()
            }
        }
        watchdog.start()
    }

    var version: UInt64 { self.state.with { $0.version } }

    func changed() {
        var waiting: [CheckedContinuation<Void, Never>] = []
        self.state.modify { state in
            waiting = state.waiting
            return (state.version &+ 1, [])
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the version has moved past `version`.
    func change(after version: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var resumeNow = false
            self.state.modify { state in
                if state.version != version {
                    resumeNow = true
                    return state
                }
                return (state.version, state.waiting + [continuation])
            }
            if resumeNow { continuation.resume() }
        }
    }
}
