// The migration guide, "Recipes for bridging signals and async code": calling async code from signals,
// awaiting and iterating signals, an async API over a promise-backed property, and errors both ways.

import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

// MARK: - Calling async code from signal code

/// A signal API over the new async client, for callers that still subscribe.
func userSignal(api: UserAPI, id: UserID) -> Signal<User, APIError> {
    return Signal(operation: { () throws(APIError) in try await api.user(id: id) })
}

/// An `AsyncSequence` as a signal: each subscription iterates it in a task of its own. `deferred`
/// makes a new stream at each start, because an `AsyncStream` can be iterated only once.
func notificationSignal(feed: NotificationFeed) -> Signal<String, NoError> {
    return deferred { Signal(feed.notifications()) }
}

// MARK: - Awaiting and iterating signals

/// A request handler: one answer, so `get()`.
func greeting(api: UserAPI, id: UserID) async throws -> String {
    let user = try await userSignal(api: api, id: id).get()
    return "Hello, \(user.name)"
}

/// Every notification matters: `values` keeps all that arrive while the loop body runs.
func firstNotifications(_ count: Int, feed: NotificationFeed) async -> [String] {
    var texts: [String] = []
    for await text in notificationSignal(feed: feed).values {
        texts.append(text)
        if texts.count == count { break }
    }
    return texts
}

/// A signal that only completes (a command, `Signal<Never, E>`): iterate it to its end. The loop
/// also ends, without an error, when the task is cancelled, so check for that afterwards.
func perform(_ command: Signal<Never, APIError>) async throws {
    for try await _ in command.values {}
    try Task.checkCancellation()
}

// MARK: - An async API over a promise-backed property

nonisolated enum ConnectionStatus: Equatable, Sendable {
    case connecting
    case ready
    case offline
}

/// A legacy service: its state is a `ValuePromise` that signal code subscribes to.
nonisolated final class Connection: Sendable {
    let status = ValuePromise<ConnectionStatus>(.connecting, ignoreRepeated: true)
}

extension Connection {
    /// The status now.
    func currentStatus() async throws -> ConnectionStatus {
        return try await self.status.get().get()
    }

    /// Returns once the connection is ready.
    ///
    /// - Throws: `CancellationError` when the task is cancelled first.
    func waitUntilReady() async throws {
        // Filtered where the promise sends, so a `.ready` that lasts a moment is seen.
        _ = try await (self.status.get() |> filter { $0 == .ready }).get()
    }

    /// The status now and each change; a busy loop sees the newest status, not a backlog.
    var statusUpdates: SignalValues<ConnectionStatus, NoError> {
        return self.status.values(bufferingPolicy: .bufferingNewest(1))
    }
}

// MARK: - Errors both ways

/// Signal to typed throws: `first(within:)` keeps the error type and says how the wait ended.
func loadUser(_ signal: Signal<User, APIError>, within limit: Duration = .seconds(5)) async throws(APIError) -> User? {
    switch try await signal.first(within: limit) {
    case .value(let user): return user
    case .empty: throw .notFound
    case .timedOut: throw .timedOut
    case .cancelled: return nil  // the caller has gone; nobody reads the answer
    }
}

/// A loop over a failing signal throws the signal's error type; `do throws(APIError)` keeps it typed.
func namesUntilFailure(_ users: Signal<User, APIError>) async -> (names: [String], failure: APIError?) {
    var names: [String] = []
    do throws(APIError) {
        for try await user in users.values { names.append(user.name) }
        return (names, nil)
    } catch {
        return (names, error)  // an APIError: no cast, no other case
    }
}

/// `get()` throws `any Error`: the signal's error, `CancellationError` or `SignalError`.
func statusCode(api: UserAPI, id: UserID) async -> Int {
    do {
        _ = try await userSignal(api: api, id: id).get()
        return 200
    } catch APIError.notFound {
        return 404
    } catch is CancellationError {
        return 499
    } catch {
        return 503
    }
}

/// Untyped async code to a signal: the closure makes a `Signal<User, any Error>`, and `mapError` types it.
func legacyUserSignal(api: UserAPI, id: UserID) -> Signal<User, APIError> {
    return Signal(operation: { try await api.untypedUser(id: id) })
        |> mapError { error in error as? APIError ?? .offline }
}

/// A signal whose error type is not an `Error` (here `Void`) is awaited after `mapError`.
func awaitable(_ signal: Signal<User, Void>) -> Signal<User, APIError> {
    return signal |> mapError { _ in APIError.offline }
}

@Suite struct RecipesTests {
    let ada = User(id: "ada", name: "Ada")

    @Test func signalOperationRunsTheAsyncCallPerSubscription() async throws {
        let api = UserAPI(users: [ada])
        let signal = userSignal(api: api, id: "ada")
        #expect(api.callCount == 0)
        #expect(try await signal.get() == ada)
        #expect(try await signal.get() == ada)
        #expect(api.callCount == 2)
    }

    @Test func anAsyncSequenceBecomesASignal() async {
        let feed = NotificationFeed()
        feed.post("a")
        feed.post("b")
        feed.close()
        let signal = notificationSignal(feed: feed)
        for _ in 0..<2 {  // each start iterates a stream of its own
            var texts: [String] = []
            for await text in signal.values {
                texts.append(text)
            }
            #expect(texts == ["a", "b"])
        }
    }

    @Test func aHandlerAwaitsTheFirstValue() async throws {
        let api = UserAPI(users: [ada])
        #expect(try await greeting(api: api, id: "ada") == "Hello, Ada")
        await #expect(throws: APIError.notFound) { try await greeting(api: api, id: "nobody") }
    }

    @Test func aCommandIsAwaitedToItsEnd() async throws {
        try await perform(.complete())
        await #expect(throws: APIError.offline) { try await perform(.fail(.offline)) }
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await perform(.never())
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }

    @Test func iteratingKeepsEveryNotification() async {
        let feed = NotificationFeed()
        for index in 0..<100 {
            feed.post("n\(index)")
        }
        let texts = await firstNotifications(100, feed: feed)
        #expect(texts == (0..<100).map { "n\($0)" })
    }

    @Test func theAsyncAPIAndTheSignalUsersSeeOneState() async throws {
        let connection = Connection()
        let seenBySignalUsers = Atomic<[ConnectionStatus]>(value: [])
        let subscription = connection.status.get().start(next: { status in
            seenBySignalUsers.modify { $0 + [status] }
        })
        defer { subscription.dispose() }
        #expect(try await connection.currentStatus() == .connecting)

        let waiter = Task { try await connection.waitUntilReady() }
        connection.status.set(.ready)
        try await waiter.value

        #expect(try await connection.currentStatus() == .ready)
        #expect(seenBySignalUsers.with { $0 } == [.connecting, .ready])
    }

    /// A `.ready` that lasts a moment ends the wait. The recipe's loop (`values(bufferingPolicy:
    /// .bufferingNewest(1)) where status == .ready`) missed it: `.offline` went straight to the waiting
    /// loop, `.ready` waited in the buffer and the next `.offline` replaced it; the run then stalled.
    @Test func aReadyThatLastsAMomentEndsTheWait() async throws {
        let scheduler = VirtualTimeScheduler()
        try await scheduler.run(timeLimit: 10) {
            let connection = Connection()
            async let ready: Void = connection.waitUntilReady()
            // On the timeline the waiter runs until it waits before the body goes on.
            await Task.yield()
            connection.status.set(.offline)
            connection.status.set(.ready)
            connection.status.set(.offline)
            try await ready
        }
    }

    @Test func waitingForReadinessEndsWithCancellation() async {
        let connection = Connection()
        let waiter = Task { try await connection.waitUntilReady() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func statusUpdatesStartWithTheCurrentStatus() async {
        let connection = Connection()
        connection.status.set(.offline)
        var iterator = connection.statusUpdates.makeAsyncIterator()
        #expect(await iterator.next() == .offline)
    }

    @Test func errorsKeepTheirTypeOrAreMapped() async throws {
        // A limit that a busy machine running the whole suite never reaches: these cases are about the
        // answer's type, not the deadline.
        let api = UserAPI(users: [ada])
        await #expect(throws: APIError.notFound) { try await loadUser(userSignal(api: api, id: "nobody"), within: .seconds(600)) }
        await #expect(throws: APIError.notFound) { try await loadUser(.complete(), within: .seconds(600)) }
        #expect(try await loadUser(userSignal(api: api, id: "ada"), within: .seconds(600)) == ada)
        let abandoned = Task { () async -> String in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                return try await loadUser(.never()).map { $0.name } ?? "no user"
            } catch {
                return "\(error)"
            }
        }
        #expect(await abandoned.value == "no user", "a cancelled caller is not told that the API timed out")
        #expect(await statusCode(api: api, id: "ada") == 200)
        #expect(await statusCode(api: api, id: "nobody") == 404)
        #expect(try await legacyUserSignal(api: api, id: "ada").get() == ada)
        await #expect(throws: APIError.notFound) { try await legacyUserSignal(api: api, id: "x").get() }
        await #expect(throws: APIError.offline) { try await awaitable(.fail(())).get() }
        let failing = Signal<User, APIError>.single(ada) |> then(.fail(.offline))
        #expect(await namesUntilFailure(failing) == (["Ada"], .offline))
        #expect(await namesUntilFailure(.single(ada)) == (["Ada"], nil))
    }

    @Test func aCancelledHandlerAnswers499() async {
        let api = UserAPI(users: [ada])
        let handler = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await statusCode(api: api, id: "ada")
        }
        #expect(await handler.value == 499)
        #expect(api.callCount == 0)
    }
}
