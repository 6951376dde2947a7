// The guide's recipes for timing code and shared sources: code that takes its scheduler or clock as an
// argument, tested on virtual time.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

// MARK: - Testing timing code on virtual time

/// Search requests for what the user types: one per pause of 0.3 s, none for an empty field.
func searchRequests<S: SignalScheduler>(
    for text: Signal<String, NoError>, scheduler: S = Queue.concurrentDefaultQueue()
) -> Signal<String, NoError> {
    return text |> debounce(for: .milliseconds(300), scheduler: scheduler) |> filter { !$0.isEmpty }
}

/// A user from the API, asked again with backoff while the API is offline, at most 4 times in all.
func userWithRetries<S: SignalScheduler>(
    api: UserAPI, id: UserID, scheduler: S = Queue.concurrentDefaultQueue(),
    random: @escaping @Sendable () -> Double = { .random(in: 0...1) }
) -> Signal<User, APIError> {
    let backoff = RetryBackoff.exponential(initial: 0.5, maxDelay: 4, random: random)
    return Signal(operation: { () throws(APIError) in try await api.user(id: id) })
        |> retry(backoff, maxAttempts: 4, scheduler: scheduler) { error in error == .offline }
}

@Suite struct RecipesTimeTests {
    @Test func searchWaitsForAPauseInTyping() {
        let scheduler = VirtualTimeScheduler()
        let typed = scheduler.signal(
            marbles: "abc-----d|", values: ["a": "s", "b": "sw", "c": "swi", "d": ""], frame: 0.1)
        let requests = SignalRecorder(searchRequests(for: typed, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        // "swi" after 0.3 s of quiet (at 0.5 s); the empty field is filtered out.
        #expect(requests.mismatch(marbles: "-----c---|", values: ["c": "swi"], frame: 0.1) == nil)
    }

    @Test func retriesWaitAsTheBackoffSays() async throws {
        let api = UserAPI(users: [User(id: "ada", name: "Ada")])
        api.goOffline(calls: 2)
        let scheduler = VirtualTimeScheduler()
        // The API's async calls, the retries' waits and this body share one timeline: no counting of
        // scheduled actions, no polling. Jitter from a seed draws the same waits on every run.
        let (user, finishedAt) = try await scheduler.run {
            let user = try await userWithRetries(
                api: api, id: "ada", scheduler: scheduler, random: SeededRandom(seed: 1).unitSource()
            ).get()
            return (user, scheduler.now)
        }
        #expect(user == User(id: "ada", name: "Ada"))
        #expect(api.callCount == 3)
        // Full jitter: two waits drawn below 0.5 s and 1 s, by the same seed.
        let draws = SeededRandom(seed: 1).unitSource()
        #expect(abs(finishedAt - (draws() * 0.5 + draws() * 1.0)) < 1e-6)
    }
}
