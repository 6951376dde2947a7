import SwiftSignalKit

/// A slow, sometimes failing pricing service: the remote upstream of the example.
///
/// Each ``quote(_:)`` subscription is one request: it answers after ``Behaviour/latency`` seconds on the
/// exchange's queue, unless it is disposed first. The behaviour per symbol makes every outcome
/// reproducible: a flaky symbol fails a fixed number of requests in a row and then succeeds once (counted
/// over all requests, so concurrent requests share the pattern), a down symbol always fails, a slow symbol
/// takes longer than any sensible deadline. Prices start at the listing and follow the trades
/// (``traded(_:at:)``).
public final class SimulatedExchange: Sendable {
    /// How the exchange answers.
    public struct Behaviour: Sendable {
        /// Seconds before an answer.
        public var latency: Double
        /// Symbols that fail this many requests in a row, then succeed once, then fail again.
        public var flaky: [String: Int]
        /// Symbols the exchange lists but never answers for.
        public var down: Set<String>
        /// Symbols that answer after this many seconds instead of ``latency``.
        public var slow: [String: Double]

        /// Creates a behaviour.
        public init(latency: Double = 0.02, flaky: [String: Int] = [:], down: Set<String> = [], slow: [String: Double] = [:]) {
            self.latency = latency
            self.flaky = flaky
            self.down = down
            self.slow = slow
        }
    }

    /// The listed symbols and their prices in USD, with the trade that set each (0 for the listing).
    private let prices: Atomic<[String: (price: Double, asOf: Int)]>
    private let behaviour: Behaviour
    /// Where the answers wait their latency: a queue of the exchange's own, or a test's virtual time.
    private let scheduler: any SignalScheduler
    /// Requests per flaky symbol so far, to fail them in the set pattern.
    private let attempts = Atomic<[String: Int]>(value: [:])
    private let requestCount = Atomic(value: 0)

    /// Creates an exchange that lists `listings` (symbol to price in USD).
    public convenience init(listings: [String: Double], behaviour: Behaviour = Behaviour(), queue: Queue = Queue(name: "exchange")) {
        self.init(listings: listings, behaviour: behaviour, scheduler: queue)
    }

    /// Creates an exchange that lists `listings` and answers on `scheduler`: a test passes its
    /// `VirtualTimeScheduler`, so latencies pass in virtual time.
    public init(listings: [String: Double], behaviour: Behaviour = Behaviour(), scheduler: some SignalScheduler) {
        self.prices = Atomic(value: listings.mapValues { (price: $0, asOf: 0) })
        self.behaviour = behaviour
        self.scheduler = scheduler
    }

    /// Every request the exchange has received, answered or not.
    public var requests: Int { self.requestCount.with { $0 } }

    /// Whether the exchange lists `symbol`, answered locally.
    public func lists(_ symbol: String) -> Bool {
        return self.prices.with { $0[symbol] != nil }
    }

    /// The trade numbered `seq` moved `symbol`'s price: later requests answer with it.
    public func traded(_ symbol: String, at price: Double, seq: Int) {
        self.prices.modify { prices in
            guard let current = prices[symbol], current.asOf < seq else { return prices }
            var prices = prices
            prices[symbol] = (price: price, asOf: seq)
            return prices
        }
    }

    /// One request for `symbol`'s price: a cold signal that sends one exchange quote and completes, or
    /// fails with ``MarketError/unknownSymbol(_:)`` or ``MarketError/exchangeUnavailable(_:)``.
    public func quote(_ symbol: String) -> Signal<Quote, MarketError> {
        return Signal { subscriber in
            self.requestCount.modify { $0 + 1 }
            let latency = self.behaviour.slow[symbol] ?? self.behaviour.latency
            let timer = Timer(
                timeout: latency, repeat: false, scheduler: self.scheduler,
                completion: { _ in
                    // The price as it is when the answer leaves, as a real exchange would quote it.
                    switch self.outcome(for: symbol) {
                    case .success(let quote):
                        subscriber.putNext(quote)
                        subscriber.putCompletion()
                    case .failure(let error):
                        subscriber.putError(error)
                    }
                })
            timer.start()
            return ActionDisposable { timer.invalidate() }
        }
    }

    private func outcome(for symbol: String) -> Result<Quote, MarketError> {
        guard let (price, asOf) = self.prices.with({ $0[symbol] }) else { return .failure(.unknownSymbol(symbol)) }
        if self.behaviour.down.contains(symbol) { return .failure(.exchangeUnavailable(symbol)) }
        if let failures = self.behaviour.flaky[symbol] {
            let attempt = self.attempts.modify { attempts in
                var attempts = attempts
                attempts[symbol, default: 0] += 1
                return attempts
            }[symbol]!
            if attempt % (failures + 1) != 0 { return .failure(.exchangeUnavailable(symbol)) }
        }
        return .success(Quote(symbol: symbol, price: price, source: .exchange, asOf: asOf))
    }
}
