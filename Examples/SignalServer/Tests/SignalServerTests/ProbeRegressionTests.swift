import Foundation
import MarketDomain
import NIOCore
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@testable import SignalServerApp

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a sceptical probe of the server found, each pinned by a test that failed before its fix.
@Suite struct ProbeRegressionTests {
    @Test func theLedgersVolumeSaturatesInsteadOfTrapping() {
        var ledger = TradeLedger()
        ledger.record(Trade(symbol: "ACME", price: 1, size: Int.max, seq: 1))
        ledger.record(Trade(symbol: "ACME", price: 1, size: Int.max, seq: 2))
        #expect(ledger.stats(for: "ACME").volume == Int.max)
        #expect(ledger.stats(for: "ACME").trades == 2)
    }

    @Test func everyFeedStartsWithReadyAndThenTheVeryNextTrade() async throws {
        // Trades are published from several threads while feeds start: `ready` must come first and the
        // first trade after it must be numbered lastSeq + 1, whatever the interleaving.
        let counters = LiveCounters()
        let exchange = SimulatedExchange(listings: ["ACME": 1])
        let market = Market(store: QuoteStore(), exchange: exchange, counters: counters)
        let trades = 2_000
        let feeds = 400
        let publishing = Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for publisher in 0..<4 {
                    group.addTask {
                        for index in stride(from: publisher, to: trades, by: 4) {
                            _ = try? await market.publish(Trade(symbol: "ACME", price: Double(index + 1), size: 1)).get()
                        }
                    }
                }
            }
        }
        var problems: [String] = []
        for _ in 0..<feeds {
            var iterator = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
            guard case .ready(let lastSeq)? = await iterator.next() else {
                problems.append("a feed did not start with ready")
                continue
            }
            if lastSeq == trades { break }
            guard case .trade(let trade)? = await iterator.next() else {
                problems.append("no trade after ready(\(lastSeq))")
                continue
            }
            if trade.seq != lastSeq + 1 { problems.append("ready(\(lastSeq)) was followed by trade \(trade.seq)") }
        }
        await publishing.value
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test func aHeartbeatNeverPushesTheNewestQuoteOutOfAOneEventBuffer() async throws {
        // The stream keeps only the newest event for a slow client. The newest event must carry the
        // newest quote even when a heartbeat came after it.
        let services = MarketServices(configuration: ServerConfiguration())
        let beats = ValuePipe<Int>()
        let events = latestQuoteEvents("ACME", services: services, ticks: .single(0) |> then(beats.signal()))
        var iterator = events.values(bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        var writer = StreamWriter()
        _ = writer.messages(for: try #require(await iterator.next()))
        // The client does not read while the price changes and a heartbeat ticks.
        _ = try await services.market.publish(Trade(symbol: "ACME", price: 555, size: 1)).get()
        _ = try await services.market.publish(Trade(symbol: "ACME", price: 777.25, size: 1)).get()
        try await eventually("the store has the last price") { await services.store.quotes().first()?.quotes["ACME"]?.price == 777.25 }
        beats.putNext(1)
        // Now it reads: what it gets says 777.25 and a heartbeat.
        var messages: [String] = []
        while !messages.contains(where: { $0.contains("777.25") }) || !messages.contains(": heartbeat\n\n") {
            messages += writer.messages(for: try #require(await iterator.next()))
        }
        #expect(messages.last(where: { $0.hasPrefix("event: quote") })?.contains("777.25") == true)
    }

    @Test func aConvertedQuoteDoesNotTurnTheCachedPriceBack() async throws {
        try await withServer { server in
            try await server.trade("ACME", price: 200)
            try await eventually("the trade is cached") { try await server.get("quotes/ACME").decoded(Quote.self).price == 200 }
            #expect(try await server.get("quotes/ACME/in/EUR").decoded(Quote.self).price == 184)
            #expect(try await server.get("quotes/ACME").decoded(Quote.self).price == 200)
        }
    }

    @Test func tradesAcknowledgedDuringShutdownAreAllOnTheStreams() async throws {
        var acknowledged: [Int] = []
        var streams: [EventStream] = []
        try await withServer { server in
            for _ in 0..<3 { streams.append(try await StreamingTests().ready(server)) }
            // Eight publishers, so that several trades are in flight when the shutdown begins.
            let publishers = ShutdownPublishers(server)
            defer { publishers.begin() }
            try await eventually("some trades are published; \(publishers.stops)") {
                try await server.metrics().tradesPublished >= 100
            }
            publishers.begin()
            await server.group.triggerGracefulShutdown()
            acknowledged = await publishers.acknowledged()
        }
        #expect(!acknowledged.isEmpty)
        for stream in streams {
            let events = try await stream.rest()
            let seqs = events.filter { $0.name == "trade" }.map { try! JSONDecoder().decode(Trade.self, from: Data($0.data.utf8)).seq }
            #expect(events.last?.name == "end")
            #expect(
                Set(acknowledged).isSubset(of: Set(seqs)),
                "acknowledged trades missing from a stream: \(Set(acknowledged).subtracting(seqs).sorted().prefix(5))")
            #expect(seqs == Array(1...(seqs.last ?? 0)), "the stream's trades are contiguous from the first")
        }
    }

    @Test func aClientThatStopsReadingIsCutOffAndShutdownStillFinishes() async throws {
        try await withServer({ $0.slowClientLimit = 0.3 }) { server in
            try await self.stallAClientUntilItIsCutOff(server)
        }
    }

    /// `.endingWhenFull` instead of a hand-written cut-off: a client that falls behind loses its
    /// subscription at once (the feed keeps nothing more for it), reads what was kept, then `end`
    /// `behind`, and resumes with `Last-Event-ID`.
    @Test func aClientThatReadsSlowerThanEventsComeIsEndedAtTheBacklogLimitAndResumes() async throws {
        // The pending-write limit is an hour, so only the backlog limit can end this stream.
        try await withServer({
            $0.slowClientLimit = 3600
            $0.maximumBacklog = 200
        }) { server in
            let before = try await server.metrics()
            let socket = try StalledClient(port: server.port, path: "/events")
            try await eventually("the stream is open") { try await server.metrics().streams == before.streams + 1 }
            var published = 0
            while try await server.metrics().streamsBehind == before.streamsBehind && published < 1_000_000 {
                for _ in 0..<1_000 { server.services.market.publish(Trade(symbol: "ACME", price: 1, size: 1)).start() }
                _ = try await server.services.market.publish(Trade(symbol: "ACME", price: 1, size: 1)).get()
                published += 1_001
            }
            // Its subscription is gone, although it has not read a byte: the feed keeps nothing for it.
            try await eventually("its subscription is gone") {
                try await server.metrics().subscriptions == before.subscriptions
            }

            // It reads what was kept for it, then the end.
            let text = try await socket.read(until: "\r\n0\r\n\r\n")
            let seqs = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap { Int($0.dropFirst(4)) }
            let end = try #require(text.range(of: "event: end\ndata: {\"reason\":\"behind\",\"lastSeq\":"))
            let lastSeq = Int(text[end.upperBound...].prefix { $0.isNumber })
            #expect(lastSeq == seqs.last, "the end names the last trade the client received")
            // `ready` at 0, then every trade up to the end.
            #expect(seqs == Array(0...(seqs.last ?? 0)), "no trade is missing before the end")
            #expect(seqs.count > 200, "the backlog's 200 events were all kept for it")
            try await eventually("the stream is over") { try await server.metrics().streams == before.streams }

            // It resumes: with a log that keeps no trades (one instance), the stream says so with
            // `resynced` at the market's number, which is where it goes on.
            let resumed = server.stream("events", lastEventID: String(lastSeq ?? 0))
            let first = try await resumed.next()
            #expect(first?.name == "resynced")
            resumed.disconnect()
            withExtendedLifetime(socket) {}
        }
    }

    /// Subscribes a raw client with a small receive buffer that never reads, publishes trades until the
    /// server closes its stream, and checks that its stream and subscription are gone.
    func stallAClientUntilItIsCutOff(_ server: TestServer) async throws {
        let before = try await server.metrics()
        let socket = try StalledClient(port: server.port, path: "/events")
        try await eventually("the stream is open") { try await server.metrics().streams == before.streams + 1 }
        // Enough trades to fill every buffer between the server and the client (published in-process:
        // a few megabytes of events over HTTP would take long).
        var published = 0
        while try await server.metrics().streams > before.streams && published < 1_000_000 {
            for _ in 0..<1_000 { server.services.market.publish(Trade(symbol: "ACME", price: 1, size: 1)).start() }
            _ = try await server.services.market.publish(Trade(symbol: "ACME", price: 1, size: 1)).get()
            published += 1_001
        }
        try await eventually("the stalled stream is closed and its subscription disposed") {
            let now = try await server.metrics()
            return now.streams == before.streams && now.subscriptions == before.subscriptions
        }
        withExtendedLifetime(socket) {}
    }

    @Test func anOlderQuoteNeverReplacesANewerOneInTheCache() async throws {
        let store = QuoteStore()
        store.store(Quote(symbol: "ACME", price: 200, source: .exchange, asOf: 5))
        store.store(Quote(symbol: "ACME", price: 101.5, source: .exchange, asOf: 0))
        store.store(Quote(symbol: "ACME", price: 199, source: .exchange, asOf: 4))
        // The store's writes are queued in order: once a later write is visible, all earlier ones ran.
        store.store(Quote(symbol: "GLOBEX", price: 1, source: .exchange, asOf: 1))
        try await eventually("the writes ran") { await store.quotes().first()?.quotes["GLOBEX"] != nil }
        #expect(await store.quotes().first()?.quotes["ACME"]?.price == 200)

        let exchange = SimulatedExchange(listings: ["ACME": 101.5], behaviour: .init(latency: 0))
        exchange.traded("ACME", at: 200, seq: 5)
        exchange.traded("ACME", at: 199, seq: 4)
        #expect(try await exchange.quote("ACME").get() == Quote(symbol: "ACME", price: 200, source: .exchange, asOf: 5))
    }

    @Test func aCachedQuoteSendsNoRequestToTheExchange() async throws {
        try await withServer { server in
            #expect(try await server.get("quotes/ACME").decoded(Quote.self).source == .exchange)
            try await eventually("the cache answers") { try await server.get("quotes/ACME").decoded(Quote.self).source == .cache }
            let requests = try await server.metrics().exchangeRequests
            for _ in 0..<20 { #expect(try await server.get("quotes/ACME").status == 200) }
            #expect(try await server.metrics().exchangeRequests == requests)
        }
    }

    @Test func aBodyOverTheUploadLimitIs413() async throws {
        try await withServer { server in
            let padding = String(repeating: " ", count: 3 << 20)
            let reply = try await server.post("trades", body: #"{"symbol": "ACME", "price": 10, "size": 1}"# + padding)
            #expect(reply.status == 413)
            #expect(try reply.decoded(TestServer.ErrorReply.self).error == "too_large")
        }
    }

    @Test func shutdownClosesTheMarketFirstAndTheLedgerRecordsEveryAcknowledgedTrade() async throws {
        var services: MarketServices?
        var acknowledged = 0
        try await withServer { server in
            services = server.services
            // No stream is open: the market must close on its own.
            let publishers = ShutdownPublishers(server)
            defer { publishers.begin() }
            try await eventually("some trades are published; \(publishers.stops)") {
                try await server.metrics().tradesPublished >= 100
            }
            publishers.begin()
            await server.group.triggerGracefulShutdown()
            acknowledged = await publishers.acknowledged().count
        }
        let market = try #require(services).market
        // A trade can be published and its 201 still miss the client (a response cut by the shutdown, a
        // client deadline under load), so published >= acknowledged, not ==.
        #expect(acknowledged > 0)
        #expect(market.lastSeq >= acknowledged, "every acknowledged trade was published")
        let recorded = await services!.ledger.withValue { $0.stats(for: "ACME").trades }
        #expect(recorded == market.lastSeq, "the ledger stopped listening only after the last trade published")
        await #expect(throws: MarketError.closed) { try await market.publish(Trade(symbol: "ACME", price: 1, size: 1)).get() }
    }

    @Test func unknownRoutesAndBadSymbolsAnswerWithJSON() async throws {
        try await withServer { server in
            let missing = try await server.get("no/such/route")
            #expect(missing.status == 404)
            #expect(try missing.decoded(TestServer.ErrorReply.self).error == "not_found")
            let long = try await server.get("quotes/" + String(repeating: "A", count: 5_000))
            #expect(long.status == 400)
            #expect(long.body.count < 300, "the error does not echo a long symbol back")
            #expect(try await server.get("quotes/AC%4DE").decoded(Quote.self).symbol == "ACME")
        }
    }

    /// A client that sent the head of a POST and part of its body, then nothing, kept its handler
    /// waiting for the rest: the connection stayed open for good, and a graceful shutdown waited for its
    /// 30 s backstop (a probe, 2026-11-30). It is closed after the slow-client limit.
    @Test func aHalfSentRequestIsClosedAtTheSlowClientLimit() async throws {
        try await withServer({ $0.slowClientLimit = 0.3 }) { server in
            let socket = try StalledClient(
                port: server.port, request: "POST /trades HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"sy")
            #expect(await socket.closedByTheServer(), "the half-sent request's connection is closed")
        }
    }

    /// A client that sent part of a request head, then nothing, kept its connection open for good: the
    /// server sees no part of a request before its head is whole, so the slow-client limit never began
    /// (a probe, 2026-11-30). It is closed after the idle-connection limit.
    @Test func aHalfSentRequestHeadIsClosedAtTheIdleLimit() async throws {
        try await withServer({ $0.idleConnectionLimit = 0.3 }) { server in
            let socket = try StalledClient(port: server.port, request: "POST /trades HTTP/1.1\r\nHost: 12")
            #expect(await socket.closedByTheServer(watchdog: 20), "the half-sent head's connection is closed")
        }
    }

    /// The idle limit leaves a response in progress alone: a stream whose client sends nothing more
    /// goes on past it.
    @Test func theIdleLimitLeavesAStreamAlone() async throws {
        try await withServer({ $0.idleConnectionLimit = 0.1 }) { server in
            let stream = try await StreamingTests().ready(server)
            // Heartbeats every 50 ms: twenty of them take ten idle limits.
            for _ in 0..<20 {
                let heartbeat = try await stream.next(skippingHeartbeats: false)
                try #require(heartbeat?.name == "heartbeat", "the stream ended early: \(String(describing: heartbeat))")
            }
            try await server.trade("ACME", price: 5)
            #expect(try await stream.next()?.name == "trade")
            stream.disconnect()
        }
    }

    @Test(arguments: [
        (["--heartbeat", "1e-9"], "--heartbeat needs"), (["--heartbeat", "nan"], "--heartbeat needs"),
        (["--slow-client", "0"], "--slow-client needs"), (["--port", "-1"], "--port needs"),
        (["--port"], "--port needs a value"), (["--verbose", "1"], "unknown argument --verbose"),
        (["--heartbaet"], "unknown argument --heartbaet"),
    ])
    func badArgumentsAreRefusedWithTheirName(_ arguments: [String], _ message: String) {
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(arguments: arguments) }
        do {
            _ = try ServerConfiguration(arguments: arguments)
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
    }

    @Test func helpAndIPv6() throws {
        #expect(throws: ConfigurationError.help) { try ServerConfiguration(arguments: ["--help"]) }
        #expect(try ServerConfiguration(arguments: ["--host", "::1"]).urlHost == "[::1]")
        #expect(try ServerConfiguration(arguments: ["--host", "127.0.0.1"]).urlHost == "127.0.0.1")
    }
}

/// A client connected with a small receive buffer that sends one GET and never reads.
final class StalledClient {
    private let descriptor: Int32

    convenience init(port: Int, path: String) throws {
        try self.init(port: port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    /// Connects and sends `request` as it is (it may stop anywhere).
    init(port: Int, request: String) throws {
        #if canImport(Glibc)
            self.descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            self.descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard self.descriptor >= 0 else { throw TestFailure("socket() failed") }
        var size: Int32 = 4096
        setsockopt(self.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connect() failed") }
        _ = request.withCString { send(self.descriptor, $0, strlen($0), 0) }
    }

    /// Reads, on a thread of its own, until the text read ends with `marker` or the connection closes;
    /// returns all of it.
    func read(until marker: String) async throws -> String {
        let descriptor = self.descriptor
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = recv(descriptor, &chunk, chunk.count, 0)
                    if count <= 0 { break }
                    bytes += chunk[..<count]
                    if bytes.count >= marker.utf8.count, bytes.suffix(marker.utf8.count).elementsEqual(marker.utf8) { break }
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    /// Reads and drops what the server sends, on a thread of its own, until it closes the connection
    /// (true) or `watchdog` seconds pass without a byte (false): a watchdog, so that a connection that
    /// stays open fails the test instead of hanging it.
    func closedByTheServer(watchdog: Int = 60) async -> Bool {
        let descriptor = self.descriptor
        var timeout = timeval(tv_sec: watchdog, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = recv(descriptor, &chunk, chunk.count, 0)
                    if count > 0 { continue }
                    // 0: the server closed it; a reset is a close too; a timeout is not.
                    continuation.resume(returning: count == 0 || errno == ECONNRESET)
                    return
                }
            }
        }
    }

    deinit {
        close(self.descriptor)
    }
}
