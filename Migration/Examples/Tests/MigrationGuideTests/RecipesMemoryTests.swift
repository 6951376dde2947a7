// The guide's recipe for servers that hold a subscription per client: what a subscription keeps, and how
// to keep it small.

import SwiftSignalKit
import Testing

// MARK: - Holding many live subscriptions

/// A price feed with a subscription per connected client: each keeps the prices of the symbols it
/// watches, above its alert threshold.
nonisolated final class PriceAlerts: Sendable {
    let prices = ValuePipe<(symbol: String, cents: Int)>()
    /// A key's new subscription disposes the one it replaces.
    let clients = DisposableDict<String>()

    /// One stage per client: `map` first, then `filter`, which the library runs as one subscriber.
    /// Only a `next:` callback: the feed never ends, and a subscriber without error or completion
    /// callbacks is 64 bytes smaller.
    func connect(client: String, symbol: String, above threshold: Int, alert: @escaping @Sendable (Int) -> Void) {
        let prices = self.prices.signal()
        let watched = prices |> map { $0.symbol == symbol ? $0.cents : -1 } |> filter { $0 > threshold }
        self.clients.set(watched.start(next: alert), forKey: client)
    }

    /// Ends the client's subscription; everything it held is released.
    func disconnect(client: String) {
        self.clients.set(nil, forKey: client)
    }
}

@Suite struct RecipesMemoryTests {
    @Test func eachClientGetsItsAlertsUntilItDisconnects() {
        let alerts = PriceAlerts()
        let received = Atomic<[String]>(value: [])
        for client in ["ada", "grace"] {
            alerts.connect(client: client, symbol: "ACME", above: 100) { cents in
                received.modify { $0 + ["\(client) \(cents)"] }
            }
        }
        alerts.prices.putNext((symbol: "ACME", cents: 120))
        alerts.prices.putNext((symbol: "OTHER", cents: 500))
        alerts.disconnect(client: "ada")
        alerts.prices.putNext((symbol: "ACME", cents: 90))
        alerts.prices.putNext((symbol: "ACME", cents: 130))
        #expect(received.with { $0.sorted() } == ["ada 120", "grace 120", "grace 130"])
    }

    /// A client that connects again keeps one subscription, and disconnecting ends it. Stored with a
    /// dictionary's `merging`, the replaced subscription was released without being disposed: it went
    /// on alerting, also after the client disconnected.
    @Test func aClientThatConnectsAgainKeepsOneSubscription() {
        let alerts = PriceAlerts()
        let received = Atomic<[String]>(value: [])
        for connection in ["first", "second"] {
            alerts.connect(client: "ada", symbol: "ACME", above: 100) { cents in
                received.modify { $0 + ["\(connection) \(cents)"] }
            }
        }
        alerts.prices.putNext((symbol: "ACME", cents: 120))
        alerts.disconnect(client: "ada")
        alerts.prices.putNext((symbol: "ACME", cents: 130))
        #expect(received.with { $0 } == ["second 120"])
    }
}
