import Foundation
import SwiftSignalKit
import SwiftSignalKitTesting
import Synchronization
import Testing

/// How many times each timeline scenario runs in one test: 100, or `SWIFTSIGNALKIT_TIMELINE_REPETITIONS`
/// (CI's stress stage runs 1,000).
let timelineRepetitions = ProcessInfo.processInfo.environment["SWIFTSIGNALKIT_TIMELINE_REPETITIONS"].flatMap(Int.init) ?? 100

/// What a scenario saw, one line per event, each stamped with the virtual time.
final class TimelineLog: Sendable {
    let scheduler: VirtualTimeScheduler
    private let lines = Mutex<[String]>([])

    init(_ scheduler: VirtualTimeScheduler) {
        self.scheduler = scheduler
    }

    func callAsFunction(_ line: String) {
        let time = self.scheduler.now
        self.lines.withLock { $0.append("\(time) \(line)") }
    }

    var all: [String] {
        return self.lines.withLock { $0 }
    }
}

/// Runs `scenario` on a fresh scheduler's timeline ``timelineRepetitions`` times, expects the same log
/// every time, and returns it.
func timelineLog(
    timeLimit: Double = 3600,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ scenario: @escaping @Sendable (VirtualTimeScheduler, TimelineLog) async throws -> Void
) async throws -> [String] {
    var first: [String]?
    for run in 0..<timelineRepetitions {
        let scheduler = VirtualTimeScheduler()
        let log = TimelineLog(scheduler)
        try await scheduler.run(timeLimit: timeLimit) {
            try await scenario(scheduler, log)
        }
        let lines = log.all
        if let first {
            if lines != first {
                Issue.record("run \(run) differs from run 0:\n\(lines)\nvs\n\(first)", sourceLocation: sourceLocation)
                return first
            }
        } else {
            first = lines
        }
    }
    return first ?? []
}

extension VirtualTimeScheduler {
    /// Sleeps the calling task on this scheduler's clock until `seconds` of virtual time.
    func sleep(until seconds: Double) async throws {
        try await self.clock.sleep(until: VirtualClock.Instant(offset: .seconds(seconds)))
    }

    /// Sleeps the calling task for `seconds` of virtual time; a cancelled sleep returns false.
    @discardableResult func sleep(for seconds: Double) async -> Bool {
        do {
            try await self.clock.sleep(for: .seconds(seconds))
            return true
        } catch {
            return false
        }
    }

    /// Runs `action` at `seconds` of virtual time.
    func at(_ seconds: Double, _ action: @escaping @Sendable () -> Void) {
        _ = self.schedule(after: seconds - self.now, action)
    }
}

/// An error for scenarios that fail.
struct Failure: Error, Equatable, CustomStringConvertible {
    let attempt: Int
    var description: String { "failure \(self.attempt)" }
}

/// The numbers 1...count, logging each pull: shows how far a paced producer reads ahead.
struct LoggedNumbers: AsyncSequence, Sendable {
    let count: Int
    let log: TimelineLog

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let log: TimelineLog
        var next = 1

        mutating func next() async -> Int? {
            guard self.next <= self.count, !Task.isCancelled else { return nil }
            defer { self.next += 1 }
            self.log("pulled \(self.next)")
            return self.next
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(count: self.count, log: self.log)
    }
}

/// A default actor, to show that actors without an executor of their own run on the timeline.
actor RunningTotal {
    private var total = 0

    func add(_ value: Int) -> Int {
        self.total += value
        return self.total
    }
}

/// A signal that sends `values` and completes while it starts.
func sentAtOnce<S: Sequence & Sendable>(_ values: S) -> Signal<S.Element, NoError> where S.Element: Sendable {
    return Signal { subscriber in
        for value in values {
            subscriber.putNext(value)
        }
        subscriber.putCompletion()
        return EmptyDisposable
    }
}
