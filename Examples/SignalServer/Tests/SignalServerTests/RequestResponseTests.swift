import MarketDomain
import Testing

@testable import SignalServerApp

/// The await routes: status codes, bodies, errors and deadlines, over real HTTP.
@Suite struct RequestResponseTests {
    @Test func healthAnswers() async throws {
        try await withServer { server in
            let reply = try await server.get("health")
            #expect(reply.status == 200)
            #expect(reply.body == "ok\n")
        }
    }

    @Test func aQuoteComesFromTheExchangeThenFromTheCache() async throws {
        try await withServer { server in
            let first = try await server.get("quotes/ACME")
            #expect(first.status == 200)
            #expect(try first.decoded(Quote.self) == Quote(symbol: "ACME", price: 101.5, source: .exchange))
            // The exchange's answer was cached (on the store's queue, so the request after may still miss
            // it; the one after that cannot, as the cache write comes before the response).
            try await eventually("the cache answers") {
                try await server.get("quotes/acme").decoded(Quote.self).source == .cache
            }
        }
    }

    @Test func anUnknownSymbolIs404WithAJSONBody() async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/NOPE")
            #expect(reply.status == 404)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "unknown_symbol")
            #expect(try await server.metrics().exchangeRequests == 1, "an unknown symbol is not retried")
        }
    }

    @Test func anExchangeThatNeverAnswersIs502AfterTheRetries() async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/DOWN")
            #expect(reply.status == 502)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "exchange_unavailable")
            #expect(try await server.metrics().exchangeRequests == 4, "one request and three retries")
        }
    }

    @Test func aFlakyExchangeIsRetriedUntilItAnswers() async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/FLAKY")
            #expect(reply.status == 200)
            #expect(try reply.decoded(Quote.self).source == .exchange)
            #expect(try await server.metrics().exchangeRequests == 3, "two failures, then the answer")
        }
    }

    @Test func aDeadlineThatPassesIs504AndLeavesNoSubscription() async throws {
        try await withServer { server in
            let before = try await server.metrics()
            let reply = try await server.get("quotes/SLOW?deadline_ms=50")
            #expect(reply.status == 504)
            #expect(try reply.decoded(TestServer.ErrorReply.self) == .init(error: "deadline_exceeded", message: "no answer within 50 ms"))
            // The loader's subscription (and the exchange request behind it) was disposed by the timeout.
            #expect(try await server.metrics().subscriptions == before.subscriptions)
        }
    }

    @Test(arguments: ["0", "-5", "abc", "1.5", "60001", "99999999999999999999"])
    func aDeadlineThatIsNotAPositiveWholeNumberOfMillisecondsIs400(_ value: String) async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/ACME?deadline_ms=\(value)")
            #expect(reply.status == 400)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "bad_request")
        }
    }

    @Test func aConvertedQuoteRunsTheAsyncRatesServiceInsideTheSignalChain() async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/ACME/in/eur")
            #expect(reply.status == 200)
            #expect(try reply.decoded(Quote.self) == Quote(symbol: "ACME", price: 93.38, currency: "EUR", source: .exchange))
            let metrics = try await server.metrics()
            #expect(metrics.bridgedTasks == 0, "the bridged task has returned")
            #expect(metrics.subscriptions == 1, "only the ledger's subscription is left")
        }
    }

    @Test func anUnknownCurrencyIs400FromTheAsyncServicesTypedError() async throws {
        try await withServer { server in
            let reply = try await server.get("quotes/ACME/in/XYZ")
            #expect(reply.status == 400)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "unsupported_currency")
            // The failure ended the combineLatest, which disposed the exchange request it was waiting for.
            try await eventually("the bridged task and the exchange request are gone") {
                let metrics = try await server.metrics()
                return metrics.bridgedTasks == 0 && metrics.subscriptions == 1
            }
        }
    }

    @Test func tradesAreNumberedInOrderAndRecordedInTheLedger() async throws {
        try await withServer { server in
            #expect(try await server.trade("ACME", price: 102, size: 5) == 1)
            #expect(try await server.trade("acme", price: 103, size: 7) == 2)
            try await eventually("the ledger has both trades") {
                try await server.get("symbols/ACME/stats").body == #"{"lastPrice":103,"lastSeq":2,"symbol":"ACME","trades":2,"volume":12}"#
            }
            #expect(try await server.get("symbols/NOPE/stats").status == 404)
        }
    }

    @Test(arguments: [
        (#"{"symbol": "ACME", "price": -1, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 0, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 1e400, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": -1e400, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": 1e30}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": 9223372036854775808}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": -9223372036854775809}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": 1.5}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": "1"}"#, 400, "bad_request"),
        (#"{"symbol": "ACME", "price": 10}"#, 400, "bad_request"),
        (#"{"symbol": "ACME", "price": 10, "size": 0}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": -3}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": 9223372036854775807}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 10, "size": 1000000001}"#, 422, "invalid_trade"),
        (#"{"symbol": "AC/ME", "price": 10, "size": 1}"#, 400, "bad_request"),
        (#"{"symbol": "ACME", "price": 1e305, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ACME", "price": 1000000000.01, "size": 1}"#, 422, "invalid_trade"),
        (#"{"symbol": "ınıtech", "price": 10, "size": 1}"#, 400, "bad_request"),
        (#"{"symbol": "straße", "price": 10, "size": 1}"#, 400, "bad_request"),
        (#"{"symbol": "", "price": 10, "size": 1}"#, 400, "bad_request"),
        (#"{"symbol": "NOPE", "price": 10, "size": 1}"#, 404, "unknown_symbol"),
        (#"{"symbol": "ACME", "price": "ten", "size": 1}"#, 400, "bad_request"),
        ("not json", 400, "bad_request"),
        ("", 400, "bad_request"),
    ])
    func aTradeNoMarketWouldAcceptIsRefusedWithItsReason(_ body: String, _ status: Int, _ error: String) async throws {
        try await withServer { server in
            let reply = try await server.post("trades", body: body)
            #expect(reply.status == status)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == error)
            #expect(try await server.metrics().tradesPublished == 0)
        }
    }

    @Test func aClosedMarketIs503() async throws {
        try await withServer { server in
            server.services.market.close()
            let reply = try await server.post("trades", body: #"{"symbol": "ACME", "price": 10, "size": 1}"#)
            #expect(reply.status == 503)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "market_closed")
        }
    }

    @Test func metricsStartWithOnlyTheLedgersSubscription() async throws {
        try await withServer { server in
            var metrics = try await server.metrics()
            #expect(metrics.residentBytes > 1 << 20, "the server reports its resident memory")
            metrics.residentBytes = 0
            #expect(
                metrics
                    == .init(
                        subscriptions: 1, bridgedTasks: 0, streams: 0, streamsBehind: 0, exports: 0, tradesPublished: 0, residentBytes: 0,
                        exchangeRequests: 0))
        }
    }
}
