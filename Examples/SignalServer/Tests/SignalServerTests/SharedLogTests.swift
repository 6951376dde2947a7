import Foundation
import MarketDomain
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@testable import SignalServerApp

/// What several instances rely on when they share a trade log: the market takes the log's trades with no
/// repeat and no silent gap, following the log survives lost connections, and a stream resumes after
/// the client's Last-Event-ID. The log itself, on a real PostgreSQL, is tested by
/// `Examples/LoadTest/cluster.sh`.
@Suite(.timeLimit(.minutes(1))) struct SharedLogTests {
    static func trade(_ seq: Int) -> Trade {
        return Trade(symbol: "ACME", price: Double(seq), size: 1, seq: seq)
    }

    static func market(lastSeq: Int = 0) -> Market {
        return Market(store: QuoteStore(), exchange: SimulatedExchange(listings: ["ACME": 1]), counters: LiveCounters(), lastSeq: lastSeq)
    }

    /// The next `count` events of `iterator`.
    static func next<I: AsyncIteratorProtocol>(_ count: Int, of iterator: inout I) async throws -> [I.Element] {
        var events: [I.Element] = []
        for _ in 0..<count {
            guard let event = try await iterator.next() else { break }
            events.append(event)
        }
        return events
    }

    /// A market at 0 that follows the log `session` describes, with no wait between attempts, and the
    /// market's feed past its `ready`. Dispose the follower at the end.
    static func follow(
        _ session: @escaping @Sendable (Int) -> Signal<[Trade], any Error>
    ) async -> (feed: SignalValues<Market.FeedEvent, NoError>.AsyncIterator, follower: any Disposable) {
        let market = Self.market()
        var feed = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(await feed.next() == .ready(lastSeq: 0))
        let follower = followLog(from: { market.lastSeq }, session: session, backoff: .exponential(initial: 0, maxDelay: 0))
            .start(next: { market.ingest($0) })
        return (feed, follower)
    }

    // MARK: The market takes a log's trades

    @Test func aMarketStartsAfterTheLogsLastTrade() async throws {
        let market = Self.market(lastSeq: 42)
        var feed = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(await feed.next() == .ready(lastSeq: 42))
        market.ingest([Self.trade(43)])
        #expect(await feed.next() == .trade(Self.trade(43)))
        #expect(market.lastSeq == 43)
    }

    @Test func ingestDropsRepeatsAndAnnouncesAGapWithResynced() async throws {
        let market = Self.market(lastSeq: 5)
        var feed = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(await feed.next() == .ready(lastSeq: 5))
        market.ingest([4, 5, 6, 6, 7].map(Self.trade))
        market.ingest([7, 10, 11].map(Self.trade))
        let events = try await Self.next(5, of: &feed)
        #expect(
            events == [.trade(Self.trade(6)), .trade(Self.trade(7)), .resynced(lastSeq: 9), .trade(Self.trade(10)), .trade(Self.trade(11))])
        #expect(market.lastSeq == 11)
    }

    @Test func aTradeNoMarketAcceptsIsIngestedAsAMissingOne() async throws {
        // A NaN price written into the log by hand must not reach a stream (its JSON cannot be encoded):
        // it is dropped, and the trade after it is announced with resynced.
        let market = Self.market()
        var feed = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(await feed.next() == .ready(lastSeq: 0))
        let nan = Trade(symbol: "ACME", price: .nan, size: 1, seq: 1)
        let huge = Trade(symbol: "ACME", price: 1, size: .max, seq: 2)
        market.ingest([nan, huge, Self.trade(3)])
        #expect(try await Self.next(2, of: &feed) == [.resynced(lastSeq: 2), .trade(Self.trade(3))])
    }

    @Test func aClosedMarketIngestsNothing() async throws {
        let market = Self.market()
        market.close()
        _ = await market.whenClosed().first()
        market.ingest([Self.trade(1)])
        var feed = market.feed().values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(try await Self.next(3, of: &feed) == [.ready(lastSeq: 0), .closed(lastSeq: 0)])
    }

    // MARK: Following the log across lost connections

    @Test func followingTheLogReconnectsAndCatchesUpWithNoRepeatAndNoGap() async throws {
        // Each session sends up to two trades from where the market is, then three more one at a time
        // (as notified), then loses its connection; the last one stays open. The market's number lags
        // what was handed to it (ingest runs on its queue), so sessions overlap what was already sent.
        let log = (1...20).map(Self.trade)
        let opened = Atomic<[Int]>(value: [])
        var (feed, follower) = await Self.follow { from in
            opened.modify { $0 + [from] }
            let backlog = Array(log.dropFirst(from).prefix(2))
            let notified = Array(log.dropFirst(from + backlog.count).prefix(3))
            let batches = [backlog] + notified.map { [$0] }
            let session = Signal<[Trade], any Error> { subscriber in
                for batch in batches { subscriber.putNext(batch) }
                subscriber.putCompletion()
                return EmptyDisposable
            }
            if from + backlog.count + notified.count >= log.count { return session |> then(.never()) }
            return session |> then(.fail(CancellationError()))
        }
        defer { follower.dispose() }
        let events = try await Self.next(20, of: &feed)
        #expect(events == log.map { .trade($0) })
        #expect(opened.with { $0.count } >= 4, "sessions opened from \(opened.with { $0 })")
    }

    @Test func aSessionThatEndsWithoutAnErrorIsReconnected() async throws {
        let opened = Atomic(value: 0)
        var (feed, follower) = await Self.follow { _ in
            // The first connection closes cleanly after one trade; the second has the next in its backlog.
            if opened.modify({ $0 + 1 }) == 1 {
                return .single([Self.trade(1)])
            }
            return .single([Self.trade(1), Self.trade(2)]) |> then(.never())
        }
        defer { follower.dispose() }
        #expect(try await Self.next(2, of: &feed) == [.trade(Self.trade(1)), .trade(Self.trade(2))])
    }

    @Test func aNotificationIsOnlyAWakeUp() {
        // Whatever a payload says, the session reads the trades from the table; the number it names
        // only saves a read when it is not past the last trade sent.
        #expect(PostgresTradeLog.hintedSeq("{\"seq\": 12, \"symbol\": \"ACME\", \"price\": 666, \"size\": 1}") == 12)
        #expect(PostgresTradeLog.hintedSeq("{\"seq\": \"12\"}") == nil)
        #expect(PostgresTradeLog.hintedSeq("garbage") == nil)
        #expect(PostgresTradeLog.hintedSeq("{\"seq\": 12, \"pad\": \"\(String(repeating: "y", count: 600))\"}") == nil)
    }

    @Test func disposingTheFollowerEndsTheSession() async throws {
        let ended = ValuePromise(false)
        let following = followLog(
            from: { 0 },
            session: { _ in Signal<[Trade], any Error>.never() |> afterDisposed { ended.set(true) } },
            backoff: .exponential(initial: 0, maxDelay: 0)
        )
        .start()
        following.dispose()
        #expect(await (ended.get() |> filter { $0 } |> take(1)).first() == true)
    }

    // MARK: Resuming after Last-Event-ID

    /// A log whose history is what `history` says.
    struct ScriptedLog: TradeLog {
        var history: @Sendable (Int, Int) -> Signal<[Trade]?, MarketError>

        func publish(_ trade: Trade) -> Signal<Trade, MarketError> {
            return .fail(.closed)
        }

        func history(after: Int, through: Int) -> Signal<[Trade]?, MarketError> {
            return self.history(after, through)
        }
    }

    @Test func aResumedFeedSendsTheHistoryBeforeTradesThatCameWhileItWasRead() async throws {
        let market = Self.market(lastSeq: 2)
        let asked = Atomic<[Int]>(value: [])
        let log = ScriptedLog { after, through in
            asked.modify { _ in [after, through] }
            // A live trade comes while the history is read (from another thread, as a database answers):
            // a feed started after it begins after it on the market's queue, so the history arrives once
            // trade 3 is already waiting.
            return Signal { subscriber in
                let reading = MetaDisposable()
                Queue.concurrentDefaultQueue().async {
                    market.ingest([Self.trade(3)])
                    reading.set(
                        (market.feed() |> take(1)).start(completed: {
                            subscriber.putNext([Self.trade(1), Self.trade(2)])
                            subscriber.putCompletion()
                        }))
                }
                return reading
            }
        }
        var feed = resumableFeed(market.feed(), after: 0, log: log).values(bufferingPolicy: .unbounded).makeAsyncIterator()
        let events = try await Self.next(4, of: &feed)
        #expect(events == [.ready(lastSeq: 0), .trade(Self.trade(1)), .trade(Self.trade(2)), .trade(Self.trade(3))])
        #expect(asked.with { $0 } == [0, 2])
    }

    @Test func aClientAheadOfThisInstanceSkipsTheTradesItHasSeen() async throws {
        let market = Self.market(lastSeq: 2)
        let log = ScriptedLog { _, _ in .single([]) }
        var feed = resumableFeed(market.feed(), after: 4, log: log).values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(try await feed.next() == .ready(lastSeq: 4))
        market.ingest([3, 4, 5, 6].map(Self.trade))
        #expect(try await Self.next(2, of: &feed) == [.trade(Self.trade(5)), .trade(Self.trade(6))])
    }

    @Test func historyTheLogCannotSupplyIsAResyncAndNothingAfterItIsSkipped() async throws {
        // The client claims trade 9 on a market at 2 whose log does not know 9 (a server that restarted
        // alone numbers from 1 again): trades 3 and on must reach it, after resynced.
        let market = Self.market(lastSeq: 2)
        let log = ScriptedLog { _, _ in .single(nil) }
        var feed = resumableFeed(market.feed(), after: 9, log: log).values(bufferingPolicy: .unbounded).makeAsyncIterator()
        #expect(try await feed.next() == .resynced(lastSeq: 2))
        market.ingest([3, 4].map(Self.trade))
        #expect(try await Self.next(2, of: &feed) == [.trade(Self.trade(3)), .trade(Self.trade(4))])
    }

    @Test func resumingOverHTTPOnAServerThatRunsAlone() async throws {
        try await withServer { server in
            try await server.trade("ACME", price: 1)
            try await server.trade("ACME", price: 2)
            // Up to date: ready after the client's trade, then the next one.
            let current = server.stream("events", lastEventID: "2")
            #expect(try await current.next() == SSEEvent(name: "ready", data: "{\"lastSeq\":2}"))
            // Behind: a server on its own keeps no history, so the client is told to resynchronise.
            let behind = server.stream("events", lastEventID: "1")
            #expect(try await behind.next() == SSEEvent(name: "resynced", data: "{\"lastSeq\":2}"))
            try await server.trade("ACME", price: 3)
            #expect(try await current.next()?.data.contains("\"seq\":3") == true)
            #expect(try await behind.next()?.data.contains("\"seq\":3") == true)
            current.disconnect()
            behind.disconnect()
        }
    }

    /// The connection pool's errors, which come from a module PostgresNIO does not export, are told in
    /// words: their own text names the driver's internal types (seen by clients after an outage).
    @Test func thePoolsErrorsAreToldInWords() {
        struct ConnectionPoolError: Error, CustomStringConvertible {
            var description: String
        }
        let tripped = ConnectionPoolError(
            description: "ConnectionPoolError(base: _ConnectionPoolModule.ConnectionPoolError.Base.connectionCreationCircuitBreakerTripped)"
        )
        #expect(
            PostgresTradeLog.describe(tripped)
                == "database: no connection (after failing to connect, the pool waits before it tries again: up to a minute after a long outage)"
        )
        #expect(
            PostgresTradeLog.describe(ConnectionPoolError(description: "ConnectionPoolError(base: ….poolShutdown)"))
                == "database: the connection pool has shut down")
        struct Other: Error {}
        #expect(PostgresTradeLog.describe(Other()) == "database: Other()")
    }

    @Test func aDatabaseURLIsCheckedWhenTheArgumentsAreRead() throws {
        let good = try ServerConfiguration(arguments: ["--database", "postgres://signal@127.0.0.1:5433/trades"])
        #expect(good.database == "postgres://signal@127.0.0.1:5433/trades")
        let url = try DatabaseURL("postgresql://ann:secret@db.local/market")
        #expect([url.host, url.user, url.password, url.name] == ["db.local", "ann", "secret", "market"])
        #expect(url.port == 5432)
        // An IPv6 literal: its brackets are not part of the host name (they were looked up in DNS).
        let loopback = try DatabaseURL("postgres://signal@[::1]:5433/trades")
        #expect(loopback.host == "::1" && loopback.port == 5433)
        for bad in [
            "mysql://signal@127.0.0.1/trades", "postgres://127.0.0.1/trades", "postgres://signal@:5432/x", "postgres://signal@h:0/x",
            "nonsense",
            // Parameters were ignored: `sslmode=require` connected in plain text.
            "postgres://signal@127.0.0.1/trades?sslmode=require", "postgres://signal@127.0.0.1/trades?user=other",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ServerConfiguration(arguments: ["--database", bad]) }
        }
    }

    @Test(arguments: ["abc", "-1", "1.5", "99999999999999999999999"])
    func aLastEventIDThatIsNotATradeNumberIs400(_ value: String) async throws {
        try await withServer { server in
            let stream = server.stream("events", lastEventID: value)
            let status = try await stream.status.value
            #expect(status == 400)
            stream.disconnect()
        }
    }
}
