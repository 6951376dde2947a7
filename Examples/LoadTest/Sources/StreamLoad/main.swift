import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

// StreamLoad --url http://127.0.0.1:8080 --pid <server pid> --clients 1000 --trades 200
//
// Connects the clients to /events, waits until every one is subscribed, publishes the trades from a few
// concurrent publishers, and checks that every client received every trade exactly once and in order.
// Then it disconnects them all and waits for the server's live counts to return to where they were.
// Prints one `key: value` line per figure; exits 1 if any check fails.

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("StreamLoad: \(error)\n".utf8))
    exit(64)
}

struct Metrics: Decodable {
    var subscriptions: Int
    var bridgedTasks: Int
    var streams: Int
    var tradesPublished: Int
}

var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.clients + 64)
configuration.timeout = .init(connect: .seconds(30))
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

func metrics() async throws -> Metrics {
    let response = try await client.execute(HTTPClientRequest(url: options.url + "/metrics"), timeout: .seconds(30))
    return try JSONDecoder().decode(Metrics.self, from: Data(String(buffer: try await response.body.collect(upTo: 1 << 16)).utf8))
}

func publish(_ index: Int) async throws -> Bool {
    var request = HTTPClientRequest(url: options.url + "/trades")
    request.method = .POST
    request.headers.add(name: "content-type", value: "application/json")
    let symbol = ["ACME", "GLOBEX", "INITECH"][index % 3]
    request.body = .bytes(ByteBuffer(string: "{\"symbol\": \"\(symbol)\", \"price\": \(100 + index % 50), \"size\": \(1 + index % 9)}"))
    let response = try await client.execute(request, timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 1 << 16)
    return response.status == .created
}

var failures: [String] = []
let started = ContinuousClock.now
let baseline = try await metrics()
let rssBefore = residentKiB(options.pid)
print("clients: \(options.clients)")
print("trades published: \(options.trades)")

let readiness = ReadyCount()
let clientTasks = (0..<options.clients).map { _ in
    Task { await runClient(client: client, url: options.url, expected: options.trades, readiness: readiness) }
}

// Everyone subscribed, and nobody saw a trade yet (only this tool publishes).
let lastSeqs = await readiness.wait(for: options.clients)
let connected = ContinuousClock.now
let rssConnected = residentKiB(options.pid)
if lastSeqs != [baseline.tradesPublished] { failures.append("clients saw different lastSeq values at ready: \(lastSeqs.sorted())") }
let open = try await metrics()
print("connect time: \(connected - started)")
print("streams open: \(open.streams)")
print("subscriptions open: \(open.subscriptions) (baseline \(baseline.subscriptions))")

// Publish: `publishers` tasks, each taking the next index until all trades are out.
let next = Counter()
let published = try await withThrowingTaskGroup(of: Int.self) { group in
    for _ in 0..<options.publishers {
        group.addTask {
            var accepted = 0
            while let index = await next.take(below: options.trades) {
                if try await publish(index) { accepted += 1 }
            }
            return accepted
        }
    }
    var total = 0
    for try await accepted in group { total += accepted }
    return total
}
if published != options.trades { failures.append("only \(published) of \(options.trades) trades were accepted") }

var results: [ClientResult] = []
for task in clientTasks { results.append(await task.value) }
let delivered = ContinuousClock.now
let rssPeak = residentKiB(options.pid, peak: true)
let receivedTotal = results.reduce(0) { $0 + $1.received }
let problems = results.compactMap(\.problem)
print("events sent: \(options.trades * options.clients) (\(options.trades) trades x \(options.clients) streams)")
print("events delivered: \(receivedTotal)")
print("delivery time: \(delivered - connected)")
if receivedTotal != options.trades * options.clients {
    failures.append("delivered \(receivedTotal) events, sent \(options.trades * options.clients)")
}
if let first = problems.first { failures.append("\(problems.count) clients had a problem, the first: \(first)") }

// The clients are gone once their tasks returned (each returned from its response body loop, which
// closes the connection). The server must notice and dispose everything.
var after = try await metrics()
var waited = 0
while after.streams != baseline.streams || after.subscriptions != baseline.subscriptions || after.bridgedTasks != 0, waited < 3000 {
    try await Task.sleep(for: .milliseconds(10))
    waited += 1
    after = try await metrics()
}
let rssAfter = residentKiB(options.pid)
print("streams after: \(after.streams)")
print("subscriptions after: \(after.subscriptions - baseline.subscriptions) (above baseline \(baseline.subscriptions))")
print("bridged tasks after: \(after.bridgedTasks)")
if after.streams != baseline.streams || after.subscriptions != baseline.subscriptions || after.bridgedTasks != 0 {
    failures.append("left behind: \(after.streams) streams, \(after.subscriptions) subscriptions, \(after.bridgedTasks) tasks")
}
print("server memory before the streaming clients: \(mib(rssBefore))")
print("server memory with every client connected: \(mib(rssConnected))")
print("server memory peak: \(mib(rssPeak))")
print("server memory after the clients left: \(mib(rssAfter))")
if let rssBefore, let rssConnected {
    print(
        String(format: "server memory per connected streaming client: %.1f KiB", Double(rssConnected - rssBefore) / Double(options.clients))
    )
}
try await client.shutdown().get()
if ContinuousClock.now - started > .seconds(options.limit) { failures.append("the run took longer than \(options.limit) s") }
for failure in failures { print("FAILED: \(failure)") }
exit(failures.isEmpty ? 0 : 1)

/// Hands out indexes to the publishers.
actor Counter {
    private var value = 0
    func take(below limit: Int) -> Int? {
        guard self.value < limit else { return nil }
        defer { self.value += 1 }
        return self.value
    }
}
