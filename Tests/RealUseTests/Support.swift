import Dispatch
import Foundation
import SwiftSignalKit

/// How long a scenario may take before it counts as hung. Generous: a passing scenario takes
/// milliseconds, and this bound only turns a deadlock into a failure instead of a stuck CI run.
let hangLimit: DispatchTimeInterval = .seconds(60)

/// Runs `body` on a thread of its own and returns whether it returned before ``hangLimit``. A body that
/// deadlocks is left blocked on its thread; the test fails instead of hanging.
///
/// Async, so that the test waits without blocking a thread of the cooperative pool: the pool is as
/// small as the machine (two threads in CI), and tasks the body starts need it.
func finishes(_ body: @escaping @Sendable () -> Void) async -> Bool {
    return await withCheckedContinuation { continuation in
        let answered = Atomic(value: false)
        Thread {
            body()
            if !answered.swap(true) { continuation.resume(returning: true) }
        }.start()
        DispatchQueue.global().asyncAfter(deadline: .now() + hangLimit) {
            if !answered.swap(true) { continuation.resume(returning: false) }
        }
    }
}

/// Runs `body` in a task and returns whether it finished before ``hangLimit``.
func finishes(_ body: @escaping @Sendable () async -> Void) async -> Bool {
    return await withCheckedContinuation { continuation in
        let answered = Atomic(value: false)
        Task.detached {
            await body()
            if !answered.swap(true) { continuation.resume(returning: true) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + hangLimit) {
            if !answered.swap(true) { continuation.resume(returning: false) }
        }
    }
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
