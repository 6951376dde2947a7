import Foundation
import MarketDomain
import Testing

@testable import SignalServerApp

/// The server-sent event routes: order, filters, heartbeats, disconnects and shutdown.
@Suite struct StreamingTests {
    /// Opens `/events` (or `path`) and waits for its `ready` event.
    func ready(_ server: TestServer, _ path: String = "events") async throws -> EventStream {
        let stream = server.stream(path)
        let first = try await stream.next()
        try #require(first?.name == "ready", "the stream began with \(String(describing: first))")
        return stream
    }

    func seq(_ event: SSEEvent?) throws -> Int {
        let event = try #require(event)
        try #require(event.name == "trade", "expected a trade, got \(event)")
        return try JSONDecoder().decode(Trade.self, from: Data(event.data.utf8)).seq
    }

    @Test func everyTradeAfterReadyArrivesInOrder() async throws {
        try await withServer { server in
            let stream = try await self.ready(server)
            for price in 1...50 { try await server.trade("ACME", price: Double(price)) }
            for expected in 1...50 { #expect(try self.seq(try await stream.next()) == expected) }
            stream.disconnect()
        }
    }

    @Test func aSymbolFilterLeavesOtherSymbolsOut() async throws {
        try await withServer { server in
            let stream = try await self.ready(server, "events?symbol=globex")
            try await server.trade("ACME", price: 1)
            try await server.trade("GLOBEX", price: 2)
            #expect(try self.seq(try await stream.next()) == 2)
            stream.disconnect()
            #expect(try await server.get("events?symbol=NOPE").status == 404)
        }
    }

    @Test func anIdleStreamGetsHeartbeats() async throws {
        try await withServer { server in
            let stream = try await self.ready(server)
            #expect(try await stream.next(skippingHeartbeats: false)?.name == "heartbeat")
            stream.disconnect()
        }
    }

    @Test func aClientThatDisconnectsMidStreamLeavesNothingBehind() async throws {
        // No heartbeat during the test: the server must notice the disconnect itself, not through a failed
        // write.
        try await withServer({ $0.heartbeat = 3600 }) { server in
            let before = try await server.metrics()
            let leaving = try await self.ready(server)
            let staying = try await self.ready(server)
            let open = try await server.metrics()
            #expect(open.streams == before.streams + 2)
            #expect(open.subscriptions > before.subscriptions)
            try await server.trade("ACME", price: 1)
            #expect(try self.seq(try await leaving.next()) == 1)

            leaving.disconnect()
            try await eventually("one stream and its subscriptions are gone") {
                let now = try await server.metrics()
                return now.streams == before.streams + 1
                    && now.subscriptions == before.subscriptions + (open.subscriptions - before.subscriptions) / 2
            }
            // The other client is unaffected.
            try await server.trade("ACME", price: 2)
            #expect(try self.seq(try await staying.next()) == 1)
            #expect(try self.seq(try await staying.next()) == 2)
            staying.disconnect()
            try await eventually("every stream and subscription is gone") {
                let now = try await server.metrics()
                return now.streams == before.streams && now.subscriptions == before.subscriptions
            }
        }
    }

    @Test func theQuoteStreamLoadsTheQuoteThenSendsEachNewPrice() async throws {
        try await withServer { server in
            let stream = server.stream("quotes/initech/stream")
            #expect(try await stream.status.value == 200)
            func price(_ event: SSEEvent?) throws -> Double {
                let event = try #require(event)
                try #require(event.name == "quote", "expected a quote, got \(event)")
                return try JSONDecoder().decode(Quote.self, from: Data(event.data.utf8)).price
            }
            // Nobody asked for INITECH before: the stream loads it from the exchange.
            #expect(try price(try await stream.next()) == 7.8)
            try await server.trade("INITECH", price: 8.25)
            #expect(try price(try await stream.next()) == 8.25)
            stream.disconnect()
            #expect(try await server.get("quotes/NOPE/stream").status == 404)
        }
    }

    /// A stream of a symbol the cache has asks the exchange for nothing: `then` saw the stream's
    /// `take(1)` end only through operators of the library, and the loader's subscription counter was
    /// a generator of its own, so every stream subscriber asked the exchange.
    @Test func aQuoteStreamOfACachedSymbolAsksTheExchangeNothing() async throws {
        try await withServer { server in
            #expect(try await server.get("quotes/ACME").status == 200)
            try await eventually("the cache answers") { try await server.get("quotes/ACME").decoded(Quote.self).source == .cache }
            let requests = try await server.metrics().exchangeRequests
            for _ in 0..<3 {
                let stream = server.stream("quotes/ACME/stream")
                #expect(try await stream.next()?.name == "quote")
                stream.disconnect()
            }
            #expect(try await server.metrics().exchangeRequests == requests)
        }
    }

    @Test func gracefulShutdownEndsEveryStreamAndDisposesEverySubscription() async throws {
        var services: MarketServices?
        var streams: [EventStream] = []
        try await withServer { server in
            services = server.services
            for _ in 0..<3 { streams.append(try await self.ready(server)) }
            streams.append(server.stream("quotes/ACME/stream"))
            #expect(try await streams[3].status.value == 200)
            // withServer triggers the graceful shutdown when this returns, and waits for the group to stop.
        }
        for stream in streams.prefix(3) {
            #expect(try await stream.rest() == [SSEEvent(name: "end", data: #"{"reason":"shutdown","lastSeq":0}"#)])
        }
        #expect(try await streams[3].rest().last == SSEEvent(name: "end", data: #"{"reason":"shutdown"}"#))
        let counters = try #require(services).counters
        #expect(counters.streams.value == 0)
        #expect(counters.subscriptions.value == 0, "the ledger's subscription was disposed as well")
        #expect(counters.bridgedTasks.value == 0)
    }
}
