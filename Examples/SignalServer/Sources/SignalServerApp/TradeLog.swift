import Foundation
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

/// What one connection to a shared trade log sends, as ``followLog(from:session:backoff:scheduler:)``
/// uses it: first the backlog, then a notification for each new trade.
public enum LogMessage: Sendable, Equatable {
    /// The trades after the number the session was opened from, in order, read once the session was
    /// already listening for new ones: together with the notifications that follow they leave no gap.
    case backlog([Trade])
    /// The payload of a notification of a new trade: a ``TradeNotification`` as JSON.
    case notification(String)
}

/// A notification's payload: one numbered trade, as JSON.
public struct TradeNotification: Codable, Equatable, Sendable {
    /// The log's sequence number.
    public var seq: Int
    /// The symbol.
    public var symbol: String
    /// The price.
    public var price: Double
    /// The size.
    public var size: Int

    /// The trade it announces.
    public var trade: Trade { Trade(symbol: self.symbol, price: self.price, size: self.size, seq: self.seq) }
}

/// A notification that is not a ``TradeNotification``.
public struct MalformedNotification: Error, CustomStringConvertible {
    /// The payload, cut to 200 characters.
    public var payload: String
    /// What the error says.
    public var description: String { "a trade notification must be JSON with seq, symbol, price and size, got \(self.payload)" }
}

/// A session that ended without an error: the connection closed. Followed like a failure: reconnect.
public struct LogSessionEnded: Error {}

/// The trades of a shared log, for as long as the result is subscribed, across lost connections.
///
/// Each attempt subscribes to `session(from())`: a connection that listens for new trades, then sends
/// the backlog after the number it was given, then each notification. The result sends the backlog,
/// then each notified trade. When the session fails or ends (the database restarted, the connection
/// dropped, a payload was malformed), the attempt ends, disposing the session, and a new one starts
/// after a wait that `backoff` draws. Since each attempt starts from `from()`, read at that moment, the
/// trades missed while disconnected come in the next backlog. Trades sent twice (in a backlog and as
/// notifications) are the receiver's to drop by number, as ``Market/ingest(_:)`` does.
///
/// - Parameters:
///   - from: The last trade the receiver has.
///   - session: One connection's messages, from the number given.
///   - backoff: The waits between attempts.
///   - scheduler: Where the waits are measured.
/// - Returns: Batches of trades in log order; never fails or completes; disposing ends the current
///   session and stops.
public func followLog(
    from: @escaping @Sendable () -> Int, session: @escaping @Sendable (Int) -> Signal<LogMessage, any Error>, backoff: RetryBackoff,
    scheduler: some SignalScheduler = Queue.concurrentDefaultQueue()
) -> Signal<[Trade], NoError> {
    let decoder = JSONDecoder()
    let attempt =
        Signal<LogMessage, any Error> { subscriber in
            // A session that ends is a connection lost: fail, so that the retry below reconnects.
            return (session(from()) |> then(.fail(LogSessionEnded())))
                .start(
                    next: { subscriber.putNext($0) }, error: { subscriber.putError($0) }, completed: { subscriber.putCompletion() })
        }
        |> mapToSignal { message -> Signal<[Trade], any Error> in
            switch message {
            case .backlog(let trades):
                return .single(trades)
            case .notification(let payload):
                guard let notification = try? decoder.decode(TradeNotification.self, from: Data(payload.utf8)) else {
                    return .fail(MalformedNotification(payload: String(payload.prefix(200))))
                }
                return .single([notification.trade])
            }
        }
    return attempt |> retry(backoff, maxAttempts: .max, scheduler: scheduler) |> `catch` { _ in .never() }
}
