import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

// StreamLoad --urls http://127.0.0.1:8080[,http://...] --pids <pid>[,<pid>...] --clients 1000 --trades 200
//            [--faults yes --restart-database 'pg_ctl ... restart']
//
// Connects the clients to /events, spread over the instances, waits until every one is subscribed,
// publishes the trades from a few concurrent publishers (each POST to the next instance in turn), and
// checks that every client received every trade exactly once and in order, whichever instance it is
// connected to. Reports the end-to-end latency of those trades: from the moment the POST was sent to
// the moment a client parsed the event.
//
// With --faults yes it then publishes as many trades again, killing the second instance (SIGKILL) half
// way: its clients reconnect to another instance with Last-Event-ID and must resume right after the
// last trade they saw. Then it restarts the database with the given command and publishes as many
// trades once more: the instances must reconnect to it, and those trades must reach every client.
// A POST that fails during a fault is sent again to another instance.
//
// Then it disconnects the clients and waits for the live counts of the remaining instances to return
// to where they were. Prints one `key: value` line per figure; exits 1 if any check fails.

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
    var databaseSessions: Int?
    var residentBytes: Int?
    var exports: Int?
}

var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.clients + 64)
configuration.timeout = .init(connect: .seconds(30))
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
let instances = Instances(urls: options.urls)
let count = options.urls.count

func metrics(_ instance: Int) async throws -> Metrics {
    let response = try await client.execute(HTTPClientRequest(url: options.urls[instance] + "/metrics"), timeout: .seconds(30))
    return try JSONDecoder().decode(Metrics.self, from: Data(String(buffer: try await response.body.collect(upTo: 1 << 16)).utf8))
}

/// When each trade's POST was sent, by sequence number.
let sentAt = Mutex<[Int: ContinuousClock.Instant]>([:])
/// POSTs that failed and were sent again.
let failedPosts = Mutex(0)

/// Publishes trade `index` through instance `index % count`, or the next live one; sends it again to the
/// next instance when it fails, up to 100 times. Returns its sequence number, nil if it never got in.
func publish(_ index: Int) async -> Int? {
    let symbol = ["ACME", "GLOBEX", "INITECH"][index % 3]
    var instance = instances.live(from: index % count)
    for attempt in 1...100 {
        var request = HTTPClientRequest(url: options.urls[instance] + "/trades?deadline_ms=5000")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{\"symbol\": \"\(symbol)\", \"price\": \(100 + index % 50), \"size\": \(1 + index % 9)}"))
        let sent = ContinuousClock.now
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 16)
            if response.status == .created,
                let seq = (try? JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: Any])?["seq"] as? Int
            {
                sentAt.withLock { $0[seq] = sent }
                return seq
            }
        } catch {}
        failedPosts.withLock { $0 += 1 }
        instance = instances.live(from: instance + 1)
        try? await Task.sleep(for: .milliseconds(10 * attempt))
    }
    return nil
}

/// Publishes trades `range` from `options.publishers` concurrent publishers; calls `halfway` once
/// half of them are in. Returns the sequence numbers of the trades that got in.
func publishAll(_ range: Range<Int>, halfway: @escaping @Sendable () -> Void = {}) async -> [Int] {
    let next = Counter(range)
    let done = Counter(0..<(range.count / 2))
    return await withTaskGroup(of: [Int].self) { group in
        for _ in 0..<options.publishers {
            group.addTask {
                var seqs: [Int] = []
                while let index = await next.take() {
                    if let seq = await publish(index) { seqs.append(seq) }
                    if await done.take() == nil, await done.claimOnce() { halfway() }
                }
                return seqs
            }
        }
        var all: [Int] = []
        for await seqs in group { all += seqs }
        return all
    }
}

/// Runs `command` with /bin/sh on a thread of its own and waits for it; returns its exit status.
/// (Not `Process`: its termination handler did not run here for a child that had exited.)
func run(_ command: String) async -> Int32 {
    return await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: system(command)) }
    }
}

/// The value below which `fraction` of `sorted` lies.
func percentile(_ sorted: [Duration], _ fraction: Double) -> Duration {
    guard !sorted.isEmpty else { return .zero }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))]
}

func milliseconds(_ duration: Duration) -> String {
    return String(format: "%.1f ms", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
}

var failures: [String] = []
let started = ContinuousClock.now
let baseline = try await (0..<count).asyncMap { try await metrics($0) }
let rssBefore = options.pids.map { residentKiB($0) }
let start = baseline.map(\.tradesPublished).max() ?? 0
if Set(baseline.map(\.tradesPublished)).count != 1 {
    failures.append("the instances start at different trades: \(baseline.map(\.tradesPublished))")
}
say("instances: \(count)")
say("clients: \(options.clients)")
say(
    "trades published: \(options.trades)\(options.faults ? " measured, then \(options.trades) with an instance killed and \(options.trades) after a database restart" : "")"
)

let goal = Goal()
let readiness = ReadyCount()
let clientTasks = (0..<options.clients).map { index in
    Task { await runClient(client: client, instances: instances, first: index % count, goal: goal, readiness: readiness) }
}

// Everyone subscribed, and nobody saw a trade yet (only this tool publishes).
let lastSeqs = await readiness.wait(for: options.clients)
let connected = ContinuousClock.now
let rssConnected = options.pids.map { residentKiB($0) }
if lastSeqs != [start] { failures.append("clients saw different lastSeq values at ready: \(lastSeqs.sorted())") }
let open = try await (0..<count).asyncMap { try await metrics($0) }
say("connect time: \(connected - started)")
say("streams open: \(open.map(\.streams).reduce(0, +)) (\(open.map { String($0.streams) }.joined(separator: " + ")))")
say("subscriptions open: \(open.map(\.subscriptions).reduce(0, +)) (baseline \(baseline.map(\.subscriptions).reduce(0, +)))")

// The measured trades: no fault, so every one must get in at the first attempt. Without faults that is
// every trade, so the clients know where to stop from the start.
if !options.faults { goal.set(start + options.trades) }
let measured = await publishAll(0..<options.trades)
if measured.count != options.trades { failures.append("only \(measured.count) of \(options.trades) trades were accepted") }
if failedPosts.withLock({ $0 }) != 0 { failures.append("\(failedPosts.withLock { $0 }) POSTs failed without a fault") }
var published = measured
if options.faults {
    let victim = 1
    say("--- fault: killing instance \(victim + 1) (pid \(options.pids[victim])) half way through \(options.trades) trades")
    published += await publishAll(options.trades..<(2 * options.trades)) {
        instances.markGone(victim)
        kill(pid_t(options.pids[victim]), SIGKILL)
    }
    say("--- fault: restarting the database")
    let status = await run(options.restartDatabase!)
    if status != 0 { failures.append("the database restart command exited \(status)") }
    published += await publishAll((2 * options.trades)..<(3 * options.trades))
    say("POSTs sent again after a failure: \(failedPosts.withLock { $0 })")
}
let target = published.max() ?? start
goal.set(target)

var results: [ClientResult] = []
for task in clientTasks { results.append(await task.value) }
let delivered = ContinuousClock.now
let receivedTotal = results.reduce(0) { $0 + $1.received }
let problems = results.compactMap(\.problem)
let expected = (target - start) * options.clients
say("events sent: \(expected) (\(target - start) trades x \(options.clients) streams)")
say("events delivered: \(receivedTotal)")
say("delivery time: \(delivered - connected)")
if options.faults {
    say("clients that resumed on another instance: \(results.filter { $0.reconnects > 0 }.count)")
    if results.filter({ $0.reconnects > 0 }).count < options.clients / count {
        failures.append("fewer clients resumed than were connected to the killed instance")
    }
}
if receivedTotal != expected { failures.append("delivered \(receivedTotal) events, sent \(expected)") }
if let first = problems.first { failures.append("\(problems.count) clients had a problem, the first: \(first)") }

// End to end: from sending the POST to parsing the event, for the measured trades.
let measuredSeqs = Set(measured)
let sent = sentAt.withLock { $0 }
var latencies: [Duration] = []
for result in results {
    for arrival in result.arrivals where measuredSeqs.contains(arrival.seq) {
        if let at = sent[arrival.seq] { latencies.append(arrival.at - at) }
    }
}
latencies.sort()
say(
    "end-to-end latency p50: \(milliseconds(percentile(latencies, 0.5))), p99: \(milliseconds(percentile(latencies, 0.99))) (\(latencies.count) events)"
)

// The clients are gone once their tasks returned (each returned from its response body loop, which
// closes the connection). Every instance still running must notice and dispose everything.
let survivors = (0..<count).filter { instances.live(from: $0) == $0 }
for instance in survivors {
    var after = try await metrics(instance)
    var waited = 0
    let base = baseline[instance]
    while after.streams != base.streams || after.subscriptions != base.subscriptions || after.bridgedTasks != 0, waited < 3000 {
        try await Task.sleep(for: .milliseconds(10))
        waited += 1
        after = try await metrics(instance)
    }
    if after.streams != base.streams || after.subscriptions != base.subscriptions || after.bridgedTasks != 0 {
        failures.append(
            "left behind on instance \(instance + 1): \(after.streams) streams, \(after.subscriptions) subscriptions, \(after.bridgedTasks) tasks"
        )
    }
    if after.tradesPublished != target {
        failures.append("instance \(instance + 1) is at trade \(after.tradesPublished), the log at \(target)")
    }
    if options.faults, let sessions = after.databaseSessions, sessions <= (base.databaseSessions ?? 0) {
        failures.append("instance \(instance + 1) did not reconnect to the database after its restart")
    }
    let sessions = after.databaseSessions.map { ", database sessions \($0)" } ?? ""
    say(
        "instance \(instance + 1) after: \(after.streams) streams, \(after.subscriptions - base.subscriptions) subscriptions above baseline, \(after.bridgedTasks) bridged tasks\(sessions)"
    )
}
if !options.pids.isEmpty {
    for instance in survivors {
        let pid = options.pids[instance]
        say(
            "instance \(instance + 1) memory: \(mib(rssBefore[instance])) before the clients, \(mib(rssConnected[instance])) with them, \(mib(residentKiB(pid, peak: true))) peak, \(mib(residentKiB(pid))) after"
        )
    }
    let before = rssBefore.compactMap { $0 }.reduce(0, +)
    let with = rssConnected.compactMap { $0 }.reduce(0, +)
    if before > 0, with > 0 {
        say(String(format: "server memory per connected streaming client: %.1f KiB", Double(with - before) / Double(options.clients)))
    }
}
if options.exportClients > 0 {
    // The export phase: a result far larger than what the slow clients read, streamed at their pace.
    let instance = survivors.first ?? 0
    let pid = options.pids.isEmpty ? nil : options.pids[instance]
    let url = options.urls[instance]
    let report = try await exportPhase(
        client: client, url: url, rows: options.exportRows, slow: options.exportClients, seconds: options.exportSeconds,
        memory: {
            if let pid { return residentKiB(pid) }
            return try? await metrics(instance).residentBytes.map { $0 / 1024 }
        },
        runningExports: { try? await metrics(instance).exports })
    say("export: \(report.fastRows) rows read whole by one client\(report.fastInOrder ? ", in order" : ", OUT OF ORDER")")
    if report.fastRows != options.exportRows || !report.fastInOrder {
        let order = report.fastInOrder ? "" : " out of order"
        failures.append("the export gave \(report.fastRows) rows\(order), expected \(options.exportRows)")
    }
    say(
        "export: \(options.exportClients) slow clients read \(report.slowBytes / 1024) KiB in \(Int(options.exportSeconds)) s of a \(options.exportRows)-row result each"
    )
    if report.slowRefused > 0 { failures.append("\(report.slowRefused) slow clients were refused their export") }
    say("export: one more export while they read: \(report.oneMoreExport); a trade posted meanwhile: \(report.tradeStatus)")
    if report.oneMoreExport != "503 export_busy" {
        failures.append("one export more than the server's limit answered \(report.oneMoreExport), not 503 export_busy")
    }
    if report.tradeStatus != 201 {
        failures.append("a trade posted while the slow clients read the export answered \(report.tradeStatus), not 201")
    }
    let shown = report.samples.map { String(format: "%.1f", Double($0) / 1024) }.joined(separator: " ")
    say("export: server memory every 0.5 s while they read (MiB): \(shown)")
    // After the first second (the clients connecting), memory must not grow with what they read.
    let settled = Array(report.samples.dropFirst(2))
    if let first = settled.first, let most = settled.max(), most - first > 64 * 1024 {
        failures.append("server memory grew by \(mib(most - first)) while slow clients read the export")
    }
}
try await client.shutdown().get()
if ContinuousClock.now - started > .seconds(options.limit) { failures.append("the run took longer than \(options.limit) s") }
for failure in failures { say("FAILED: \(failure)") }
exit(failures.isEmpty ? 0 : 1)

/// Hands out the numbers of a range, once each.
actor Counter {
    private var next: Int
    private let end: Int
    private var claimed = false

    init(_ range: Range<Int>) {
        self.next = range.lowerBound
        self.end = range.upperBound
    }

    func take() -> Int? {
        guard self.next < self.end else { return nil }
        defer { self.next += 1 }
        return self.next
    }

    /// True the first time only.
    func claimOnce() -> Bool {
        defer { self.claimed = true }
        return !self.claimed
    }
}

extension Range where Bound == Int {
    func asyncMap<T>(_ transform: (Int) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for index in self { results.append(try await transform(index)) }
        return results
    }
}

/// Prints `line` at once (unbuffered), so that a run that is stopped still shows how far it got.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
