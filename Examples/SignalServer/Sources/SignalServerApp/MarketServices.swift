import Logging
import MarketDomain
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Everything the routes use: the legacy domain objects, the new async rates service, and the
/// queue-confined trade ledger that both worlds reach.
public final class MarketServices: Sendable {
    /// What the server counts; `/metrics` shows it.
    public let counters = LiveCounters()
    /// The simulated upstream.
    public let exchange: SimulatedExchange
    /// The quote cache.
    public let store: QuoteStore
    /// Cache-then-exchange loading.
    public let loader: QuoteLoader
    /// Trades in, trades out.
    public let market: Market
    /// Where trades are numbered: the market itself, or the database the instances share.
    public let log: any TradeLog
    /// The shared log, when the server runs as one of several instances.
    public let postgres: PostgresTradeLog?
    /// The shared log's subscription, which feeds the market.
    private let logSubscription = MetaDisposable()
    /// The new async code.
    public let rates: RatesService
    /// Per-symbol trade statistics, confined to their queue. Signal code records trades on the queue;
    /// async routes read them through the actor.
    public let ledger: QueueLocalActor<TradeLedger>
    /// The ledger's subscription to the trades.
    private let ledgerSubscription = MetaDisposable()
    /// Where the stream heartbeats tick.
    let timerQueue = Queue(name: "heartbeats")
    /// Where the services log (the export's database queries).
    let logger: Logger
    /// The exports running now, at most `configuration.exportLimit`.
    let exports: ExportGate

    /// Creates the services of a server that runs alone (the market numbers trades) and starts
    /// recording trades in the ledger. `configuration.database` is not used; see ``connect(configuration:logger:)``.
    public convenience init(configuration: ServerConfiguration) {
        self.init(configuration: configuration, database: nil, logger: Logger(label: "SignalServer"))
    }

    /// Creates the services for `configuration`: with a `database` URL, for one of several instances
    /// that share a PostgreSQL trade log (the schema is created if missing, and the market starts after
    /// the log's last trade and follows it); without one, for a server that runs alone.
    ///
    /// - Throws: ``DatabaseURLError`` or the driver's error when the database cannot be used.
    public static func connect(configuration: ServerConfiguration, logger: Logger) async throws -> MarketServices {
        guard let url = configuration.database else { return MarketServices(configuration: configuration) }
        return MarketServices(
            configuration: configuration, database: try await PostgresTradeLog.prepare(url: url, logger: logger), logger: logger)
    }

    /// Creates the services of a server that runs alone, numbering trades through the log that `log`
    /// makes for its market: for tests, which stand in for a database that does not answer.
    convenience init(configuration: ServerConfiguration, log: @escaping (Market) -> any TradeLog) {
        self.init(configuration: configuration, database: nil, logger: Logger(label: "SignalServer"), log: log)
    }

    private init(
        configuration: ServerConfiguration, database: PostgresTradeLog.Database?, logger: Logger,
        log makeLog: ((Market) -> any TradeLog)? = nil
    ) {
        self.logger = logger
        self.exports = ExportGate(limit: configuration.exportLimit)
        self.exchange = SimulatedExchange(listings: configuration.listings, behaviour: configuration.exchange)
        self.store = QuoteStore()
        self.loader = QuoteLoader(store: self.store, exchange: self.exchange, retryPolicy: configuration.retries, counters: self.counters)
        self.market = Market(store: self.store, exchange: self.exchange, counters: self.counters, lastSeq: database?.lastSeq ?? 0)
        if let database {
            let postgres = PostgresTradeLog(
                database: database, market: self.market, exportConnections: configuration.exportLimit, logger: logger)
            self.postgres = postgres
            self.log = postgres
        } else {
            self.postgres = nil
            self.log = makeLog?(self.market) ?? LocalTradeLog(market: self.market)
        }
        self.rates = RatesService(latency: configuration.ratesLatency)
        self.ledger = QueueLocalActor(queue: Queue(name: "ledger"), value: TradeLedger())
        self.ledgerSubscription.set(
            self.ledger.subscribe(
                self.market.trades(),
                next: { ledger, trade in
                    ledger.withValueOnQueue { $0.record(trade) }
                }))
        if let postgres = self.postgres { self.logSubscription.set(postgres.follow()) }
    }

    /// How many units of `currency` one USD buys: the async rates service, bridged into a signal so the
    /// legacy chain can combine it. Each subscription runs the async call in a task of its own, which
    /// disposing the subscription cancels.
    public func rate(to currency: String) -> Signal<Double, MarketError> {
        return Self.rate(to: currency, from: self.rates, counting: self.counters.bridgedTasks)
    }

    /// The bridge behind ``rate(to:)``, for a service of the caller's (a test's, on virtual time).
    public static func rate(to currency: String, from rates: RatesService, counting bridged: Gauge) -> Signal<Double, MarketError> {
        return Signal<Double, any Error> {
            bridged.increment()
            defer { bridged.decrement() }
            return try await rates.rate(to: currency)
        }
            |> mapError { error -> MarketError in
                switch error {
                case RatesService.RatesError.unsupported(let currency): return .unsupportedCurrency(currency)
                default: return .exchangeUnavailable("rates")
                }
            }
    }

    /// Stops the domain: no more trades, and the ledger stops listening once it has recorded the last;
    /// an instance stops following the shared log.
    public func shutdown() async {
        self.market.close()
        _ = await self.market.whenClosed().first()
        self.logSubscription.dispose()
        self.ledgerSubscription.dispose()
    }
}

/// Trade statistics per symbol. Not thread-safe and not `Sendable`: it lives on the ledger's queue.
public struct TradeLedger {
    /// One symbol's statistics.
    public struct Stats: Equatable, Sendable, Codable {
        /// The symbol.
        public var symbol: String
        /// Trades recorded.
        public var trades: Int = 0
        /// Shares traded.
        public var volume: Int = 0
        /// The last trade's price.
        public var lastPrice: Double?
        /// The highest sequence number recorded.
        public var lastSeq: Int = 0
    }

    private var bySymbol: [String: Stats] = [:]

    /// Creates an empty ledger.
    public init() {}

    /// Adds `trade` to its symbol's statistics.
    public mutating func record(_ trade: Trade) {
        var stats = self.bySymbol[trade.symbol] ?? Stats(symbol: trade.symbol)
        stats.trades += 1
        // Saturates rather than trap: a server must not die of a large total. (The market also caps
        // each trade's size, so reaching Int.max takes billions of trades.)
        let (volume, overflow) = stats.volume.addingReportingOverflow(trade.size)
        stats.volume = overflow ? Int.max : volume
        stats.lastPrice = trade.price
        stats.lastSeq = trade.seq
        self.bySymbol[trade.symbol] = stats
    }

    /// The statistics of `symbol`, empty when nothing was traded.
    public func stats(for symbol: String) -> Stats {
        return self.bySymbol[symbol] ?? Stats(symbol: symbol)
    }
}

/// The domain as a service of the server's service group: it runs until graceful shutdown, then closes
/// the market and, once the trades already queued are out, stops the ledger. Listed after the
/// application in the group, it is shut down first: from then on every trade is refused with 503, whether
/// or not a stream is open, and every trade stream ends after the last trade published.
public struct MarketService: Service {
    let services: MarketServices

    /// Creates the service.
    public init(services: MarketServices) {
        self.services = services
    }

    /// Waits for graceful shutdown, then stops the domain.
    public func run() async throws {
        // Returns when graceful shutdown begins (or throws when the group is cancelled).
        try? await gracefulShutdown()
        await self.services.shutdown()
    }
}
