// The migration guide, "Signals and Swift concurrency, side by side": each block of that article is in this
// file, and each test checks what the guide says about it.

import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// A signal is a recipe: nothing runs until it is started, and every start runs it again.
func requestCounter(_ requests: Atomic<Int>) -> Signal<Int, NoError> {
    return Signal { subscriber in
        subscriber.putNext(requests.modify { $0 + 1 })
        subscriber.putCompletion()
        return EmptyDisposable
    }
}

/// The same work as an async function: it runs when called, once per call.
func countRequest(_ requests: Atomic<Int>) async -> Int {
    return requests.modify { $0 + 1 }
}

/// `|>` hands a signal to an operator; read a chain from top to bottom, like chained method calls.
func displayName(api: UserAPI, id: UserID) -> Signal<String, NoError> {
    return userSignal(api: api, id: id)
        |> map { user in user.name }
        |> `catch` { _ in .single("someone") }
}

@Suite struct MentalModelTests {
    @Test func operatorsChainWithThePipe() async {
        let api = UserAPI(users: [User(id: "ada", name: "Ada")])
        #expect(await displayName(api: api, id: "ada").first() == "Ada")
        #expect(await displayName(api: api, id: "nobody").first() == "someone")
    }

    @Test func signalsAreColdAndTasksAreNot() async {
        let requests = Atomic<Int>(value: 0)
        let signal = requestCounter(requests)  // nothing has run yet
        let first = await signal.first()  // starts it: 1
        let second = await signal.first()  // starts it again: 2
        let task = Task { await countRequest(requests) }  // starts now, runs once: 3
        let third = await task.value
        let fourth = await task.value  // the same result: 3
        #expect([first, second] == [1, 2])
        #expect(third == 3)
        #expect(fourth == 3)
        #expect(requests.with { $0 } == 3)
    }

    @Test func disposingASubscriptionCancelsTheTaskBehindIt() async {
        let api = UserAPI(users: [])
        let ended = Atomic<APIError?>(value: nil)
        let subscription = Signal(operation: { () throws(APIError) in try await api.slowUser(id: "ada") })
            .start(error: { error in _ = ended.swap(error) })
        await eventually { api.callCount == 1 }
        subscription.dispose()  // cancels the task; its error is not delivered
        // The task saw the cancellation (its wait ended with `.offline`), and the subscriber did not hear of it.
        await eventually { api.finishedCount == 1 }
        #expect(ended.with { $0 } == nil)
    }

    @Test func cancellingATaskDisposesTheSubscriptionItAwaits() async {
        let openSubscriptions = Atomic<Int>(value: 0)  // how many subscriptions are open
        let neverEnds = Signal<User, APIError> { _ in
            openSubscriptions.modify { $0 + 1 }
            return ActionDisposable { openSubscriptions.modify { $0 - 1 } }
        }
        let request = Task { try await neverEnds.get() }
        await eventually { openSubscriptions.with { $0 } == 1 }
        request.cancel()  // disposes the subscription, and `get()` throws CancellationError
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(openSubscriptions.with { $0 } == 0)
    }

    @Test func typedErrorsCrossTheBridgeWithTheirType() async {
        let api = UserAPI(users: [])
        let signal: Signal<User, APIError> = Signal(operation: { () throws(APIError) in try await api.user(id: "nobody") })
        do {
            _ = try await signal.first()  // throws(APIError): the catch knows the type
            Issue.record("expected an error")
        } catch {
            #expect(error == .notFound)
        }
    }
}
