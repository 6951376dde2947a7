// The small world the guide's recipes and pitfalls live in: users, an async API with typed errors, a
// notification feed. Not shown in the guide.

import Foundation
import SwiftSignalKit
import Testing

typealias UserID = String

struct User: Equatable, Sendable {
    var id: UserID
    var name: String
}

enum APIError: Error, Equatable, Sendable {
    case offline
    case notFound
    case timedOut
}

/// A new async client, with typed errors, that counts its calls.
final class UserAPI: Sendable {
    private let users: [UserID: User]
    private let calls = Atomic<Int>(value: 0)
    private let finished = Atomic<Int>(value: 0)
    private let offlineCalls = Atomic<Int>(value: 0)

    init(users: [User]) {
        var byID: [UserID: User] = [:]
        for user in users {
            byID[user.id] = user
        }
        self.users = byID
    }

    var callCount: Int {
        return self.calls.with { $0 }
    }

    /// Makes the next `count` calls to `user(id:)` fail with `.offline`.
    func goOffline(calls count: Int) {
        self.offlineCalls.modify { _ in count }
    }

    func user(id: UserID) async throws(APIError) -> User {
        self.calls.modify { $0 + 1 }
        await Task.yield()
        var offline = false
        self.offlineCalls.modify { remaining in
            offline = remaining > 0
            return Swift.max(0, remaining - 1)
        }
        if offline { throw .offline }
        guard let user = self.users[id] else { throw .notFound }
        return user
    }

    /// How many calls to `slowUser(id:)` have returned.
    var finishedCount: Int {
        return self.finished.with { $0 }
    }

    /// Hangs until its task is cancelled, then throws `.offline`.
    func slowUser(id: UserID) async throws(APIError) -> User {
        self.calls.modify { $0 + 1 }
        defer { self.finished.modify { $0 + 1 } }
        await untilCancelled()
        throw .offline
    }

    /// A legacy-style API without a typed error.
    func untypedUser(id: UserID) async throws -> User {
        return try await self.user(id: id)
    }
}

/// A feed of notification texts, fed by the test. Each call to `notifications()` makes a new
/// `AsyncStream` that starts with every text posted so far.
final class NotificationFeed: Sendable {
    private struct State {
        var posted: [String] = []
        var isClosed = false
        var streams: [Int: AsyncStream<String>.Continuation] = [:]
        var nextStream = 0
    }

    private let state = Atomic<State>(value: State())

    func notifications() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        var number = 0
        var replay: [String] = []
        var isClosed = false
        self.state.modify { state in
            var state = state
            number = state.nextStream
            state.nextStream += 1
            state.streams[number] = continuation
            replay = state.posted
            isClosed = state.isClosed
            return state
        }
        continuation.onTermination = { [weak self, number] _ in
            self?.state.modify { state in
                var state = state
                state.streams[number] = nil
                return state
            }
        }
        for text in replay {
            continuation.yield(text)
        }
        if isClosed {
            continuation.finish()
        }
        return stream
    }

    func post(_ text: String) {
        var streams: [AsyncStream<String>.Continuation] = []
        self.state.modify { state in
            var state = state
            state.posted.append(text)
            streams = Array(state.streams.values)
            return state
        }
        for stream in streams {
            stream.yield(text)
        }
    }

    func close() {
        var streams: [AsyncStream<String>.Continuation] = []
        self.state.modify { state in
            var state = state
            state.isClosed = true
            streams = Array(state.streams.values)
            return state
        }
        for stream in streams {
            stream.finish()
        }
    }
}

/// Waits (up to 30 seconds) for something another thread does, without sleeping and without keeping a
/// pool thread busy: the condition is checked again each time the test helpers report a change
/// (``TestProgress/changed()``), and at least every 0.2 seconds (the watchdog's tick, for conditions on
/// state nothing reports).
func eventually(
    isolation: isolated (any Actor)? = #isolation, _ condition: () async -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        let version = TestProgress.shared.version
        if await condition() { return }
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

/// Suspends until the task is cancelled: slow work that reacts to cancellation, without a sleep. (An
/// `AsyncStream` that nobody finishes ends its iteration when the iterating task is cancelled.)
func untilCancelled() async {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    for await _ in stream {}
    withExtendedLifetime(continuation) {}
}
