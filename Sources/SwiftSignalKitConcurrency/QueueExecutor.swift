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
/// - Executors made for the same `Queue` object are one executor to the runtime: an actor on the queue
///   calls another actor on it inline, without a hop, so work queued there meanwhile does not run before
///   the callee's first suspension. (Executors of two `Queue` objects that wrap one `DispatchQueue` stay
///   two.) A task that starts on the queue enters the queue's actors at once too: the first part of a
///   `Task.immediate {}` isolated to an actor of the queue, started there, runs inline, up to its first
///   suspension.
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
    /// The executor the runtime knows: the queue's one, shared by every `QueueExecutor` of the queue.
    private let jobs: QueueJobs

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
        self.jobs = QueueJobs.of(queue)
    }

    /// Runs `job` on the queue, after everything submitted to the queue before it.
    ///
    /// - Parameter job: The job to run.
    public func enqueue(_ job: consuming ExecutorJob) {
        self.jobs.enqueue(job)
    }

    /// The queue's executor, the same object for every `QueueExecutor` of this `Queue`.
    ///
    /// - Returns: An unowned reference to it, which this executor keeps alive by keeping the queue.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        return self.jobs.asUnownedSerialExecutor()
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
        self.jobs.checkIsolated()
    }
}

/// The serial executor of one `Queue`, which every `QueueExecutor` and `QueueLocalActor` of that queue
/// hands to the runtime, so that their actors share one executor identity.
///
/// Why one object and not executors that compare equal: when one actor calls another, the runtime
/// decides whether to hop by comparing the two executors' identities alone (the equality that
/// `isSameExclusiveExecutionContext` gives serves `assumeIsolated`, not that decision). The queue holds
/// this object (`Queue.executionContext(orMake:)`) and this object holds the queue unowned: it lives
/// exactly as long as the queue, which every actor on it keeps alive.
final class QueueJobs: SerialExecutor {
    unowned let queue: Queue

    private init(queue: Queue) {
        self.queue = queue
    }

    /// The executor of `queue`, made on first use.
    static func of(_ queue: Queue) -> QueueJobs {
        return queue.executionContext { QueueJobs(queue: queue) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedSerialExecutor()
        // Named here, before `justDispatch` would name it as a plain block: on a virtual timeline the
        // job is dropped like any work sent to a queue, and the failure says that an actor sent it.
        if TimelineExecutor.refusesDeparture("a job of an actor on the Queue \(self.queue.queue.label) (QueueExecutor, QueueLocalActor)") {
            return
        }
        self.queue.justDispatch {
            // Holds this executor for the job, whose actor may go, and the queue with it, as it ends.
            withExtendedLifetime(self) {
                job.runSynchronously(on: executor)
            }
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        return UnownedSerialExecutor(complexEquality: self)
    }

    func isSameExclusiveExecutionContext(other: QueueJobs) -> Bool {
        return other === self
    }

    func checkIsolated() {
        if !self.queue.isCurrent() {
            misuse("expected to run on the queue of this QueueExecutor (\(self.queue.queue.label)), but the current code is elsewhere")
        }
    }
}
