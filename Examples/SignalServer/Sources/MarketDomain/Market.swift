import SwiftSignalKit

/// The trading floor: trades come in, get a sequence number, update the quote cache and go out to
/// everyone listening on ``trades()`` and ``feed()``.
///
/// Trades come in one of two ways. A market on its own numbers them itself: ``publish(_:)``. A market
/// that is one of several instances sharing a log (a database) takes trades the log numbered:
/// ``ingest(_:)``. Use one of the two on a market, not both.
///
/// Everything that changes the sequence runs on the market's queue: publishing or ingesting a trade,
/// closing the market and starting a feed. So a feed's ``FeedEvent/ready(lastSeq:)``,
/// ``FeedEvent/resynced(lastSeq:)`` and ``FeedEvent/closed(lastSeq:)`` sit exactly in their place among
/// the trades.
public final class Market: Sendable {
    /// What a feed sends.
    public enum FeedEvent: Equatable, Sendable {
        /// The feed is in place: every trade with a larger sequence number follows, and no other.
        case ready(lastSeq: Int)
        /// A trade.
        case trade(Trade)
        /// The trades after the last one sent and up to `lastSeq` will not come: the log they came from
        /// could not supply them. The feed goes on with the trades after `lastSeq`; a subscriber that
        /// keeps state built from trades must rebuild it.
        case resynced(lastSeq: Int)
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
    private let state: Atomic<State>
    private let store: QuoteStore
    private let exchange: SimulatedExchange
    private let counters: LiveCounters

    private struct State {
        var lastSeq = 0
        var closed = false
    }

    /// Creates a market that caches trade prices in `store` and accepts trades for what `exchange` lists.
    ///
    /// - Parameter lastSeq: The sequence number the market starts after: 0 for a market on its own, the
    ///   log's last trade for one that ingests a shared log's trades from now on.
    public init(
        store: QuoteStore, exchange: SimulatedExchange, counters: LiveCounters, queue: Queue = Queue(name: "market"), lastSeq: Int = 0
    ) {
        precondition(lastSeq >= 0, "Market: lastSeq must be 0 or more, got \(lastSeq)")
        self.store = store
        self.exchange = exchange
        self.counters = counters
        self.queue = queue
        self.state = Atomic(value: State(lastSeq: lastSeq))
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
            do throws(MarketError) {
                try self.check(trade)
            } catch {
                subscriber.putError(error)
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
                self.apply(stamped)
                subscriber.putNext(stamped)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
    }

    /// Checks `trade` as ``publish(_:)`` does, without publishing it: for a trade that a shared log will
    /// number.
    ///
    /// - Throws: ``MarketError/invalidTrade(_:)``, ``MarketError/unknownSymbol(_:)`` or
    ///   ``MarketError/closed``, as ``publish(_:)`` fails.
    public func check(_ trade: Trade) throws(MarketError) {
        if let problem = Market.problem(with: trade) { throw .invalidTrade(problem) }
        guard self.exchange.lists(trade.symbol) else { throw .unknownSymbol(trade.symbol) }
        if self.state.with({ $0.closed }) { throw .closed }
    }

    /// Takes trades that a shared log numbered, in the log's order: each trade after ``lastSeq`` updates
    /// the quote cache and goes out to every ``trades()`` and ``feed()`` subscriber, as a published one
    /// does.
    ///
    /// A trade at or below ``lastSeq`` is a repeat (a log that reconnected sends what it may have sent
    /// before) and is dropped. A trade no market accepts (see ``problem(with:)``: a NaN price written to
    /// the log by hand, say) is dropped as if it were missing. A trade further on than the next number
    /// means the trades between are lost: the feed sends ``FeedEvent/resynced(lastSeq:)`` before it, so
    /// no subscriber sees a gap without being told. Once the market is closed, trades are dropped.
    ///
    /// Runs on the market's queue, after what is queued there already; returns at once.
    public func ingest(_ trades: [Trade]) {
        guard !trades.isEmpty else { return }
        self.queue.async {
            for trade in trades {
                let state = self.state.with { $0 }
                guard !state.closed, trade.seq > state.lastSeq, Market.problem(with: trade) == nil else { continue }
                if trade.seq > state.lastSeq + 1 { self.pipe.putNext(.resynced(lastSeq: trade.seq - 1)) }
                self.state.modify { state in
                    var state = state
                    state.lastSeq = trade.seq
                    return state
                }
                self.apply(trade)
            }
        }
    }

    /// Caches the price of `trade`, which has its sequence number, and sends it to every subscriber. On
    /// the queue.
    private func apply(_ trade: Trade) {
        self.exchange.traded(trade.symbol, at: trade.price, seq: trade.seq)
        self.store.store(Quote(symbol: trade.symbol, price: trade.price, source: .exchange, asOf: trade.seq))
        self.pipe.putNext(.trade(trade))
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

    /// What makes `trade` one no market accepts (a price outside (0, ``maximumPrice``], NaN included, or a
    /// size outside 1...``maximumSize``); nil for a trade that is fine.
    public static func problem(with trade: Trade) -> String? {
        if !(trade.price > 0 && trade.price <= Market.maximumPrice) {
            return "price must be a positive number up to \(Int(Market.maximumPrice)), got \(trade.price)"
        }
        if !(1...Market.maximumSize).contains(trade.size) {
            return "size must be a whole number from 1 to \(Market.maximumSize), got \(trade.size)"
        }
        return nil
    }
}
