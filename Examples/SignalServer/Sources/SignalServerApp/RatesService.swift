/// The new async code: a currency-rates service, as a team would write it today. It knows nothing about
/// signals; ``MarketServices/rate(to:)`` bridges it into the signal chain.
public actor RatesService {
    /// Why there is no rate.
    public enum RatesError: Error, Equatable, Sendable {
        /// The service has no rate for this currency.
        case unsupported(String)
    }

    private let rates: [String: Double]
    private let latency: Duration
    private let clock: any Clock<Duration>

    /// Creates a service that knows `rates` (units per USD) and answers after `latency` on `clock` (a
    /// test passes a `VirtualTimeScheduler`'s clock).
    public init(
        rates: [String: Double] = RatesService.defaultRates, latency: Duration = .milliseconds(5),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.rates = rates
        self.latency = latency
        self.clock = clock
    }

    /// The rates the example starts with.
    public static let defaultRates: [String: Double] = ["USD": 1, "EUR": 0.92, "GBP": 0.79, "JPY": 151.3]

    /// How many units of `currency` one USD buys.
    ///
    /// - Throws: ``RatesError/unsupported(_:)`` for a currency the service does not know, and
    ///   `CancellationError` when the calling task is cancelled during the call.
    public func rate(to currency: String) async throws -> Double {
        try await self.clock.sleep(for: self.latency)
        guard let rate = self.rates[currency] else { throw RatesError.unsupported(currency) }
        return rate
    }
}
