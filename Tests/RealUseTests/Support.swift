import Dispatch
import Foundation
import SwiftSignalKit

/// How long a scenario may go without progress before it counts as hung. Generous: a passing scenario
/// takes milliseconds per step even on a loaded two-core machine under ThreadSanitizer.
let hangLimit: Double = 120

/// Stops the whole test process, with a message naming the scenario, when a scenario makes no progress
/// for ``hangLimit`` seconds.
///
/// A deadlock in these scenarios can take every thread of the cooperative pool with it (a cancellation
/// handler blocked for good holds its thread), and then not even a timeout can resume the test. So the
/// watchdog runs on a thread of its own and ends the process: the run fails with the scenario's name
/// instead of hanging CI.
final class Watchdog: Sendable {
    private let scenario: String
    private let limit: Double
    private let lastProgress = Atomic(value: DispatchTime.now())
    private let stopped = DispatchSemaphore(value: 0)

    /// - Parameter limit: Seconds without progress that count as a hang.
    init(_ scenario: String, limit: Double = hangLimit) {
        self.scenario = scenario
        self.limit = limit
        let thread = Thread { [self] in
            // Waits for `stop()`, looking at the progress every half second.
            while self.stopped.wait(timeout: .now() + 0.5) == .timedOut {  // blocking-check: the watchdog's own thread
                // Progress may be reported between the two readings, so the last progress can be later
                // than `now`: that counts as no idle time, not as an unsigned underflow.
                let last = self.lastProgress.with { $0 }.uptimeNanoseconds
                let now = DispatchTime.now().uptimeNanoseconds
                let idle = Double(now > last ? now - last : 0) / 1e9
                if idle > self.limit {
                    fatalError("RealUseTests: '\(self.scenario)' made no progress for \(Int(self.limit)) s: it hangs")
                }
            }
        }
        thread.start()
    }

    /// The scenario moved on.
    func progressed() {
        _ = self.lastProgress.swap(.now())
    }

    func stop() {
        self.stopped.signal()
    }
}

/// Runs `body` on a thread of its own under a ``Watchdog`` and returns true once it has returned. The
/// test waits without blocking a thread of the cooperative pool (as small as the machine: two threads
/// in CI), which tasks the body starts need.
///
/// - Parameters:
///   - scenario: Named in the watchdog's message; defaults to the test's name.
///   - body: The scenario; it may report progress to the watchdog it is given.
func finishes(_ scenario: String = #function, _ body: @escaping @Sendable (Watchdog) -> Void) async -> Bool {
    let watchdog = Watchdog(scenario)
    return await withCheckedContinuation { continuation in
        Thread {
            body(watchdog)
            watchdog.stop()
            continuation.resume(returning: true)
        }.start()
    }
}

/// ``finishes(_:_:)`` for a body that needs no watchdog.
func finishes(_ scenario: String = #function, _ body: @escaping @Sendable () -> Void) async -> Bool {
    return await finishes(scenario) { (_: Watchdog) in body() }
}

/// Runs `body` in a task under a ``Watchdog`` and returns true once it has finished.
///
/// The body reports no progress, so the watchdog's limit covers all of it: four times ``hangLimit``,
/// since a body that waits on the cooperative pool (`eventually`, a detached task) takes as long as the
/// rest of the suite keeps the pool busy, and a stop here ends every test of the run.
func finishes(_ scenario: String = #function, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let watchdog = Watchdog(scenario, limit: 4 * hangLimit)
    await Task.detached { await body() }.value
    watchdog.stop()
    return true
}

/// A thread-safe list of what happened, in order.
final class Log<Element: Sendable>: Sendable {
    private let storage = Atomic<[Element]>(value: [])
    var entries: [Element] { self.storage.with { $0 } }
    func append(_ element: Element) { _ = self.storage.modify { $0 + [element] } }
}

/// A thread-safe counter.
final class Count: Sendable {
    private let storage = Atomic(value: 0)
    var value: Int { self.storage.with { $0 } }
    @discardableResult func increment() -> Int { self.storage.modify { $0 + 1 } }
}

/// A user's own lock, the kind a callback takes.
final class UserLock: @unchecked Sendable {
    // Safe: an NSLock is thread-safe.
    private let lock = NSLock()
    func locked<R>(_ body: () throws -> R) rethrows -> R {
        self.lock.lock()
        defer { self.lock.unlock() }
        return try body()
    }
}
