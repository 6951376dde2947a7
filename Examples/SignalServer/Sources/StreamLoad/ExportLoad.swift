import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What the export phase saw.
struct ExportReport: Sendable {
    /// The server's resident memory in KiB, sampled every half second while the slow clients read.
    var samples: [Int] = []
    /// Bytes the slow clients read in all.
    var slowBytes = 0
    /// Rows the fast client read, and whether they were 1, 2, ... in order.
    var fastRows = 0
    var fastInOrder = true
    /// What one more export answered while the slow clients held every place (a status and the error
    /// code), and what a `POST /trades` to the same instance answered meanwhile: the exports must not
    /// take what publishing needs (with a database, its connections).
    var oneMoreExport = ""
    var tradeStatus: UInt = 0
    /// Slow clients whose export was not answered 200.
    var slowRefused = 0
}

/// The export phase: one client reads `/export?rows=rows` whole and checks its rows; then `slow` clients
/// read the same export at about 1 KiB every 10 ms for `seconds`, and leave, while the server's resident
/// memory is sampled (`memory` gives it in KiB). A server that buffered the result for its slow clients
/// would grow by their share of it; one that reads the database at their pace stays flat.
func exportPhase(
    client: HTTPClient, url: String, rows: Int, slow: Int, seconds: Double, memory: @escaping @Sendable () async -> Int?,
    runningExports: @Sendable () async -> Int?
) async throws -> ExportReport {
    var report = ExportReport()
    let path = url + "/export?rows=\(rows)"

    let response = try await client.execute(HTTPClientRequest(url: path), timeout: .seconds(600))
    var pending = ""
    for try await buffer in response.body {
        pending += String(buffer: buffer)
        while let end = pending.firstIndex(of: "\n") {
            let line = pending[..<end]
            report.fastRows += 1
            if Int(line.prefix { $0 != "," }) != report.fastRows { report.fastInOrder = false }
            pending.removeSubrange(...end)
        }
    }

    // The whole read's place is given back once its response is released, which may be just after the
    // client has read the last byte: wait for it, so that every slow client finds a place.
    for _ in 0..<1_000 where await runningExports() != 0 { try await Task.sleep(for: .milliseconds(10)) }

    let deadline = ContinuousClock.now + .seconds(seconds)
    async let samples = sampleMemory(until: deadline, memory)
    async let probes = probeWhileExporting(client: client, url: url, path: path, after: .seconds(min(1.5, seconds / 2)))
    let slowReads = await withTaskGroup(of: Int?.self) { group in
        for _ in 0..<slow {
            group.addTask {
                var read = 0
                do {
                    let response = try await client.execute(HTTPClientRequest(url: path), timeout: .seconds(600))
                    if response.status != .ok { return nil }
                    for try await buffer in response.body {
                        read += buffer.readableBytes
                        if ContinuousClock.now > deadline { break }
                        // About 1 KiB every 10 ms: the body is read from the socket only as it is asked for.
                        try await Task.sleep(for: .milliseconds(10 * max(1, buffer.readableBytes / 1024)))
                    }
                } catch {}
                return read
            }
        }
        var reads: [Int?] = []
        for await bytes in group { reads.append(bytes) }
        return reads
    }
    report.slowBytes = slowReads.compactMap { $0 }.reduce(0, +)
    report.slowRefused = slowReads.count { $0 == nil }
    report.samples = await samples
    (report.oneMoreExport, report.tradeStatus) = await probes
    return report
}

/// After `after`, once the slow clients hold their exports: asks for one more export (the server runs
/// as many as there are slow clients, so it must refuse at once) and publishes a trade through the same
/// instance. Returns the export's status and error code, and the trade's status (0 when a request failed).
func probeWhileExporting(client: HTTPClient, url: String, path: String, after: Duration) async -> (String, UInt) {
    try? await Task.sleep(for: after)
    var oneMore = "no answer"
    if let response = try? await client.execute(HTTPClientRequest(url: path), timeout: .seconds(30)) {
        let body = (try? await response.body.collect(upTo: 1 << 16)).map { String(buffer: $0) } ?? ""
        let code = body.contains("\"export_busy\"") ? " export_busy" : ""
        oneMore = "\(response.status.code)\(code)"
    }
    // A deadline long enough for a loaded machine; a trade with no database connection to take waits it out.
    var trade = HTTPClientRequest(url: url + "/trades?deadline_ms=5000")
    trade.method = .POST
    trade.headers.add(name: "content-type", value: "application/json")
    trade.body = .bytes(ByteBuffer(string: "{\"symbol\": \"ACME\", \"price\": 100, \"size\": 1}"))
    let status = (try? await client.execute(trade, timeout: .seconds(30)))?.status.code ?? 0
    return (oneMore, status)
}

/// `memory()` every half second until `deadline`.
func sampleMemory(until deadline: ContinuousClock.Instant, _ memory: @Sendable () async -> Int?) async -> [Int] {
    var samples: [Int] = []
    while ContinuousClock.now < deadline {
        if let kib = await memory() { samples.append(kib) }
        try? await Task.sleep(for: .milliseconds(500))
    }
    return samples
}
