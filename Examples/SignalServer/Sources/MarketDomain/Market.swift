import SwiftSignalKit

/// The trading floor: trades come in, get a sequence number, update the quote cache and go out to
/// everyone listening on ``trades()``.
public final class Market: Sendable {
    private let pipe = ValuePipe<Trade>()
    /// Publishing runs on this queue, so sequence numbers go out in order.
    private let queue: Queue
    private let state = Atomic(value: State())
    private let store: QuoteStore
    private let exchange: SimulatedExchange
    private let counters: LiveCounters

    private struct State {
        var lastSeq = 0
        var closed = false
    }

    /// Creates a market that caches trade prices in `store` and accepts trades for what `exchange` lists.
    public init(store: QuoteStore, exchange: SimulatedExchange, counters: LiveCounters, queue: Queue = Queue(name: "market")) {
        self.store = store
        self.exchange = exchange
        self.counters = counters
        self.queue = queue
    }

    /// Every trade published from now on, in sequence order. A hot signal: nothing is replayed.
    public func trades() -> Signal<Trade, NoError> {
        return self.pipe.signal() |> tracked(self.counters.subscriptions)
    }

    /// The sequence number of the last trade published; 0 before the first.
    public var lastSeq: Int { self.state.with { $0.lastSeq } }

    /// Publishes `trade`: a cold signal that, when started, stamps the next sequence number, caches the
    /// price, sends the trade to every ``trades()`` subscriber and then sends the stamped trade.
    ///
    /// Fails with ``MarketError/invalidTrade(_:)`` for a price or size that is not positive,
    /// ``MarketError/unknownSymbol(_:)`` for a symbol the exchange does not list and
    /// ``MarketError/closed`` once ``close()`` has been called.
    public func publish(_ trade: Trade) -> Signal<Trade, MarketError> {
        return Signal { subscriber in
            if let problem = Market.problem(with: trade) {
                subscriber.putError(.invalidTrade(problem))
                return EmptyDisposable
            }
            guard self.exchange.lists(trade.symbol) else {
                subscriber.putError(.unknownSymbol(trade.symbol))
                return EmptyDisposable
            }
            self.queue.async {
                let seq: Int? = self.state.with { state in state.closed ? nil : state.lastSeq + 1 }
                guard let seq else {
                    subscriber.putError(.closed)
                    return
                }
                // Only this queue writes `lastSeq`, so the number read above is still the next one.
                self.state.modify { state in
                    var state = state
                    state.lastSeq = seq
                    return state
                }
                var stamped = trade
                stamped.seq = seq
                self.store.store(Quote(symbol: trade.symbol, price: trade.price, source: .exchange))
                self.pipe.putNext(stamped)
                subscriber.putNext(stamped)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
    }

    /// Stops accepting trades; `publish` fails with ``MarketError/closed`` from now on.
    public func close() {
        self.state.modify { state in
            var state = state
            state.closed = true
            return state
        }
    }

    private static func problem(with trade: Trade) -> String? {
        if !(trade.price.isFinite && trade.price > 0) { return "price must be a positive number, got \(trade.price)" }
        if trade.size <= 0 { return "size must be at least 1, got \(trade.size)" }
        return nil
    }
}
