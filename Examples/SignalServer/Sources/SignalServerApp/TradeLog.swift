import MarketDomain
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Where trades are numbered and kept: the market itself when the server runs alone
/// (``LocalTradeLog``), or a database that several instances share (``PostgresTradeLog``).
public protocol TradeLog: Sendable {
    /// Numbers `trade` and sends it out; sends the numbered trade once every instance can receive it,
    /// then completes.
    func publish(_ trade: Trade) -> Signal<Trade, MarketError>

    /// The trades numbered from `after + 1` through `through`, in order, for a client that resumes a
    /// stream after trade `after` on an instance whose market is at `through`.
    ///
    /// Sends `[]` when nothing is missing (`after` ≥ `through`, and `after` is a trade the log has
    /// numbered); sends nil when the log cannot supply every one of those trades (it does not keep them,
    /// there are too many, or `after` is a number the log never gave out). Then completes. Fails with
    /// ``MarketError/logUnavailable(_:)`` when the log cannot be read now: asking again later can help.
    func history(after: Int, through: Int) -> Signal<[Trade]?, MarketError>
}

/// The trade log of a server that runs alone: the market numbers trades, and keeps none of them for
/// resuming streams.
public struct LocalTradeLog: TradeLog {
    let market: Market

    /// The log of `market`.
    public init(market: Market) {
        self.market = market
    }

    /// ``Market/publish(_:)``.
    public func publish(_ trade: Trade) -> Signal<Trade, MarketError> {
        return self.market.publish(trade)
    }

    /// `[]` when `after` is the market's last trade; nil otherwise: earlier trades are not kept, and a
    /// later number comes from before a restart, when numbering began again at 1.
    public func history(after: Int, through: Int) -> Signal<[Trade]?, MarketError> {
        return .single(after == through ? [] : nil)
    }
}

/// A session that ended without an error: the connection closed. Followed like a failure: reconnect.
public struct LogSessionEnded: Error {}

/// The trades of a shared log, for as long as the result is subscribed, across lost connections.
///
/// Each attempt subscribes to `session(from())`: a connection that listens for new trades and sends,
/// in log order, the trades after the number it was given, then those it hears about. When the session
/// fails or ends (the database restarted, the connection dropped), the attempt ends, disposing the
/// session, and a new one starts after a wait that `backoff` draws. Since each attempt starts from
/// `from()`, read at that moment, the trades missed while disconnected come with the next session.
/// Trades sent twice are the receiver's to drop by number, as ``Market/ingest(_:)`` does.
///
/// - Parameters:
///   - from: The last trade the receiver has.
///   - session: One connection's batches of trades, after the number given.
///   - backoff: The waits between attempts.
///   - scheduler: Where the waits are measured.
/// - Returns: Batches of trades in log order; never fails or completes; disposing ends the current
///   session and stops.
public func followLog(
    from: @escaping @Sendable () -> Int, session: @escaping @Sendable (Int) -> Signal<[Trade], any Error>, backoff: RetryBackoff,
    scheduler: some SignalScheduler = Queue.concurrentDefaultQueue()
) -> Signal<[Trade], NoError> {
    // A session that ends is a connection lost: fail, so that the retry reconnects. `deferred` reads
    // `from()` when each attempt starts.
    let attempt = deferred { session(from()) |> then(.fail(LogSessionEnded())) }
    return attempt |> retry(backoff, maxAttempts: .max, scheduler: scheduler) |> `catch` { _ in .never() }
}
