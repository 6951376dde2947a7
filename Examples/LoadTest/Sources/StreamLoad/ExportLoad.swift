import AsyncHTTPClient
import Foundation
import NIOCore

/// What the export phase saw.
struct ExportReport: Sendable {
    /// The server's resident memory in KiB, sampled every half second while the slow clients read.
    var samples: [Int] = []
    /// Bytes the slow clients read in all.
    var slowBytes = 0
    /// Rows the fast client read, and whether they were 1, 2, ... in order.
    var fastRows = 0
    var fastInOrder = true
}

/// The export phase: one client reads `/export?rows=rows` whole and checks its rows; then `slow` clients
/// read the same export at about 1 KiB every 10 ms for `seconds`, and leave, while the server's resident
/// memory is sampled (`memory` gives it in KiB). A server that buffered the result for its slow clients
/// would grow by their share of it; one that reads the database at their pace stays flat.
func exportPhase(
    client: HTTPClient, url: String, rows: Int, slow: Int, seconds: Double, memory: @escaping @Sendable () async -> Int?
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

    let deadline = ContinuousClock.now + .seconds(seconds)
    async let samples = sampleMemory(until: deadline, memory)
    report.slowBytes = await withTaskGroup(of: Int.self) { group in
        for _ in 0..<slow {
            group.addTask {
                var read = 0
                do {
                    let response = try await client.execute(HTTPClientRequest(url: path), timeout: .seconds(600))
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
        var total = 0
        for await bytes in group { total += bytes }
        return total
    }
    report.samples = await samples
    return report
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
