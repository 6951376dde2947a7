import AsyncHTTPClient
import Foundation
import Hummingbird
import MarketDomain
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import SwiftSignalKit
import Testing

@testable import SignalServerApp

/// A server running in this process on a free loopback port, reached over real HTTP.
struct TestServer {
    let port: Int
    let services: MarketServices
    let group: ServiceGroup

    /// A response's status code and body.
    struct Reply {
        var status: Int
        var body: String
        /// The `Retry-After` header, if the response had one.
        var retryAfter: String? = nil

        /// The body decoded as JSON.
        func decoded<T: Decodable>(_ type: T.Type) throws -> T {
            return try JSONDecoder().decode(type, from: Data(self.body.utf8))
        }
    }

    /// What `/metrics` answers: the server's own type.
    typealias Metrics = SignalServerApp.Metrics
    /// An error body: the server's own type.
    typealias ErrorReply = ErrorBody

    func url(_ path: String) -> String {
        return "http://127.0.0.1:\(self.port)/\(path)"
    }

    func get(_ path: String) async throws -> Reply {
        return try await self.send(HTTPClientRequest(url: self.url(path)))
    }

    /// Posts `body`. Give a short `timeout` to a request that may meet a server that has stopped: the
    /// client retries a refused connection until the timeout.
    func post(_ path: String, body: String, timeout: TimeAmount = .seconds(30)) async throws -> Reply {
        var request = HTTPClientRequest(url: self.url(path))
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        return try await self.send(request, timeout: timeout)
    }

    func metrics() async throws -> Metrics {
        return try await self.get("metrics").decoded(Metrics.self)
    }

    /// Publishes a trade and returns its sequence number.
    @discardableResult func trade(_ symbol: String, price: Double, size: Int = 1) async throws -> Int {
        let reply = try await self.post("trades", body: "{\"symbol\": \"\(symbol)\", \"price\": \(price), \"size\": \(size)}")
        try #require(reply.status == 201, "POST /trades answered \(reply.status): \(reply.body)")
        return try reply.decoded(Trade.self).seq
    }

    /// Opens a server-sent event stream, resuming after `lastEventID` if given.
    func stream(_ path: String, lastEventID: String? = nil) -> EventStream {
        return EventStream(url: self.url(path), headers: lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
    }

    private func send(_ request: HTTPClientRequest, timeout: TimeAmount = .seconds(30)) async throws -> Reply {
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), body: String(buffer: body), retryAfter: response.headers.first(name: "Retry-After"))
    }
}

/// Publishers for a test of the graceful shutdown: tasks that each post ACME trades in a loop and
/// return the sequence numbers of those answered 201.
///
/// Each POST has a 5 s deadline, since after the shutdown has begun a request can meet a server that no
/// longer listens, and the client retries the refused connection until the deadline. A POST that gets
/// no answer ends its publisher only once ``begin()`` has said the shutdown began. Before that it is
/// posted again: with the whole suite running on two busy cores, a request to an in-process server has
/// waited more than 10 s for its answer while the server's handler took milliseconds (its connection
/// was on an event loop that another server's export kept busy; each server now has a loop of its own,
/// see ``withServer(_:_:)``, and the longest wait seen since is 3 s), and all eight publishers of a test
/// then stopped before the shutdown, which the test read as a server that published nothing. An answer
/// other than 201 ends its publisher at any time. Either way the reason is kept for the test's failure
/// message (``stops``).
final class ShutdownPublishers: Sendable {
    private let shuttingDown = Atomic(value: false)
    private let stopsAndRetries = Atomic<(stops: [String], retries: Int)>(value: ([], 0))
    private let tasks: [Task<[Int], Never>]

    init(_ server: TestServer, count: Int = 8) {
        let shuttingDown = self.shuttingDown
        let stopsAndRetries = self.stopsAndRetries
        self.tasks = (0..<count).map { _ in
            Task {
                var seqs: [Int] = []
                while true {
                    let reply: TestServer.Reply
                    do {
                        reply = try await server.post(
                            "trades", body: #"{"symbol": "ACME", "price": 10, "size": 1}"#, timeout: .seconds(5))
                    } catch {
                        guard shuttingDown.with({ $0 }) || Task.isCancelled else {
                            _ = stopsAndRetries.modify { ($0.stops, $0.retries + 1) }
                            continue
                        }
                        _ = stopsAndRetries.modify { ($0.stops + ["after \(seqs.count) trades: \(error)"], $0.retries) }
                        return seqs
                    }
                    guard reply.status == 201, let trade = try? reply.decoded(Trade.self) else {
                        _ = stopsAndRetries.modify {
                            ($0.stops + ["after \(seqs.count) trades: \(reply.status) \(reply.body)"], $0.retries)
                        }
                        return seqs
                    }
                    seqs.append(trade.seq)
                }
            }
        }
    }

    /// Says that the shutdown begins: from now on a POST that gets no answer ends its publisher. Call it
    /// also when the test leaves early (`defer`), so that no publisher retries a stopped server.
    func begin() {
        _ = self.shuttingDown.swap(true)
    }

    /// Why publishers stopped, and how many POSTs were posted again before the shutdown.
    var stops: String {
        let (stops, retries) = self.stopsAndRetries.with { $0 }
        return "publishers that stopped: \(stops); POSTs retried after no answer in 5 s: \(retries)"
    }

    /// The sequence numbers acknowledged, once every publisher has stopped.
    func acknowledged() async -> [Int] {
        var seqs: [Int] = []
        for task in self.tasks { seqs += await task.value }
        return seqs
    }
}

/// Runs `body` against a server started for it, then shuts the server down gracefully and checks that it
/// stopped cleanly.
///
/// The server runs with a 50 ms heartbeat and no signal handlers (the test triggers the shutdown), on an
/// event loop of its own. The suite runs some sixty servers at once in this process: on the process-wide
/// event loops (one per core, two here, which the HTTP client uses too) a server that streams a large
/// export keeps its loop busy writing, and every other server's connections and the client's on that
/// loop wait behind it. On this two-core machine, with three busy loops beside the suite, requests to
/// other servers then waited 9 to 19 s in about half the runs (seen as a task on that loop starting 4 s
/// late); with a loop per server, none waited more than 3 s in eight such runs.
///
/// `log`, if given, makes the trade log the server publishes through, for its market.
func withServer(
    _ configure: (inout ServerConfiguration) -> Void = { _ in }, log: (@Sendable (Market) -> any TradeLog)? = nil,
    _ body: (TestServer) async throws -> Void
) async throws {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.heartbeat = 0.05
    configure(&configuration)
    let services = log.map { MarketServices(configuration: configuration, log: $0) } ?? MarketServices(configuration: configuration)
    let (ports, listening) = AsyncStream<Int>.makeStream()
    let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let group = buildServiceGroup(
        configuration: configuration, services: services, gracefulShutdownSignals: [], eventLoopGroup: .shared(loop)
    ) { port in
        listening.yield(port)
        listening.finish()
    }
    do {
        try await run(group, services: services, ports: ports, body)
    } catch {
        // The test's own error is the one to report, not one from stopping the loop after it.
        try? await loop.shutdownGracefully()
        throw error
    }
    try await loop.shutdownGracefully()
}

/// The rest of ``withServer(_:_:)``: runs the group, then `body` once the server listens.
private func run(
    _ group: ServiceGroup, services: MarketServices, ports: AsyncStream<Int>, _ body: (TestServer) async throws -> Void
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var next = ports.makeAsyncIterator()
        guard let port = await next.next() else { throw TestFailure("the server never listened") }
        do {
            try await body(TestServer(port: port, services: services, group: group))
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        // A watchdog, not a timing assertion: a shutdown that hangs fails the test instead of CI.
        tasks.addTask {
            try await Task.sleep(for: .seconds(120))
            throw TestFailure("the server did not stop within 120 s of the graceful shutdown")
        }
        try await tasks.next()
        tasks.cancelAll()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds, for at most `attempts` tries 10 ms apart: for state the server
/// reaches on its own after a client has gone. Fails the test with `message` if it never holds.
func eventually(
    _ message: @autoclosure () -> String, attempts: Int = 3000, _ condition: () async throws -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    for _ in 0..<attempts {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("never happened: \(message())", sourceLocation: sourceLocation)
    throw TestFailure(message())
}
