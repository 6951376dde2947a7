// The guide's quick start: the five things every adopter does on day one, each with its test.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

// MARK: - 1. A legacy request's first value, with a deadline

/// Each way the wait can end has its own case: a client that went away is not a slow backend. Tests
/// pass a virtual-time scheduler to decide when the deadline passes.
func profileResponse(
    _ request: Signal<User, APIError>, scheduler: some SignalScheduler = Queue.concurrentDefaultQueue()
) async -> (status: Int, body: String) {
    do {
        switch try await request.first(within: .seconds(2), scheduler: scheduler) {
        case .value(let user): return (200, user.name)
        case .empty: return (404, "no such user")
        case .timedOut: return (504, "the directory did not answer in time")
        case .cancelled: return (499, "the client went away")
        }
    } catch {
        return (503, "directory error: \(error)")  // the signal's own error, typed: `APIError`
    }
}

// MARK: - 2. A feed, streamed with for await

/// `feed.values` subscribes on its line, so what the producer sends as soon as it starts reaches the
/// loop.
func firstTrades(_ count: Int, from feed: ValuePipe<String>, startProducer: () -> Void) async -> [String] {
    let trades = feed.values
    startProducer()
    var received: [String] = []
    for await trade in trades {
        received.append(trade)
        if received.count == count { break }
    }
    return received
}

// MARK: - 3. An async call inside a chain

/// The closure throws `any Error`, as server libraries do, and the result says so; one `mapError` gives
/// the chain its typed error back.
func users(for ids: Signal<UserID, NoError>, api: UserAPI) -> Signal<User, APIError> {
    return ids
        |> mapAsync { id in try await api.untypedUser(id: id) }
        |> mapError { error in error as? APIError ?? .offline }
}

// MARK: - 4. Queue-confined state behind an actor

/// Legacy code on the queue reaches the state synchronously; async code awaits it.
nonisolated final class SessionCounts: Sendable {
    let queue = Queue(name: "sessions")
    let counts: QueueLocalActor<[UserID: Int]>

    init() {
        self.counts = QueueLocalActor(queue: self.queue, value: [:])
    }

    /// Legacy code: a block on the queue.
    func recordLogin(_ id: UserID) {
        self.queue.async {
            self.counts.withValueOnQueue { $0[id, default: 0] += 1 }
        }
    }

    /// New code: an `await`.
    func logins(of id: UserID) async -> Int {
        return await self.counts.withValue { $0[id] ?? 0 }
    }
}

@Suite struct QuickStartTests {
    @Test func aDeadlineAndACancellationAreToldApart() async {
        let api = UserAPI(users: [User(id: "ada", name: "Ada")])
        let time = VirtualTimeScheduler()  // never advanced here: no deadline passes
        #expect(await profileResponse(userSignal(api: api, id: "ada"), scheduler: time) == (200, "Ada"))
        #expect(await profileResponse(.complete(), scheduler: time) == (404, "no such user"))
        #expect(await profileResponse(.fail(.offline), scheduler: time) == (503, "directory error: offline"))
        let waiting = Task { await profileResponse(.never(), scheduler: time) }
        waiting.cancel()
        #expect(await waiting.value == (499, "the client went away"))
        async let late = profileResponse(.never(), scheduler: time)
        await time.waitUntilScheduled(1)
        time.advance(by: .seconds(2))
        #expect(await late == (504, "the directory did not answer in time"))
    }

    @Test func noTradeSentAtStartIsLost() async {
        let feed = ValuePipe<String>()
        let trades = await firstTrades(2, from: feed) {
            feed.putNext("ACME 42")  // the producer sends at once
            feed.putNext("ACME 43")
        }
        #expect(trades == ["ACME 42", "ACME 43"])
    }

    @Test func anUntypedAsyncCallGetsATypedError() async throws {
        let api = UserAPI(users: [User(id: "ada", name: "Ada")])
        #expect(try await users(for: .single("ada"), api: api).get() == User(id: "ada", name: "Ada"))
        await #expect(throws: APIError.notFound) { try await users(for: .single("bob"), api: api).get() }
    }

    @Test func legacyAndAsyncCodeShareTheState() async {
        let sessions = SessionCounts()
        sessions.recordLogin("ada")
        sessions.recordLogin("ada")
        #expect(await sessions.logins(of: "ada") == 2)
    }

    /// 5. A `debounce` tested on virtual time: no waiting, and the same `Duration`s as the code.
    @Test func searchWaitsForAPauseInTyping() {
        let scheduler = VirtualTimeScheduler()
        let keystrokes = ValuePipe<String>()
        let searches = SignalRecorder(
            keystrokes.signal() |> debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)
        keystrokes.putNext("s")
        keystrokes.putNext("sw")
        scheduler.advance(by: .milliseconds(299))
        #expect(searches.values.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(searches.values == ["sw"])
        searches.dispose()
    }
}
