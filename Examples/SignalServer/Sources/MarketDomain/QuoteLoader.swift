import SwiftSignalKit

/// Cache-then-exchange loading, written the way signal code has always been written.
public final class QuoteLoader: Sendable {
    /// How hard to try the exchange.
    public struct RetryPolicy: Sendable {
        /// Requests after the first one failed, at most.
        public var maxRetries: Int
        /// The pause before the first retry; each later retry waits this much longer.
        public var delayIncrement: Double
        /// The longest pause between two requests.
        public var maxDelay: Double

        /// Creates a policy.
        public init(maxRetries: Int = 3, delayIncrement: Double = 0.01, maxDelay: Double = 0.05) {
            self.maxRetries = maxRetries
            self.delayIncrement = delayIncrement
            self.maxDelay = maxDelay
        }
    }

    private let store: QuoteStore
    private let exchange: SimulatedExchange
    private let retryPolicy: RetryPolicy
    /// Where the retries wait: a queue of the loader's own, or a test's virtual time.
    private let scheduler: any SignalScheduler
    private let counters: LiveCounters

    /// Creates a loader that answers from `store` first and then asks `exchange`.
    public convenience init(
        store: QuoteStore, exchange: SimulatedExchange, retryPolicy: RetryPolicy = RetryPolicy(), counters: LiveCounters,
        queue: Queue = Queue(name: "quote-loader")
    ) {
        self.init(store: store, exchange: exchange, retryPolicy: retryPolicy, counters: counters, scheduler: queue)
    }

    /// Creates a loader whose retries wait on `scheduler`: a test passes its `VirtualTimeScheduler`.
    public init(
        store: QuoteStore, exchange: SimulatedExchange, retryPolicy: RetryPolicy = RetryPolicy(), counters: LiveCounters,
        scheduler: some SignalScheduler
    ) {
        self.store = store
        self.exchange = exchange
        self.retryPolicy = retryPolicy
        self.counters = counters
        self.scheduler = scheduler
    }

    /// The cached quote when there is one, otherwise the exchange's (which is then cached): one answer,
    /// and no exchange request when the cache has the symbol. For request/response callers.
    ///
    /// `quote(symbol) |> take(1)` does the same (`then` sees the `take(1)` below it end, through the
    /// library's operators, and does not start the exchange request); this says it in one name.
    public func firstQuote(_ symbol: String) -> Signal<Quote, MarketError> {
        let fromExchange = self.fromExchange(symbol)
        return self.store.quotes()
            |> take(1)
            |> castError(MarketError.self)
            |> mapToSignal { book -> Signal<Quote, MarketError> in
                guard var quote = book.quotes[symbol] else { return fromExchange }
                quote.source = .cache
                return .single(quote)
            }
            |> tracked(self.counters.subscriptions)
    }

    /// The cached quote at once when there is one, then the exchange's, which is also cached.
    ///
    /// The exchange is asked again after a transient failure, up to the policy's retries; an unknown
    /// symbol fails at once. A subscriber that needs only the fastest answer takes the first value.
    public func quote(_ symbol: String) -> Signal<Quote, MarketError> {
        return self.store.cached(symbol) |> then(self.fromExchange(symbol)) |> tracked(self.counters.subscriptions)
    }

    /// One exchange answer, retried after transient failures, and cached.
    private func fromExchange(_ symbol: String) -> Signal<Quote, MarketError> {
        let policy = self.retryPolicy
        return self.exchange.quote(symbol)
            |> retry(
                retryOnError: { $0.isTransient }, delayIncrement: policy.delayIncrement, maxDelay: policy.maxDelay,
                maxRetries: policy.maxRetries, scheduler: self.scheduler)
            |> afterNext { [store] quote in store.store(quote) }
    }

    /// The exchange's quote of `symbol` (never the cache), converted with the rate `rates` sends.
    ///
    /// The two requests run at once (`combineLatest`); the conversion has both answers or the first
    /// failure of either.
    ///
    /// - Parameters:
    ///   - symbol: The symbol to quote.
    ///   - currency: The currency to convert to.
    ///   - rates: How many units of `currency` one USD buys; may come from anywhere, an async function
    ///     bridged into a signal included.
    public func quote(_ symbol: String, in currency: String, rates: Signal<Double, MarketError>) -> Signal<Quote, MarketError> {
        let fromExchange =
            self.quote(symbol)
            |> filter { $0.source == .exchange }
            |> take(1)
        return combineLatest(fromExchange, rates)
            |> map { quote, rate in
                // Rounded to four decimals, as rates are quoted.
                Quote(
                    symbol: quote.symbol, price: (quote.price * rate * 10_000).rounded() / 10_000, currency: currency, source: quote.source,
                    asOf: quote.asOf)
            }
            |> tracked(self.counters.subscriptions)
    }
}
