import SwiftSignalKit

/// The trading floor: trades come in, get a sequence number, update the quote cache and go out to
/// everyone listening on ``trades()`` and ``feed()``.
///
/// Everything that changes the sequence runs on the market's queue: publishing a trade, closing the
/// market and starting a feed. So a feed's ``FeedEvent/ready(lastSeq:)`` and
/// ``FeedEvent/closed(lastSeq:)`` sit exactly in their place among the trades.
public final class Market: Sendable {
    /// What a feed sends.
    public enum FeedEvent: Equatable, Sendable {
        /// The feed is in place: every trade with a larger sequence number follows, and no other.
        case ready(lastSeq: Int)
        /// A trade.
        case trade(Trade)
        /// The market closed after the trade numbered `lastSeq`; no trade follows. The feed completes.
        case closed(lastSeq: Int)
    }

    /// The largest trade size the market accepts, so that no total of sizes overflows.
    public static let maximumSize = 1_000_000_000
    /// The highest price the market accepts, so that no conversion or total of prices overflows.
    public static let maximumPrice = 1_000_000_000.0

    private let pipe = ValuePipe<FeedEvent>()
    /// Publishing, closing and starting feeds run on this queue, so sequence numbers go out in order.
    private let queue: Queue
    /// Written only on `queue`; read anywhere.
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

    /// Every trade published from now on, in sequence order. A hot signal: nothing is replayed. It never
    /// completes; see ``feed()`` for a stream that says where it starts and when the market closes.
    public func trades() -> Signal<Trade, NoError> {
        return self.pipe.signal()
            |> filter { if case .trade = $0 { return true } else { return false } }
            |> map { event in
                guard case .trade(let trade) = event else { preconditionFailure("filtered above") }
                return trade
            }
            |> tracked(self.counters.subscriptions)
    }

    /// `ready`, then every later trade in order, then `closed` when the market closes, then completion.
    ///
    /// The subscription starts on the market's queue: no trade can slip between the sequence number
    /// `ready` reports and the first trade sent.
    public func feed() -> Signal<FeedEvent, NoError> {
        let feed = Signal<FeedEvent, NoError> { subscriber in
            let source = MetaDisposable()
            self.queue.async {
                let state = self.state.with { $0 }
                subscriber.putNext(.ready(lastSeq: state.lastSeq))
                if state.closed {
                    subscriber.putNext(.closed(lastSeq: state.lastSeq))
                    subscriber.putCompletion()
                    return
                }
                source.set(
                    self.pipe.signal().start(next: { event in
                        subscriber.putNext(event)
                        if case .closed = event { subscriber.putCompletion() }
                    }))
            }
            return source
        }
        return feed |> tracked(self.counters.subscriptions)
    }

    /// The sequence number of the last trade published; 0 before the first.
    public var lastSeq: Int { self.state.with { $0.lastSeq } }

    /// Publishes `trade`: a cold signal that, when started, stamps the next sequence number, caches the
    /// price, sends the trade to every ``trades()`` and ``feed()`` subscriber and then sends the stamped
    /// trade.
    ///
    /// Fails with ``MarketError/invalidTrade(_:)`` for a price outside (0, ``maximumPrice``] or a size
    /// outside 1...``maximumSize``, ``MarketError/unknownSymbol(_:)`` for a symbol the exchange does not
    /// list and ``MarketError/closed`` once ``close()`` has run.
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
                let state = self.state.modify { state in
                    guard !state.closed else { return state }
                    var state = state
                    state.lastSeq += 1
                    return state
                }
                if state.closed {
                    subscriber.putError(.closed)
                    return
                }
                var stamped = trade
                stamped.seq = state.lastSeq
                self.exchange.traded(trade.symbol, at: trade.price, seq: stamped.seq)
                self.store.store(Quote(symbol: trade.symbol, price: trade.price, source: .exchange, asOf: stamped.seq))
                self.pipe.putNext(.trade(stamped))
                subscriber.putNext(stamped)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
    }

    /// Sends the last trade's sequence number once the market has closed, then completes.
    public func whenClosed() -> Signal<Int, NoError> {
        return self.feed()
            |> filter { if case .closed = $0 { return true } else { return false } }
            |> map { event in
                guard case .closed(let lastSeq) = event else { preconditionFailure("filtered above") }
                return lastSeq
            }
            |> take(1)
    }

    /// Closes the market after the trades already queued: later ones fail with ``MarketError/closed``,
    /// and every feed gets ``FeedEvent/closed(lastSeq:)`` and completes. Calling it again does nothing.
    public func close() {
        self.queue.async {
            var closing = false
            let state = self.state.modify { state in
                var state = state
                closing = !state.closed
                state.closed = true
                return state
            }
            if closing { self.pipe.putNext(.closed(lastSeq: state.lastSeq)) }
        }
    }

    private static func problem(with trade: Trade) -> String? {
        if !(trade.price > 0 && trade.price <= Market.maximumPrice) {
            return "price must be a positive number up to \(Int(Market.maximumPrice)), got \(trade.price)"
        }
        if !(1...Market.maximumSize).contains(trade.size) {
            return "size must be a whole number from 1 to \(Market.maximumSize), got \(trade.size)"
        }
        return nil
    }
}
