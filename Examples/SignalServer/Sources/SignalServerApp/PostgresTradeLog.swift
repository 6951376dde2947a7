import Foundation
import Logging
import MarketDomain
import PostgresNIO
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// The trade log that several server instances share: a PostgreSQL table numbers the trades, and
/// `LISTEN`/`NOTIFY` on one channel tells every instance about each new one.
///
/// Publishing calls the `publish_trade` function (see ``schema``), which in one transaction takes the
/// table's lock, numbers the trade one past the last, inserts it and notifies the channel. The lock makes
/// trades commit in number order, so notifications (sent at commit) arrive in number order as well, and
/// numbers have no holes.
///
/// Each instance follows the log with ``follow()``: a dedicated connection listens on the channel, reads
/// the trades it may have missed, then reads the new ones each time it is notified, and hands them to
/// the market with ``Market/ingest(_:)``. When the database restarts or the connection drops, it
/// reconnects with backoff and reads what it missed.
public final class PostgresTradeLog: TradeLog {
    /// The channel the log notifies.
    public static let channel = "trades"

    /// The table and the function the log needs, each created if missing: one statement each.
    public static let schema = [
        """
        CREATE TABLE IF NOT EXISTS trades (
            seq bigint PRIMARY KEY,
            symbol text NOT NULL,
            price double precision NOT NULL CHECK (price > 0 AND price <= 1000000000),
            size bigint NOT NULL CHECK (size BETWEEN 1 AND 1000000000),
            recorded_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE OR REPLACE FUNCTION publish_trade(p_symbol text, p_price double precision, p_size bigint) RETURNS bigint AS $$
        DECLARE
            next_seq bigint;
        BEGIN
            -- One publisher at a time (readers are not blocked), so trades commit, and are notified, in
            -- number order, and a failed insert leaves no hole.
            LOCK TABLE trades IN SHARE ROW EXCLUSIVE MODE;
            SELECT coalesce(max(seq), 0) + 1 INTO next_seq FROM trades;
            INSERT INTO trades (seq, symbol, price, size) VALUES (next_seq, p_symbol, p_price, p_size);
            PERFORM pg_notify('trades',
                json_build_object('seq', next_seq, 'symbol', p_symbol, 'price', p_price, 'size', p_size)::text);
            RETURN next_seq;
        END
        $$ LANGUAGE plpgsql
        """,
    ]

    /// The most trades a resuming stream, or an instance that reconnects, reads back; beyond that it is
    /// told to resynchronise instead.
    public let maximumCatchUp: Int
    /// Seconds a resuming stream waits for its history before it ends with `unavailable`.
    public let historyTimeout: Double

    private let client: PostgresClient
    private let exportClient: PostgresClient
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let market: Market
    private let backoff: RetryBackoff
    /// Sessions opened by ``follow()``, the first included; `/metrics` shows it.
    let sessions = Atomic(value: 0)
    private let connectionIDs = Atomic(value: 0)

    /// A database ready for the log: the schema is in place, and its last trade is known.
    public struct Database: Sendable {
        let url: DatabaseURL
        /// The number of the last trade in the table when it was prepared: the number a new instance's
        /// market starts after.
        public let lastSeq: Int
    }

    /// Connects to the database at `url`, creates the schema if missing, and reads the last trade's
    /// number.
    ///
    /// - Parameter url: `postgres://user[:password]@host[:port]/database`; TLS is not used (loopback).
    /// - Throws: ``DatabaseURLError`` for a URL it cannot use; the driver's error when the database does
    ///   not answer.
    public static func prepare(url: String, logger: Logger) async throws -> Database {
        let database = try DatabaseURL(url)
        // Under an advisory lock, so that instances starting together do not create the schema at once.
        let connection = try await PostgresConnection.connect(configuration: database.connectionConfiguration, id: 0, logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_lock(7201)", logger: logger)
            for statement in Self.schema { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            try await connection.query("SELECT pg_advisory_unlock(7201)", logger: logger)
            let lastSeq = try await Self.number(connection.query("SELECT coalesce(max(seq), 0) FROM trades", logger: logger)) ?? 0
            try? await connection.close().get()
            return Database(url: database, lastSeq: lastSeq)
        } catch {
            try? await connection.close().get()
            throw error
        }
    }

    /// The log of `database`, feeding `market` once ``follow()`` runs.
    ///
    /// Run ``pool`` (a `Service`) in the server's service group: publishing and reading history go
    /// through it.
    ///
    /// - Parameters:
    ///   - database: A prepared database.
    ///   - market: The market to feed; made to start after `database.lastSeq`.
    ///   - backoff: The waits between attempts to reconnect the listening connection.
    ///   - maximumCatchUp: See ``maximumCatchUp``; at least 1.
    ///   - historyTimeout: See ``historyTimeout``.
    ///   - exportConnections: The size of ``exportPool``; at least 1.
    ///   - logger: Where the driver logs.
    public init(
        database: Database, market: Market, backoff: RetryBackoff = .exponential(initial: 0.05, maxDelay: 2), maximumCatchUp: Int = 10_000,
        historyTimeout: Double = 5, exportConnections: Int = 8, logger: Logger
    ) {
        precondition(maximumCatchUp >= 1, "PostgresTradeLog: maximumCatchUp must be at least 1, got \(maximumCatchUp)")
        precondition(exportConnections >= 1, "PostgresTradeLog: exportConnections must be at least 1, got \(exportConnections)")
        var clientConfiguration = PostgresClient.Configuration(
            host: database.url.host, port: database.url.port, username: database.url.user, password: database.url.password,
            database: database.url.name, tls: .disable)
        clientConfiguration.options.maximumConnections = 8
        self.client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        clientConfiguration.options.maximumConnections = exportConnections
        self.exportClient = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        self.configuration = database.url.connectionConfiguration
        self.market = market
        self.backoff = backoff
        self.maximumCatchUp = maximumCatchUp
        self.historyTimeout = historyTimeout
        self.logger = logger
    }

    /// The connection pool for publishing and history; a `Service` to run in the service group.
    public var pool: PostgresClient { self.client }

    /// The connection pool for `/export`, apart from ``pool``: an export holds its connection for as
    /// long as its client takes to read, so exports that shared ``pool`` would, once enough slow clients
    /// read at once, leave publishing and the trade history no connection. A `Service` to run in the
    /// service group.
    public var exportPool: PostgresClient { self.exportClient }

    /// Numbers `trade` in the database, which notifies every instance; sends the numbered trade.
    ///
    /// Fails as ``Market/check(_:)`` does for a trade the market would refuse, and with
    /// ``MarketError/logUnavailable(_:)`` when the database does not take it. A failure after the
    /// database received the call (the connection dropped before its answer) leaves it unknown whether
    /// the trade was recorded.
    public func publish(_ trade: Trade) -> Signal<Trade, MarketError> {
        let client = self.client
        let market = self.market
        let logger = self.logger
        return Signal(operation: { () async throws(MarketError) -> Trade in
            try market.check(trade)
            let seq: Int?
            do {
                seq = try await Self.number(
                    client.query("SELECT publish_trade(\(trade.symbol), \(trade.price), \(trade.size))", logger: logger))
            } catch {
                throw .logUnavailable(Self.describe(error))
            }
            guard let seq else { throw .logUnavailable("publish_trade returned no row") }
            var stamped = trade
            stamped.seq = seq
            return stamped
        })
    }

    /// The trades after `after` through `through`, read from the table; nil when there are more than
    /// ``maximumCatchUp`` or some are missing, or when `after` is past the table's last trade. Fails with
    /// ``MarketError/logUnavailable(_:)`` when the database does not answer (it may be restarting) within
    /// ``historyTimeout`` seconds.
    public func history(after: Int, through: Int) -> Signal<[Trade]?, MarketError> {
        // The client is where this instance is: nothing to read, so nothing to wait for in an outage.
        if after == through { return .single([]) }
        let client = self.client
        let logger = self.logger
        let maximum = self.maximumCatchUp
        let seconds = self.historyTimeout
        let read = Signal(operation: { () async throws(MarketError) -> [Trade]? in
            do {
                if after >= through {
                    // The client saw trades this instance has not applied yet; they exist if the table has them.
                    let last = try await Self.number(client.query("SELECT coalesce(max(seq), 0) FROM trades", logger: logger)) ?? 0
                    return after <= last ? [] : nil
                }
                guard after >= 0, through - after <= maximum else { return nil }
                let trades = Self.valid(
                    try await Self.rows(
                        client.query(
                            "SELECT seq, symbol, price, size FROM trades WHERE seq > \(after) AND seq <= \(through) ORDER BY seq",
                            logger: logger)))
                return trades.count == through - after ? trades : nil
            } catch {
                throw .logUnavailable(Self.describe(error))
            }
        })
        // A stream waits for its history before any live trade: a read that hangs (a pool connection
        // lost in a restart) must end the stream instead, so the client resumes elsewhere or later.
        return read
            |> timeout(seconds, queue: Queue.concurrentDefaultQueue(), alternate: .fail(.logUnavailable("no answer within \(seconds) s")))
    }

    /// Follows the log into the market until the result is disposed: listens, reads what the market
    /// is missing, ingests both, and on a lost connection reconnects with backoff and reads again.
    public func follow() -> any Disposable {
        let market = self.market
        return followLog(from: { market.lastSeq }, session: { [self] lastSeq in self.session(after: lastSeq) }, backoff: self.backoff)
            .start(next: { trades in market.ingest(trades) })
    }

    /// One connection's trades: connects, listens, sends the newest trades after `lastSeq` (at most
    /// ``maximumCatchUp``), then, each time a notification says there are new ones, reads and sends
    /// them, until the connection fails.
    ///
    /// A notification is only a wake-up: the trades come from the table, never from the payload. Any
    /// role that can connect can `NOTIFY`, and a forged payload must not put a trade into the feed that
    /// the table does not have. The payload's number only saves a read when it is not past the last
    /// trade sent.
    ///
    /// The notifications become a signal through the async-body bridge: postgres-nio's sequence of
    /// notifications is only valid inside `listen(on:consume:)`, so the body runs for the connection's
    /// life. Disposing cancels it, which ends the iteration and closes the connection.
    private func session(after lastSeq: Int) -> Signal<[Trade], any Error> {
        return Signal { [self] send throws(any Error) in
            let id = self.connectionIDs.modify { $0 + 1 }
            let connection = try await PostgresConnection.connect(configuration: self.configuration, id: id, logger: self.logger)
            do {
                try await connection.listen(on: Self.channel) { notifications in
                    // Listening already: a trade committed from now on is notified, so reading the table
                    // now leaves no gap. The newest ones if too many are missing: the market resyncs.
                    let backlog = try await Self.rows(
                        connection.query(
                            """
                            SELECT seq, symbol, price, size FROM (
                                SELECT seq, symbol, price, size FROM trades WHERE seq > \(lastSeq) ORDER BY seq DESC LIMIT \(self.maximumCatchUp)
                            ) AS newest ORDER BY seq
                            """, logger: self.logger))
                    self.sessions.modify { $0 + 1 }
                    send(Self.valid(backlog))
                    // The last row read, valid or not: reads go on after it.
                    let read = Atomic(value: backlog.last?.seq ?? lastSeq)
                    // Notifications only wake the reader. Those that come while it reads fold into one
                    // more read, so a flood of them (forged, say) costs a read per read's time, not one
                    // each, and the driver's buffer drains as fast as payloads are looked at.
                    let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            defer { wake.finish() }
                            for try await notification in notifications {
                                if let hinted = Self.hintedSeq(notification.payload), hinted <= read.with({ $0 }) { continue }
                                wake.yield()
                            }
                        }
                        for await _ in wakes {
                            // Page by page until the table has no more: one transaction can add more
                            // rows than a page, and the notifications it sent may all be folded already.
                            while true {
                                let after = read.with { $0 }
                                let page = try await Self.rows(
                                    connection.query(
                                        "SELECT seq, symbol, price, size FROM trades WHERE seq > \(after) ORDER BY seq LIMIT \(self.maximumCatchUp)",
                                        logger: self.logger))
                                guard let newest = page.last else { break }
                                _ = read.swap(newest.seq)
                                let trades = Self.valid(page)
                                if !trades.isEmpty { send(trades) }
                                if page.count < self.maximumCatchUp { break }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            } catch {
                try? await connection.close().get()
                throw error
            }
            try? await connection.close().get()
        }
    }

    /// The number a notification's payload names, if it names one. A payload longer than any
    /// `publish_trade` sends is not decoded: it only wakes the reader.
    static func hintedSeq(_ payload: String) -> Int? {
        guard payload.utf8.count <= 512 else { return nil }
        struct Hint: Decodable { var seq: Int }
        return try? JSONDecoder().decode(Hint.self, from: Data(payload.utf8)).seq
    }

    /// The trades in `rows` (seq, symbol, price, size), as they are.
    private static func rows(_ rows: PostgresRowSequence) async throws -> [Trade] {
        var trades: [Trade] = []
        for try await (seq, symbol, price, size) in rows.decode((Int, String, Double, Int).self) {
            trades.append(Trade(symbol: symbol, price: price, size: size, seq: seq))
        }
        return trades
    }

    /// `trades` without the rows no market accepts (a NaN price inserted by hand, say, into a table
    /// created before its checks): a row left out is a missing trade, which the market and a resuming
    /// stream announce with `resynced`.
    private static func valid(_ trades: [Trade]) -> [Trade] {
        return trades.filter { Market.problem(with: $0) == nil }
    }

    /// The first column of the first row of `rows`, as a number; nil without a row.
    private static func number(_ rows: PostgresRowSequence) async throws -> Int? {
        for try await value in rows.decode(Int.self) { return value }
        return nil
    }

    /// A driver error in one line: PostgreSQL's message when there is one, else what the connection
    /// met (refused, unknown host). The driver's own description hides both.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "database: \(message)" }
            if let underlying = error.underlying { return "database: \(error.code): \(underlying)" }
            return "database: \(error.code)"
        }
        // The pool's errors come from a module PostgresNIO does not export: told apart by their text,
        // which otherwise names the driver's internal types.
        let text = String(describing: error)
        if String(describing: type(of: error)) == "ConnectionPoolError" {
            if text.contains("connectionCreationCircuitBreakerTripped") {
                return
                    "database: no connection (after failing to connect, the pool waits before it tries again: up to a minute after a long outage)"
            }
            if text.contains("poolShutdown") { return "database: the connection pool has shut down" }
            if text.contains("requestCancelled") { return "database: the request for a connection was cancelled" }
        }
        return "database: \(text)"
    }
}

/// A database URL the log cannot use.
public struct DatabaseURLError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public var description: String
}

/// `postgres://user[:password]@host[:port]/database`, parsed; the host may be an IPv6 address in brackets.
/// Parameters (`?sslmode=...`) are refused: TLS is not used.
struct DatabaseURL {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var name: String?

    init(_ text: String) throws(DatabaseURLError) {
        guard let components = URLComponents(string: text), components.scheme == "postgres" || components.scheme == "postgresql" else {
            // Not echoed: a URL can hold a password.
            throw DatabaseURLError(description: "a database URL looks like postgres://user@127.0.0.1:5432/database")
        }
        guard let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty else {
            throw DatabaseURLError(description: "the database URL needs a user and a host, as in postgres://user@127.0.0.1:5432/database")
        }
        // Refused rather than ignored: `?sslmode=require` left out would connect in plain text.
        if components.query != nil || components.fragment != nil {
            let names = (components.queryItems ?? []).map(\.name).joined(separator: ", ")
            throw DatabaseURLError(
                description: "the database URL takes no parameters\(names.isEmpty ? "" : " (got \(names))"): the example "
                    + "connects without TLS, to a database on this machine")
        }
        self.port = components.port ?? 5432
        guard (1...65535).contains(self.port) else {
            throw DatabaseURLError(description: "the database port must be 1 to 65535, got \(self.port)")
        }
        // An IPv6 address comes in brackets, which name no host.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.user = user
        self.password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.name = path.isEmpty ? nil : path
    }

    var connectionConfiguration: PostgresConnection.Configuration {
        return PostgresConnection.Configuration(
            host: self.host, port: self.port, username: self.user, password: self.password, database: self.name, tls: .disable)
    }
}
