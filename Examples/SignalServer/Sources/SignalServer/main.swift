import Foundation
import Logging
import MarketDomain
import ServiceLifecycle
import SignalServerApp

// swift run SignalServer [--host 127.0.0.1] [--port 8080] [--heartbeat 15] [--slow-client 10] [--export-limit 8] [--database postgres://...]
let configuration: ServerConfiguration
do {
    configuration = try ServerConfiguration(arguments: Array(CommandLine.arguments.dropFirst()))
} catch ConfigurationError.help {
    print(ServerConfiguration.usage)
    exit(0)
} catch {
    FileHandle.standardError.write(Data("SignalServer: \(error)\n\(ServerConfiguration.usage)\n".utf8))
    exit(64)
}
let services: MarketServices
do {
    services = try await MarketServices.connect(configuration: configuration, logger: Logger(label: "SignalServer.database"))
} catch {
    FileHandle.standardError.write(Data("SignalServer: cannot use the \(PostgresTradeLog.describe(error))\n".utf8))
    exit(1)
}
let group = buildServiceGroup(configuration: configuration, services: services) { port in
    // Unbuffered, so a script that waits for this line sees it at once.
    FileHandle.standardOutput.write(Data("SignalServer listening on http://\(configuration.urlHost):\(port)\n".utf8))
}
do {
    try await group.run()
} catch {
    FileHandle.standardError.write(Data("SignalServer: \(error)\n".utf8))
    exit(1)
}
print("SignalServer stopped: \(services.counters.subscriptions.value) subscriptions, \(services.counters.streams.value) streams left")
