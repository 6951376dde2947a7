import Hummingbird
import Logging
import MarketDomain
import ServiceLifecycle
import UnixSignals

/// Builds the server: the router with every route, on the configured address.
///
/// - Parameters:
///   - configuration: Where to listen and how the simulated upstream behaves.
///   - services: The domain and its counters; pass your own to look at them from a test.
///   - eventLoopGroup: The event loops that run the server's connections: the process-wide ones by
///     default; a test that runs many servers in one process gives each its own (see `withServer`).
///   - onListening: Called with the port once the server listens (useful with port 0).
/// - Returns: The application, a `Service` to run in a `ServiceGroup` before ``MarketService``.
public func buildApplication(
    configuration: ServerConfiguration, services: MarketServices, eventLoopGroup: EventLoopGroupProvider = .singleton,
    onListening: @escaping @Sendable (Int) -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router(context: MarketRequestContext.self)
    addRoutes(to: router, services: services, configuration: configuration)
    var logger = Logger(label: "SignalServer")
    logger.logLevel = .warning
    return Application(
        router: router,
        // A request whose client stops sending it for the slow-client limit is cut (see RequestReadDeadline);
        // a connection with no request in progress, idle or with half a request head, after the idle
        // limit (Hummingbird's idle timeout, which leaves responses in progress alone).
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [
                    RequestReadDeadline(limit: .milliseconds(Int64(configuration.slowClientLimit * 1000)))
                ], idleTimeout: .milliseconds(Int64(configuration.idleConnectionLimit * 1000)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "SignalServer", backlog: 4096),
        onServerRunning: { channel in
            onListening(channel.localAddress?.port ?? configuration.port)
        },
        eventLoopGroupProvider: eventLoopGroup,
        logger: logger)
}

/// The whole server as one service group: the application, then the domain. On SIGTERM or SIGINT the
/// group shuts the domain down first (it closes the market, so every trade stream ends after the last
/// trade published, and disposes its own subscriptions), then the application (it stops accepting, ends
/// the remaining streams and waits for open requests).
///
/// - Parameters:
///   - configuration: Where to listen and how the simulated upstream behaves.
///   - services: The domain and its counters.
///   - gracefulShutdownSignals: The signals that start a graceful shutdown; tests pass none and call
///     `triggerGracefulShutdown()`.
///   - eventLoopGroup: The event loops that run the server's connections (see ``buildApplication``).
///   - onListening: Called with the port once the server listens.
/// - Returns: The group; `run()` returns once everything has stopped.
public func buildServiceGroup(
    configuration: ServerConfiguration, services: MarketServices, gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
    eventLoopGroup: EventLoopGroupProvider = .singleton, onListening: @escaping @Sendable (Int) -> Void = { _ in }
) -> ServiceGroup {
    let app = buildApplication(
        configuration: configuration, services: services, eventLoopGroup: eventLoopGroup, onListening: onListening)
    var logger = Logger(label: "SignalServer.lifecycle")
    logger.logLevel = .warning
    // The database pools first, so they are shut down last, after the domain and the application.
    var members: [ServiceGroupConfiguration.ServiceConfiguration] = []
    if let postgres = services.postgres { members += [.init(service: postgres.pool), .init(service: postgres.exportPool)] }
    members += [.init(service: app), .init(service: MarketService(services: services))]
    var group = ServiceGroupConfiguration(
        services: members,
        gracefulShutdownSignals: gracefulShutdownSignals, logger: logger)
    // A backstop: streams end at once and a client that stops reading is cut off after the slow-client
    // limit, so shutdown takes longer only if a request handler hangs; then the group cancels it.
    group.maximumGracefulShutdownDuration = .seconds(configuration.slowClientLimit + 20)
    return ServiceGroup(configuration: group)
}
