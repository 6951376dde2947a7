// The async/await side of the tour: awaiting, iterating and calling async code from signals.
import SwiftSignalKit
import SwiftSignalKitConcurrency

struct LookupError: Error {}

func asyncTour() async {
    section("Awaiting the first value")
    let greeting = Promise<String>("hello from a promise")
    print(await greeting.get().first() ?? "nothing")
    do {
        _ = try await Signal<Int, NoError>.complete().get()
    } catch {
        print("get() on an empty signal throws:", error)
    }

    section("for await over a signal, with a buffering policy")
    let numbers = Signal<Int, NoError> { subscriber in
        for value in 1...10 {
            subscriber.putNext(value)
        }
        subscriber.putCompletion()
        return EmptyDisposable
    }
    var kept: [Int] = []
    for await value in numbers.values(bufferingPolicy: .bufferingNewest(3)) {
        kept.append(value)
    }
    print("a slow consumer keeping the newest 3:", kept)

    section("Async work as a signal, cancelled on dispose")
    let lookup = Signal<String, LookupError>(operation: { () async throws(LookupError) -> String in
        "looked up asynchronously"
    })
    let result = try? await (lookup |> map { $0.uppercased() }).get()
    print(result ?? "failed")

    section("Cancellation ends a wait at once")
    let waiting = Task { try await Signal<Int, NoError>.never().get() }
    waiting.cancel()
    switch await waiting.result {
    case .success: print("unexpected value")
    case .failure(let error): print("cancelled wait threw:", type(of: error))
    }
}
