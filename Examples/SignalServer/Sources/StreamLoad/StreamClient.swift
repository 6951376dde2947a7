import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// What one streaming client saw.
struct ClientResult: Sendable {
    /// Trades received after the first `ready`, each once.
    var received = 0
    /// When each trade arrived, by sequence number.
    var arrivals: [(seq: Int, at: ContinuousClock.Instant)] = []
    /// Times the client reconnected (to another instance) and resumed.
    var reconnects = 0
    /// The first problem: a gap, a repeat, a resync, an error; nil when every trade arrived in order.
    var problem: String?
}

/// The last trade every client must receive before it stops; unknown until the publishers are done
/// (with faults, the numbers of trades that failed are not known in advance).
final class Goal: Sendable {
    private let target = Mutex<(seq: Int, at: ContinuousClock.Instant)?>(nil)
    /// How long a client may go without a new trade once the goal is set before it counts as stalled.
    static let stallLimit = Duration.seconds(15)

    /// Sets the last trade to wait for.
    func set(_ seq: Int) {
        self.target.withLock { $0 = (seq, .now) }
    }

    /// Whether a client that has every trade through `seq` is done.
    func reached(_ seq: Int) -> Bool {
        return self.target.withLock { target in target.map { seq >= $0.seq } ?? false }
    }

    /// Whether a client whose last trade came at `lastProgress` has waited too long since the goal was
    /// set: every trade is published by then, so it should be arriving.
    func stalled(since lastProgress: ContinuousClock.Instant) -> Bool {
        guard let target = self.target.withLock({ $0 }) else { return false }
        return ContinuousClock.now - max(lastProgress, target.at) > Self.stallLimit
    }
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

/// The instances clients connect to, and which of them are known to be gone.
final class Instances: Sendable {
    let urls: [String]
    private let gone = Mutex<Set<Int>>([])

    init(urls: [String]) {
        self.urls = urls
    }

    /// Marks instance `index` as gone: nobody connects to it from now on.
    func markGone(_ index: Int) {
        _ = self.gone.withLock { $0.insert(index) }
    }

    /// The index of the first instance from `index` on (wrapping) that is not gone.
    func live(from index: Int) -> Int {
        let gone = self.gone.withLock { $0 }
        for offset in 0..<self.urls.count where !gone.contains((index + offset) % self.urls.count) {
            return (index + offset) % self.urls.count
        }
        return index % self.urls.count
    }
}

/// One client: subscribes to `/events` on instance `first`, reports its first `ready`, then reads
/// trades until it has every one through the goal, checking that each sequence number is one more
/// than the last. When the stream breaks (its instance died or shut down), it reconnects to the next
/// instance with `Last-Event-ID` and checks that the stream resumes right after the last trade it saw.
func runClient(client: HTTPClient, instances: Instances, first: Int, goal: Goal, readiness: ReadyCount) async -> ClientResult {
    var result = ClientResult()
    var lastSeq: Int?
    var instance = first
    var attempts = 0
    var lastProgress = ContinuousClock.now
    while true {
        var request = HTTPClientRequest(url: instances.urls[instance] + "/events")
        if let lastSeq { request.headers.add(name: "Last-Event-ID", value: String(lastSeq)) }
        var failure = ""
        do {
            let response = try await client.execute(request, timeout: .seconds(3600))
            guard response.status == .ok else {
                result.problem = "status \(response.status.code) from \(instances.urls[instance])"
                return result
            }
            var pending = ""
            for try await buffer in response.body {
                pending += String(buffer: buffer)
                while let end = pending.range(of: "\n\n") {
                    let block = String(pending[..<end.lowerBound])
                    pending.removeSubrange(..<end.upperBound)
                    if block.hasPrefix("event: ready") {
                        let seq = Int(block.split(separator: ":").last!.dropLast().trimmingCharacters(in: .whitespaces)) ?? -1
                        if let previous = lastSeq {
                            // A resumed stream starts right after the last trade this client saw.
                            if seq != previous {
                                result.problem = "resumed after \(previous) but the stream is ready at \(seq)"
                                return result
                            }
                        } else {
                            lastSeq = seq
                            await readiness.ready(lastSeq: seq)
                        }
                        attempts = 0
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
                        lastProgress = ContinuousClock.now
                        result.arrivals.append((seq, lastProgress))
                    } else if block.hasPrefix("event: resynced") {
                        result.problem = "the stream was resynchronised: \(block)"
                        return result
                    }
                    if let lastSeq, goal.reached(lastSeq) { return result }
                    if goal.stalled(since: lastProgress) {
                        result.problem =
                            "stalled after trade \(lastSeq ?? -1) on \(instances.urls[instance]) (resumed \(result.reconnects) times)"
                        return result
                    }
                }
            }
            failure = "the stream ended"
        } catch {
            failure = "\(error)"
        }
        // The instance went away (or ended the stream on shutdown): resume on the next live one.
        guard lastSeq != nil, attempts < 50 else {
            result.problem = "\(failure) (from \(instances.urls[instance]), \(result.received) trades received)"
            return result
        }
        attempts += 1
        result.reconnects += 1
        instance = instances.live(from: instance + 1)
        try? await Task.sleep(for: .milliseconds(20 * attempts))
    }
}
