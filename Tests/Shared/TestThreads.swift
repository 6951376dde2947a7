// Threads for tests, shared by every test target that runs synchronous work on threads (a link to this
// file sits in each of them).
//
// The rule these helpers keep: a test never blocks a thread of the cooperative pool. The pool has as
// many threads as the machine has cores (two in CI), and `swift test` runs Swift Testing's tests as
// tasks on it, in parallel. A test that waits on a semaphore, joins a thread or spins on a pool thread
// takes that thread from every other test for as long as it waits; two such tests at once leave async
// tests none, and they stall (issue #27). So synchronous stress work runs on threads the test starts
// (`onThread`, `concurrently`), and the test awaits their end through a continuation. The blocking
// primitives (`blockingWait`, `blockingSpin`) are for those threads only, and stop the process with a
// message naming the mistake when called from a task. `Scripts/check-no-blocking-tests.py` finds raw
// waits anywhere else in test code.

import Dispatch
import Foundation
import SwiftSignalKit
import Testing

/// Whether the tests run under ThreadSanitizer (`swift test --sanitize=thread`), found by the sanitizer's
/// runtime in the process. The sanitizer makes every memory access many times slower, and it reports a
/// race from one unsynchronised pair of accesses, without the unlucky timing that a stress test's many
/// rounds search for; so stress tests run fewer rounds under it (`stressRounds(_:)`).
let isRunningUnderThreadSanitizer: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

/// `rounds` in a plain build; a tenth of it under ThreadSanitizer (see `isRunningUnderThreadSanitizer`).
func stressRounds(_ rounds: Int) -> Int {
    isRunningUnderThreadSanitizer ? max(1, rounds / 10) : rounds
}

/// Whether the caller runs as part of a task: on a thread of the cooperative pool or on an actor's
/// executor (the main actor included), where blocking takes the thread from other tasks.
var isInATask: Bool {
    withUnsafeCurrentTask { $0 != nil }
}

/// Stops the process when a blocking helper is called from a task, naming the helper and the fix.
private func requireOwnThread(_ helper: String, file: StaticString, line: UInt) {
    if isInATask {
        // fatalError, not preconditionFailure: the message must show in release builds too.
        fatalError(
            "\(helper) blocks its thread, and was called from a task (\(file):\(line)): it would hold a thread of "
                + "the cooperative pool. Await `onThread`, `concurrently`, `wait(_:seconds:)` or `spin(until:)` instead.",
            file: file, line: line)
    }
}

/// Resumes a continuation once, with the first result offered: the last thread's end, or a deadline.
private nonisolated final class OnceResumer<Result: Sendable>: @unchecked Sendable {
    // Safe: `continuation`, `remaining` and `onResume` are read and written only with `lock` held; the continuation is
    // resumed after the lock is released.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result, Never>?
    private var remaining: Int
    private var onResume: (@Sendable () -> Void)?

    init(_ continuation: CheckedContinuation<Result, Never>, remaining: Int) {
        self.continuation = continuation
        self.remaining = remaining
    }

    /// Sets what runs once the last part has finished, after the continuation is resumed.
    func whenAllFinished(_ action: @escaping @Sendable () -> Void) {
        self.lock.withLock { self.onResume = action }
    }

    /// Counts one part as done; resumes with `result` when it was the last.
    func partFinished(_ result: Result) {
        let continuation: CheckedContinuation<Result, Never>? = self.lock.withLock {
            self.remaining -= 1
            guard self.remaining == 0 else { return nil }
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(returning: result)
        if continuation != nil { self.lock.withLock { self.onResume }?() }
    }

    /// Resumes with `result` unless already resumed.
    func resumeNow(_ result: Result) {
        let continuation: CheckedContinuation<Result, Never>? = self.lock.withLock {
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(returning: result)
    }
}

/// A work item that runs at a deadline unless cancelled first.
private nonisolated final class Deadline: @unchecked Sendable {
    // Safe: a DispatchWorkItem's `cancel()` and its scheduling are thread-safe; `item` is never replaced.
    let item: DispatchWorkItem

    init(_ action: @escaping @Sendable () -> Void) {
        self.item = DispatchWorkItem(block: action)
    }
}

/// Runs `body` on a thread of its own and returns its result. The awaiting task holds no thread meanwhile.
///
/// Use it for synchronous work that takes long (a million subscriptions) or blocks (waits for another
/// thread): on a pool thread it would starve the tests that run beside it.
@discardableResult
func onThread<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { (continuation: CheckedContinuation<R, Never>) in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.stackSize = 8 << 20  // as the main thread's: some tests check that deep work keeps the stack flat
        thread.start()
    }
}

/// Runs `body(index)` on `count` threads of their own at once and returns when all are done, holding no
/// thread of the pool meanwhile. After `timeLimit` seconds it records an issue and returns, leaving the
/// threads that have not finished behind (a hang fails the test instead of the whole run).
///
/// Real threads rather than `DispatchQueue.concurrentPerform`, which may run iterations one after another
/// when the machine is busy, so an iteration that waits for another could spin alone.
func concurrently(
    _ count: Int, timeLimit: Double = 120, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) async {
    guard count > 0 else { return }
    let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let resumer = OnceResumer(continuation, remaining: count)
        resumeAtDeadline(resumer, after: timeLimit)
        for index in 0..<count {
            let thread = Thread {
                body(index)
                resumer.partFinished(true)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
    if !finished {
        Issue.record("a thread of `concurrently` did not finish within \(Int(timeLimit)) seconds", sourceLocation: sourceLocation)
    }
}

/// Runs `body` in a task (not detached: its expectations belong to the calling test) and returns true
/// once it has finished, or false when `seconds` pass first (the body is left running): a hang fails the
/// test instead of the whole run.
func finishesBeforeDeadline(seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let resumer = OnceResumer(continuation, remaining: 1)
        resumeAtDeadline(resumer, after: seconds)
        Task {
            await body()
            resumer.partFinished(true)
        }
    }
}

/// Resumes `resumer` with false after `seconds`, unless all its parts have finished by then. A deadline
/// for a hang, not a wait for something not to happen.
private func resumeAtDeadline(_ resumer: OnceResumer<Bool>, after seconds: Double) {
    let deadline = Deadline { resumer.resumeNow(false) }
    resumer.whenAllFinished { deadline.item.cancel() }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline.item)  // no-sleep-check: the hang deadline
}

/// Returns once every block queued on `queue` before the call has run, holding no thread meanwhile: the
/// barrier `queue.sync {}` is, without blocking the caller's thread.
func drain(_ queue: Queue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.justDispatch { continuation.resume() }
    }
}

/// ``drain(_:)-(Queue)`` for a Dispatch queue; `barrier` for a concurrent one.
func drain(_ queue: DispatchQueue, barrier: Bool = false) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async(flags: barrier ? .barrier : []) { continuation.resume() }
    }
}

/// Waits up to `seconds` for `semaphore` on a thread of its own; returns whether it was signalled. The
/// default bound is for a hang: under a loaded machine a thread's turn can take seconds.
func wait(_ semaphore: DispatchSemaphore, seconds: Double = 60) async -> Bool {
    await onThread { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Waits up to `seconds` for `semaphore`, blocking the calling thread, which must be one the test started
/// (a thread of ``onThread(_:)`` or ``concurrently(_:timeLimit:sourceLocation:_:)``, or a queue's thread).
/// Called from a task, it stops the process with a message.
func blockingWait(
    _ semaphore: DispatchSemaphore, seconds: Double = 60, file: StaticString = #fileID, line: UInt = #line
) -> Bool {
    requireOwnThread("blockingWait", file: file, line: line)
    return semaphore.wait(timeout: .now() + seconds) == .success
}

/// Waits (yielding the processor, on a thread of its own) until `condition` holds or `limit` checks
/// have failed; returns whether it held.
@discardableResult
func spin(until condition: @escaping @Sendable () -> Bool, limit: Int = 50_000_000) async -> Bool {
    await onThread { spinLoop(until: condition, limit: limit) }
}

/// ``spin(until:limit:)`` on the calling thread, which must be one the test started. Called from a task,
/// it stops the process with a message.
@discardableResult
func blockingSpin(
    until condition: () -> Bool, limit: Int = 50_000_000, file: StaticString = #fileID, line: UInt = #line
) -> Bool {
    requireOwnThread("blockingSpin", file: file, line: line)
    return spinLoop(until: condition, limit: limit)
}

/// Gives the processor to another thread once, to widen a race window; on a thread the test started.
func yieldProcessor(file: StaticString = #fileID, line: UInt = #line) {
    requireOwnThread("yieldProcessor", file: file, line: line)
    sched_yield()
}

nonisolated private func spinLoop(until condition: () -> Bool, limit: Int) -> Bool {
    var checks = 0
    while !condition() {
        checks += 1
        if checks > limit { return false }
        sched_yield()
    }
    return true
}

/// Runs `body` when no other test that blocks a thread of the pool on purpose is running, and keeps the
/// others out until it returns. Tests about blocking itself (a consumer that blocks its thread, a pool
/// made busy) take turns here: two of them at once could take every thread of the pool between them,
/// and each would wait for a thread the other holds. Waiting for a turn holds no thread.
func takingTurnsToBlockThePool<R: Sendable>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
) async rethrows -> R {
    if PoolBlockingTurns.holding {
        fatalError("takingTurnsToBlockThePool called inside itself: the inner call would wait for good")
    }
    await PoolBlockingTurns.shared.take()
    do {
        let result = try await PoolBlockingTurns.$holding.withValue(true) { try await body() }
        await PoolBlockingTurns.shared.hand()
        return result
    } catch {
        await PoolBlockingTurns.shared.hand()
        throw error
    }
}

/// The turns of ``takingTurnsToBlockThePool(isolation:_:)``: first come, first served.
private actor PoolBlockingTurns {
    static let shared = PoolBlockingTurns()
    /// Whether the current task holds the turn.
    @TaskLocal static var holding = false
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        if self.taken {
            await withCheckedContinuation { self.waiting.append($0) }  // the turn is handed over taken
        } else {
            self.taken = true
        }
    }

    func hand() {
        if self.waiting.isEmpty {
            self.taken = false
        } else {
            self.waiting.removeFirst().resume()
        }
    }
}
