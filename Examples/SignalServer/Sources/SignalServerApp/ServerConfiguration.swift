import MarketDomain

/// How the server runs: where it listens, what the simulated exchange lists and how it behaves.
public struct ServerConfiguration: Sendable {
    /// The address to listen on; loopback by default.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (the server prints which).
    public var port: Int = 8080
    /// Seconds between heartbeats on an event stream.
    public var heartbeat: Double = 15
    /// Seconds a stream's write may stay pending (its client not reading) before the server closes the
    /// connection. Bounds what a lossless stream buffers for a client that stopped reading. Also how long
    /// the server waits for the next part of a request whose client stopped sending it (a half-sent
    /// body) before it closes the connection, so such a request cannot hold the graceful shutdown up.
    public var slowClientLimit: Double = 10
    /// Seconds a connection may stay open with no request in progress before the server closes it:
    /// idle between requests, or with a request head begun and not finished (the server sees no part
    /// of a request before its head is whole, so ``slowClientLimit`` cannot cover it). A response in
    /// progress, a stream or an export, is never cut by it.
    public var idleConnectionLimit: Double = 60
    /// Events `/events` may hold for a client that reads slower than they come: one more ends the
    /// client's stream with `end` `behind` (`SignalBufferingPolicy.endingWhenFull`), and the client
    /// resumes with `Last-Event-ID`. Bounds what the lossless stream buffers for a client that keeps
    /// reading, slowly.
    public var maximumBacklog = 10_000
    /// Rows the export holds for a client beyond what it is writing (`.bounded`): the database or the
    /// generator waits for the client meanwhile.
    public var exportRoom = 256
    /// Exports that may run at once; one more is answered 503 `export_busy` at once. With a database,
    /// exports read through a connection pool of this size of their own, so that slow readers never hold
    /// the connections that publishing and the trade history need.
    public var exportLimit = 8
    /// The deadline of a request without a `deadline_ms` parameter, in seconds: for a quote or a trade,
    /// the time to answer; for an export, the time to start reading rows.
    public var defaultDeadline: Double = 1
    /// Seconds a trade still waiting for the trade log, or an export waiting for its first rows, when
    /// graceful shutdown begins may wait on (at most its deadline); then it is answered 503
    /// `log_unavailable`, so that a database that does not answer cannot hold the shutdown up to the
    /// service group's backstop. Such a trade may still be recorded, as after any failure.
    public var shutdownGrace: Double = 2
    /// Symbols and their prices in USD.
    public var listings: [String: Double] = ["ACME": 101.5, "GLOBEX": 42.25, "INITECH": 7.8, "FLAKY": 13.0, "DOWN": 1.0, "SLOW": 99.0]
    /// How the exchange answers: FLAKY fails twice and then answers, DOWN never answers, SLOW takes
    /// five seconds.
    public var exchange = SimulatedExchange.Behaviour(latency: 0.02, flaky: ["FLAKY": 2], down: ["DOWN"], slow: ["SLOW": 5])
    /// How hard the loader tries the exchange.
    public var retries = QuoteLoader.RetryPolicy(maxRetries: 3, delayIncrement: 0.01, maxDelay: 0.05)
    /// How long the rates service takes to answer.
    public var ratesLatency: Duration = .milliseconds(5)
    /// The PostgreSQL database that several instances share as their trade log
    /// (`postgres://user@host:port/database`); nil for a server that runs alone.
    public var database: String?

    /// The defaults: port 8080 on loopback.
    public init() {}

    /// What `--help` prints.
    public static let usage = """
        usage: SignalServer [--host ADDRESS] [--port PORT] [--heartbeat SECONDS] [--slow-client SECONDS]
                            [--export-limit COUNT] [--database URL]
          --host         the address to listen on (default 127.0.0.1)
          --port         0 to 65535; 0 picks a free port (default 8080)
          --heartbeat    seconds between stream heartbeats, 0.01 to 3600 (default 15)
          --slow-client  seconds a stream may wait for a client that does not read, and a request for
                         the rest of itself from a client that stopped sending it, 0.1 to 3600 (default 10)
          --export-limit exports that may run at once, 1 to 1000; more are answered 503 (default 8)
          --database     postgres://user@host:port/database: share the trade feed with the other instances
                         that use this database (default: none, the server runs alone)
        """

    /// The flags that take a value.
    private static let flags: Set<String> = ["--host", "--port", "--heartbeat", "--slow-client", "--export-limit", "--database"]

    /// The defaults, changed by command-line arguments: `--host H`, `--port P` (0 for a free port),
    /// `--heartbeat SECONDS`, `--slow-client SECONDS`, `--export-limit COUNT`, `--database URL`.
    ///
    /// - Throws: ``ConfigurationError`` naming the argument that is unknown or not a valid value, or
    ///   ``ConfigurationError/help`` for `--help`.
    public init(arguments: [String]) throws(ConfigurationError) {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            if flag == "--help" || flag == "-h" { throw ConfigurationError.help }
            // Unknown before "needs a value": a misspelt flag given last is named as unknown.
            guard Self.flags.contains(flag) else { throw ConfigurationError("unknown argument \(flag); see --help") }
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
                self.heartbeat = try Self.seconds(flag, value, in: 0.01...3600)
            case "--slow-client":
                self.slowClientLimit = try Self.seconds(flag, value, in: 0.1...3600)
            case "--export-limit":
                guard let limit = Int(value), (1...1000).contains(limit) else {
                    throw ConfigurationError("--export-limit needs a number from 1 to 1000, got \(value)")
                }
                self.exportLimit = limit
            case "--database":
                do {
                    _ = try DatabaseURL(value)
                } catch {
                    throw ConfigurationError("--database: \(error.description)")
                }
                self.database = value
            default:
                throw ConfigurationError("unknown argument \(flag); see --help")
            }
        }
    }

    private static func seconds(_ flag: String, _ value: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
        guard let seconds = Double(value), range.contains(seconds) else {
            throw ConfigurationError("\(flag) needs a number of seconds from \(range.lowerBound) to \(range.upperBound), got \(value)")
        }
        return seconds
    }

    /// The address as it goes in a URL: an IPv6 address in brackets.
    public var urlHost: String {
        return self.host.contains(":") ? "[\(self.host)]" : self.host
    }
}

/// A command-line argument the server cannot use, or a request for help.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }

    /// `--help` was given: print ``ServerConfiguration/usage`` and exit 0.
    public static let help = ConfigurationError("help")
}
