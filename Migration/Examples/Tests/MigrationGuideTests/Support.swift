// The small world the guide's recipes and pitfalls live in: users, an async API with typed errors, a
// notification feed. Not shown in the guide.

import Foundation
import SwiftSignalKit
import Testing

typealias UserID = String

nonisolated struct User: Equatable, Sendable {
    var id: UserID
    var name: String
}

nonisolated enum APIError: Error, Equatable, Sendable {
    case offline
    case notFound
    case timedOut
}

/// A new async client, with typed errors, that counts its calls.
nonisolated final class UserAPI: Sendable {
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
nonisolated final class NotificationFeed: Sendable {
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

/// Suspends until the task is cancelled: slow work that reacts to cancellation, without a sleep. (An
/// `AsyncStream` that nobody finishes ends its iteration when the iterating task is cancelled.)
func untilCancelled() async {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    for await _ in stream {}
    withExtendedLifetime(continuation) {}
}
