import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What one streaming client saw.
struct ClientResult: Sendable {
    /// Trades received after `ready`.
    var received = 0
    /// The first problem: a gap, a repeat, an error; nil when every trade arrived in order.
    var problem: String?
}

/// Counts clients that are subscribed, and lets the publisher wait for all of them.
actor ReadyCount {
    private var count = 0
    private var lastSeqs: Set<Int> = []
    /// The publisher waiting for this many clients, if it waits.
    private var waiter: (count: Int, continuation: CheckedContinuation<Set<Int>, Never>)?

    func ready(lastSeq: Int) {
        self.count += 1
        self.lastSeqs.insert(lastSeq)
        if let waiter = self.waiter, waiter.count <= self.count {
            self.waiter = nil
            waiter.continuation.resume(returning: self.lastSeqs)
        }
    }

    /// Waits until `count` clients are ready; returns the `lastSeq` values they reported. One waiter at
    /// a time.
    func wait(for count: Int) async -> Set<Int> {
        if self.count >= count { return self.lastSeqs }
        precondition(self.waiter == nil, "ReadyCount.wait(for:) is already waited on")
        return await withCheckedContinuation { self.waiter = (count, $0) }
    }
}

/// One client: subscribes to `/events`, reports `ready`, then reads trades until it has `expected` of
/// them, checking that each sequence number is one more than the last.
func runClient(client: HTTPClient, url: String, expected: Int, readiness: ReadyCount) async -> ClientResult {
    var result = ClientResult()
    do {
        let response = try await client.execute(HTTPClientRequest(url: url + "/events"), timeout: .seconds(3600))
        guard response.status == .ok else {
            result.problem = "status \(response.status.code)"
            return result
        }
        var pending = ""
        var lastSeq: Int?
        for try await buffer in response.body {
            pending += String(buffer: buffer)
            while let end = pending.range(of: "\n\n") {
                let block = String(pending[..<end.lowerBound])
                pending.removeSubrange(..<end.upperBound)
                if block.hasPrefix("event: ready") {
                    let seq = Int(block.split(separator: ":").last!.dropLast().trimmingCharacters(in: .whitespaces)) ?? -1
                    lastSeq = seq
                    await readiness.ready(lastSeq: seq)
                } else if block.hasPrefix("event: trade") {
                    guard let previous = lastSeq else {
                        result.problem = "a trade before ready"
                        return result
                    }
                    let idLine = block.split(separator: "\n").first { $0.hasPrefix("id: ") }
                    let seq = idLine.flatMap { Int($0.dropFirst(4)) } ?? -1
                    if seq != previous + 1 {
                        result.problem = "expected seq \(previous + 1), got \(seq)"
                        return result
                    }
                    lastSeq = seq
                    result.received += 1
                    if result.received == expected { return result }
                } else if block.hasPrefix("event: end") {
                    result.problem = "the server ended the stream: \(block)"
                    return result
                }
            }
        }
        result.problem = "the stream ended after \(result.received) trades"
    } catch {
        result.problem = "\(error)"
    }
    return result
}
