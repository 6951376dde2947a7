// Swift 6 code next to the Swift 5-mode `LegacyQuotes` module: it awaits the legacy signals, and it
// gives legacy callers a signal of its own async work.
import LegacyQuotes
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// What a lookup found, with a timeout and a cancellation told apart.
public nonisolated enum QuoteLookup: Equatable, Sendable {
    /// The quote.
    case found(Quote)
    /// The client does not know the symbol.
    case unknownSymbol
    /// The client did not answer in time.
    case timedOut
    /// The caller went away first.
    case cancelled
}

/// Async lookups over the legacy client, and a signal of them for legacy callers.
public nonisolated struct QuoteDesk: Sendable {
    private let client: QuoteClient
    private let timeout: Duration

    /// Makes a desk over `client` that waits at most `timeout` for an answer.
    public init(client: QuoteClient, timeout: Duration = .seconds(2)) {
        self.client = client
        self.timeout = timeout
    }

    /// Async callers: the legacy signal's first value, at most the desk's timeout later.
    public func lookUp(_ symbol: String) async -> QuoteLookup {
        switch await self.client.quote(symbol).first(within: self.timeout) {
        case .value(let quote): return .found(quote)
        case .empty: return .unknownSymbol
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        }
    }

    /// Legacy callers: the async lookup as a signal, which Swift 5-mode code starts as it starts any.
    public func lookUpSignal(_ symbol: String) -> Signal<QuoteLookup, NoError> {
        return Signal(operation: { await self.lookUp(symbol) })
    }
}
