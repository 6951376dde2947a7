import MarketDomain

/// How the server runs: where it listens, what the simulated exchange lists and how it behaves.
public struct ServerConfiguration: Sendable {
    /// The address to listen on; loopback by default.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (the server prints which).
    public var port: Int = 8080
    /// Seconds between heartbeats on an event stream.
    public var heartbeat: Double = 15
    /// The deadline of a quote request without a `deadline_ms` parameter, in seconds.
    public var defaultDeadline: Double = 1
    /// Symbols and their prices in USD.
    public var listings: [String: Double] = ["ACME": 101.5, "GLOBEX": 42.25, "INITECH": 7.8, "FLAKY": 13.0, "DOWN": 1.0, "SLOW": 99.0]
    /// How the exchange answers: FLAKY fails twice and then answers, DOWN never answers, SLOW takes
    /// five seconds.
    public var exchange = SimulatedExchange.Behaviour(latency: 0.02, flaky: ["FLAKY": 2], down: ["DOWN"], slow: ["SLOW": 5])
    /// How hard the loader tries the exchange.
    public var retries = QuoteLoader.RetryPolicy(maxRetries: 3, delayIncrement: 0.01, maxDelay: 0.05)
    /// How long the rates service takes to answer.
    public var ratesLatency: Duration = .milliseconds(5)

    /// The defaults: port 8080 on loopback.
    public init() {}

    /// The defaults, changed by command-line arguments: `--host H`, `--port P` (0 for a free port),
    /// `--heartbeat SECONDS`.
    ///
    /// - Throws: ``ConfigurationError`` naming the argument that is unknown or not a valid value.
    public init(arguments: [String]) throws(ConfigurationError) {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw ConfigurationError("\(flag) needs a value") }
            switch flag {
            case "--host":
                self.host = value
            case "--port":
                guard let port = Int(value), (0...65535).contains(port) else {
                    throw ConfigurationError("--port needs a number from 0 to 65535, got \(value)")
                }
                self.port = port
            case "--heartbeat":
                guard let seconds = Double(value), seconds.isFinite, seconds > 0 else {
                    throw ConfigurationError("--heartbeat needs a positive number of seconds, got \(value)")
                }
                self.heartbeat = seconds
            default:
                throw ConfigurationError("unknown argument \(flag); use --host, --port or --heartbeat")
            }
        }
    }
}

/// A command-line argument the server cannot use.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
