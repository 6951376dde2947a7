// Swift 6 code calling the Swift 5-mode `LegacyQuotes` module, and the Swift 6 `QuoteDesk` over it.
import LegacyQuotes
import QuoteDesk
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// Main-actor code with a label to fill from the legacy client.
@MainActor final class QuoteLabel {
    var text = ""

    /// Traps: the closure is formed in main-actor code and passed to a parameter that is not
    /// `@Sendable`, so Swift 6 makes it main-actor isolated and checks that at run time when it is
    /// called. The legacy client calls it on its own queue.
    func refreshTrapping(from client: QuoteClient) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            client.fetch("ACME") { quote in
                self.text = "\(quote?.price ?? 0)"
                done.resume()
            }
        }
    }

    /// First way out: no callback. Await the legacy signal; the main actor gets the value.
    func refreshAwaiting(from client: QuoteClient) async {
        if let quote = await client.quote("ACME").first() {
            self.text = "\(quote.price)"
        }
    }

    /// Second way out: a `@Sendable` callback (here the audited `fetchSendable`), which Swift 6 does not
    /// isolate to the main actor; it hops to the main actor for the label.
    func refreshHopping(from client: QuoteClient) async {
        let price = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            client.fetchSendable("ACME") { quote in
                done.resume(returning: quote?.price ?? 0)
            }
        }
        self.text = "\(price)"
    }
}

@Suite struct MainActorCallbackTests {
    /// Swift 6 checks a main-actor closure's isolation when a Swift 5-mode module calls it; on Linux the
    /// check stops the process in `_dispatch_assert_queue_fail` (SIGILL).
    @Test func mainActorClosureCalledOffTheMainThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            let label = QuoteLabel()
            await label.refreshTrapping(from: QuoteClient(prices: ["ACME": 42]))
        }
    }

    @Test @MainActor func awaitingTheLegacySignalInsteadOfACallback() async {
        let label = QuoteLabel()
        await label.refreshAwaiting(from: QuoteClient(prices: ["ACME": 42]))
        #expect(label.text == "42")
    }

    @Test @MainActor func sendableCallbackThatHopsToTheMainActor() async {
        let label = QuoteLabel()
        await label.refreshHopping(from: QuoteClient(prices: ["ACME": 43]))
        #expect(label.text == "43")
    }

    @Test func deskTellsAQuoteFromAnUnknownSymbol() async {
        let desk = QuoteDesk(client: QuoteClient(prices: ["ACME": 42]), timeout: .seconds(600))
        #expect(await desk.lookUp("ACME") == .found(Quote(symbol: "ACME", price: 42)))
        #expect(await desk.lookUp("NOPE") == .unknownSymbol)
    }

    @Test func legacyCallersStartTheDesksSignal() async {
        let desk = QuoteDesk(client: QuoteClient(prices: ["ACME": 42]), timeout: .seconds(600))
        #expect(await desk.lookUpSignal("ACME").first() == .found(Quote(symbol: "ACME", price: 42)))
    }
}
