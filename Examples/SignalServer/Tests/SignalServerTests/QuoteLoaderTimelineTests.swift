import MarketDomain
import SignalServerApp
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// The domain's cache-then-exchange loading, with its retries and the async rates service, tested on one
/// virtual timeline: the exchange's latency, the retries' waits and the rates service's sleep all pass in
/// virtual time, and the test reads what happened, when, without sleeping, polling or counting
/// scheduled actions. Each scenario runs 100 times and must give the same log every time.
@Suite struct QuoteLoaderTimelineTests {
    /// The domain, wired to one scheduler.
    struct Domain {
        let scheduler: VirtualTimeScheduler
        let counters = LiveCounters()
        let store: QuoteStore
        let exchange: SimulatedExchange
        let loader: QuoteLoader
        let rates: RatesService

        init(_ scheduler: VirtualTimeScheduler) {
            self.scheduler = scheduler
            self.store = QuoteStore(scheduler: scheduler)
            self.exchange = SimulatedExchange(
                listings: ["ACME": 101.5, "FLKY": 20], behaviour: .init(latency: 0.02, flaky: ["FLKY": 2]), scheduler: scheduler)
            self.loader = QuoteLoader(
                store: self.store, exchange: self.exchange,
                retryPolicy: .init(maxRetries: 3, delayIncrement: 0.01, maxDelay: 0.05), counters: self.counters, scheduler: scheduler)
            self.rates = RatesService(latency: .milliseconds(5), clock: scheduler.clock)
        }

        /// `quote` as the log shows it.
        func line(_ quote: Quote) -> String {
            return "\(self.scheduler.now) \(quote.symbol) \(quote.price) \(quote.currency) from \(quote.source)"
        }
    }

    /// Runs `scenario` 100 times, each on a fresh domain and timeline; expects one log, and returns it.
    func sameLogEveryRun(_ scenario: @escaping @Sendable (Domain) async throws -> [String]) async throws -> [String] {
        var first: [String]?
        for run in 0..<100 {
            let scheduler = VirtualTimeScheduler()
            let log = try await scheduler.run { try await scenario(Domain(scheduler)) }
            if let first, log != first {
                Issue.record("run \(run) gave \(log), run 0 gave \(first)")
            }
            first = first ?? log
        }
        return first ?? []
    }

    @Test func aFlakySymbolIsRetriedThenCachedThenServedFromTheCache() async throws {
        let log = try await sameLogEveryRun { domain in
            var log: [String] = []
            let fromExchange = try await domain.loader.quote("FLKY").get()
            log.append(domain.line(fromExchange))
            log.append("\(domain.scheduler.now) exchange requests: \(domain.exchange.requests)")
            // The store's write is an action on the store's scheduler, queued behind this task's work: a
            // read in the same step misses it. A moment later it has run.
            let cachedAtOnce = try await domain.store.cached("FLKY").first()
            log.append("\(domain.scheduler.now) cached at once: \(cachedAtOnce.map { "\($0.price)" } ?? "nothing")")
            try await domain.scheduler.clock.sleep(for: .milliseconds(1))
            for try await quote in domain.loader.quote("FLKY").values(bufferingPolicy: .unbounded) {
                log.append(domain.line(quote))
            }
            log.append(domain.line(try await domain.loader.firstQuote("FLKY").get()))
            log.append("\(domain.scheduler.now) exchange requests: \(domain.exchange.requests)")
            log.append("live subscriptions: \(domain.counters.subscriptions.value)")
            return log
        }
        #expect(
            log == [
                // Requests answer after 0.02; two failures, with waits of 0.01 and 0.02, then the answer.
                "0.09 FLKY 20.0 USD from exchange",
                "0.09 exchange requests: 3",
                "0.09 cached at once: nothing",
                // quote(_:) sends the cached price at once, then asks the exchange, which fails twice
                // more in its pattern before answering.
                "0.091 FLKY 20.0 USD from cache",
                "0.181 FLKY 20.0 USD from exchange",
                // firstQuote(_:) answers from the cache without a request.
                "0.181 FLKY 20.0 USD from cache",
                "0.181 exchange requests: 6",
                "live subscriptions: 0",
            ])
    }

    @Test func aConversionWaitsForTheExchangeAndTheAsyncRatesService() async throws {
        let log = try await sameLogEveryRun { domain in
            var log: [String] = []
            let euros = MarketServices.rate(to: "EUR", from: domain.rates, counting: domain.counters.bridgedTasks)
            log.append(domain.line(try await domain.loader.quote("ACME", in: "EUR", rates: euros).get()))
            let unknown = MarketServices.rate(to: "XYZ", from: domain.rates, counting: domain.counters.bridgedTasks)
            do {
                _ = try await domain.loader.quote("ACME", in: "XYZ", rates: unknown).get()
                log.append("converted to XYZ")
            } catch {
                log.append("\(domain.scheduler.now) \(error)")
            }
            log.append("bridged tasks running: \(domain.counters.bridgedTasks.value)")
            return log
        }
        #expect(
            log == [
                // The rate comes at 0.005, the exchange's price at 0.02: converted then.
                "0.02 ACME 93.38 EUR from exchange",
                // The unknown currency fails as soon as the rates service answers, 0.005 later; the
                // exchange request still in flight is disposed.
                "0.025 unsupportedCurrency(\"XYZ\")",
                "bridged tasks running: 0",
            ])
    }
}
