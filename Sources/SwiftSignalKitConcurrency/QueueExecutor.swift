import SwiftSignalKit

/// A `Queue` as the serial executor of actors, so that actor code and legacy code
/// confined to the queue (`queue.async { }`, `QueueLocalObject`) run on one serial executor.
///
/// ```swift
/// actor Sessions {
///     private let executor: QueueExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor { self.executor.asUnownedSerialExecutor() }
///     init(queue: Queue) { self.executor = QueueExecutor(queue: queue) }
/// }
/// ```
///
/// - Jobs are enqueued with `DispatchQueue.async`, in the order they are submitted, so actor work and
///   plain `queue.async` blocks submitted from one thread run in submission order. The order is the
///   order in which jobs reach this executor: a task resumed from a continuation
///   (`withCheckedContinuation`) may be scheduled by the runtime before it comes back to the actor, so
///   a block dispatched to the queue right after `resume` can run before the resumed task does.
/// - `checkIsolated()` asks the queue whether it is current, so `assumeIsolated` succeeds inside any
///   block running on the queue, and inside `Queue.sync` blocks nested in such a block (the waiting
///   caller owns the queue; see `Queue.isCurrent()`), and traps elsewhere.
/// - Executors made for the same queue count as one execution context: actors on the same queue call
///   each other without hops.
///
/// > Important: The queue must be serial (`Queue.init(name:qos:)` makes serial queues);
/// > a concurrent queue would run actor jobs in parallel. A global concurrent queue
/// > (`Queue.concurrentDefaultQueue()`, a wrapped `DispatchQueue.global`) stops the process with a
/// > message; a concurrent queue made elsewhere and wrapped cannot be told from a serial one. For the
/// > main queue, use `@MainActor` instead: an executor made for `Queue.mainQueue()` is accepted, but
/// > its jobs run only while something drains the main queue (an `async` `main`, `dispatchMain()`, or
/// > a run loop), so in a program whose synchronous top-level code never does, they never run.
///
/// The actor must keep its executor alive (store it), because `UnownedSerialExecutor` does not retain
/// it.
public final class QueueExecutor: SerialExecutor {
    /// The queue the jobs run on.
    public let queue: Queue

    /// Creates an executor for `queue`.
    ///
    /// - Parameter queue: A serial queue.
    public init(queue: Queue) {
        if queue.isGlobalConcurrentQueue {
            misuse(
                "QueueExecutor(queue:): the queue must be serial, and \(queue.queue.label) is a global concurrent "
                    + "queue, which would run the actor's jobs in parallel. Give the actor a serial queue: Queue(name:)")
        }
        self.queue = queue
    }

    /// Runs `job` on the queue, after everything submitted to the queue before it.
    ///
    /// - Parameter job: The job to run.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedSerialExecutor()
        self.queue.justDispatch {
            job.runSynchronously(on: executor)
        }
    }

    /// This executor, compared with others by queue.
    ///
    /// - Returns: An unowned reference that treats executors of the same queue as one context.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        return UnownedSerialExecutor(complexEquality: self)
    }

    /// Whether `other` runs on the same queue.
    ///
    /// - Parameter other: Another queue executor.
    /// - Returns: true when both use the same `Queue` object.
    public func isSameExclusiveExecutionContext(other: QueueExecutor) -> Bool {
        return other.queue === self.queue
    }

    /// Traps unless the calling code runs on the queue.
    public func checkIsolated() {
        if !self.queue.isCurrent() {
            misuse("expected to run on the queue of this QueueExecutor (\(self.queue.queue.label)), but the current code is elsewhere")
        }
    }
}
