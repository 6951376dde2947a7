import SwiftSignalKit

/// A price for one symbol, as the market knows it.
public struct Quote: Equatable, Sendable, Codable {
    /// Where a quote came from: the local cache answers at once, the exchange after its latency.
    public enum Source: String, Equatable, Sendable, Codable {
        case cache
        case exchange
    }

    /// The ticker symbol, upper case.
    public var symbol: String
    /// The price in ``currency``.
    public var price: Double
    /// An ISO 4217 code; the exchange quotes in USD.
    public var currency: String
    /// Where this quote came from.
    public var source: Source
    /// The sequence number of the trade that set this price; 0 for the listing price. Of two quotes of a
    /// symbol, the one with the larger number is the newer.
    public var asOf: Int

    /// Creates a quote.
    public init(symbol: String, price: Double, currency: String = "USD", source: Source, asOf: Int = 0) {
        self.symbol = symbol
        self.price = price
        self.currency = currency
        self.source = source
        self.asOf = asOf
    }
}

/// A trade reported to the market. The market stamps it with a sequence number when it publishes it.
public struct Trade: Equatable, Sendable, Codable {
    /// The ticker symbol, upper case.
    public var symbol: String
    /// The price paid, in USD.
    public var price: Double
    /// How many shares changed hands.
    public var size: Int
    /// The market's sequence number: 1 for the first trade published, then one more for each trade.
    /// Zero until published.
    public var seq: Int

    /// Creates a trade that is not published yet.
    public init(symbol: String, price: Double, size: Int, seq: Int = 0) {
        self.symbol = symbol
        self.price = price
        self.size = size
        self.seq = seq
    }
}

/// What can go wrong in the domain layer. Each case says what the caller did or what failed, so the web
/// layer can map it to a status code.
public enum MarketError: Error, Equatable, Sendable {
    /// The exchange lists no such symbol.
    case unknownSymbol(String)
    /// The exchange did not answer, even after the retries.
    case exchangeUnavailable(String)
    /// A trade that no market would accept (a price or size that is not positive and finite).
    case invalidTrade(String)
    /// The market is shutting down and accepts no more trades.
    case closed
    /// No answer within the caller's deadline, in seconds.
    case timedOut(Double)
    /// The rates service has no rate for this currency.
    case unsupportedCurrency(String)
    /// The shared trade log (the database) did not take or answer the request; what it said.
    case logUnavailable(String)

    /// Whether asking again can help: only an unavailable exchange is worth retrying.
    public var isTransient: Bool {
        switch self {
        case .exchangeUnavailable: return true
        case .unknownSymbol, .invalidTrade, .closed, .timedOut, .unsupportedCurrency, .logUnavailable: return false
        }
    }
}
