// A legacy module, compiled in Swift 5 mode (see Package.swift): callback and signal APIs with no
// concurrency annotations, as most existing signal code is written.
import SwiftSignalKit

/// A price for a symbol.
public struct Quote: Equatable {
    /// The ticker symbol.
    public let symbol: String
    /// The price, in cents.
    public let price: Int

    /// Makes a quote.
    public init(symbol: String, price: Int) {
        self.symbol = symbol
        self.price = price
    }
}

// Audited: two immutable `Sendable` properties. Swift 5 mode does not infer `Sendable` for a public
// type, so Swift 6 callers need this line to await a `Signal<Quote, _>` or send a quote to a task.
extension Quote: Sendable {}

/// A quote service with a callback API and a signal API; it answers on its own queue.
public final class QuoteClient {
    private let queue = Queue()
    private let prices: [String: Int]

    /// Makes a client that knows these prices.
    public init(prices: [String: Int]) {
        self.prices = prices
    }

    /// Calls `completion` with the quote, or nil for an unknown symbol, on the client's own queue, never
    /// on the caller's thread.
    public func fetch(_ symbol: String, completion: @escaping (Quote?) -> Void) {
        self.queue.async {
            completion(self.prices[symbol].map { Quote(symbol: symbol, price: $0) })
        }
    }

    /// The same, audited for Swift 6 callers: the completion may run on any thread, so it must not be
    /// isolated to an actor. Swift 6 code that passes a main-actor closure here gets a compile-time
    /// error instead of a crash at run time.
    public func fetchSendable(_ symbol: String, completion: @escaping @Sendable (Quote?) -> Void) {
        self.fetch(symbol, completion: completion)
    }

    /// The quote as a signal: one value and completion, or completion alone for an unknown symbol.
    public func quote(_ symbol: String) -> Signal<Quote, NoError> {
        return Signal { subscriber in
            self.fetch(symbol) { quote in
                if let quote {
                    subscriber.putNext(quote)
                }
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
    }
}

// Audited: `prices` never changes, and `queue` is thread-safe.
extension QuoteClient: @unchecked Sendable {}
