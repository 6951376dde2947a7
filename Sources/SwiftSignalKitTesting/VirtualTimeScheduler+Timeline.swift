import Foundation
import SwiftSignalKit

extension VirtualTimeScheduler {
    /// The task executor of the scheduler's timeline: a task that prefers it runs in
    /// ``run(timeLimit:_:)``, on the thread that drives the timeline, one job at a time.
    ///
    /// ``run(timeLimit:_:)`` gives it to the body's task, and the library gives it to the tasks it
    /// starts there. Give it to a task the code under test starts itself, since an unstructured
    /// `Task {}` does not inherit it:
    ///
    /// ```swift
    /// let refresh = Task(executorPreference: scheduler.executor) { await cache.refresh() }
    /// ```
    public var executor: any TaskExecutor {
        return self.jobs
    }

    /// Runs `body` on the scheduler's timeline, with the tasks it starts, and moves virtual time only
    /// when nothing on the timeline can run; returns what `body` returns.
    ///
    /// ```swift
    /// let scheduler = VirtualTimeScheduler()
    /// let titles = try await scheduler.run { () -> [String] in
    ///     let pages = Signal<Int, NoError>.single(1)
    ///         |> mapAsync { page in
    ///             try? await scheduler.clock.sleep(for: .seconds(2))  // a slow service
    ///             return "page \(page) at \(scheduler.now) s"
    ///         }
    ///     var titles: [String] = []
    ///     for await title in pages.values(bufferingPolicy: .unbounded) {
    ///         titles.append(title)
    ///     }
    ///     return titles
    /// }
    /// // ["page 1 at 2.0 s"], at once: no sleeps, no counting of scheduled actions.
    /// ```
    ///
    /// **What runs on the timeline.** The body's task, its child tasks (`async let`, task groups), the
    /// default actors they call, and the tasks the library starts while the timeline runs (the
    /// `mapAsync` family's transforms, `Signal(operation:)`, async bodies, `Signal(sequence)`), all on
    /// one thread, one job at a time, in the order they became runnable; and the scheduler's timed
    /// actions (every operator given this scheduler, sleeps on ``clock``).
    ///
    /// **How time moves.** The scheduler runs every runnable job; when none is left, it moves time to
    /// the next scheduled action and runs it (a timer fires, a sleeper wakes), then the jobs that made
    /// runnable, and so on. When `body` has returned and no job is left, `run` returns. Time never
    /// moves while a job can run, so a test never waits for another task's progress, and the same
    /// test gives the same events, at the same virtual times, on every run.
    ///
    /// **What is not on it.** Work that runs elsewhere: an unstructured `Task {}` that code under test
    /// starts itself (give it ``executor``), the main actor, actors with their own executors, a
    /// `Queue` or `DispatchQueue`, sleeps on a real clock, a thread that blocks. When `body` waits for
    /// such work and nothing on the timeline can run, `run` cancels `body`'s task, runs what that
    /// cancellation makes runnable, and throws ``Stalled``, naming the time and what was pending,
    /// instead of hanging.
    ///
    /// Inside `body`, time moves by itself: sleep on ``clock`` to let it pass. ``advance(by:)-(Double)``,
    /// ``advance(to:)-(Double)`` and ``run()`` are precondition failures during a run, as is a second
    /// run of the same scheduler. Schedulers share nothing: tests that each make their own run in
    /// parallel.
    ///
    /// - Parameters:
    ///   - timeLimit: The virtual time, in seconds, at which a `body` that is still waiting is given up
    ///     as ``Stalled``; by default the end of virtual time. A repeating timer keeps a waiting
    ///     `body`'s timeline busy for ever without one.
    ///   - body: The test's scenario.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or ``Stalled``. If the calling task is cancelled, `body`'s task
    ///   is cancelled.
    public func run<R: Sendable>(
        timeLimit: Double = VirtualTimeScheduler.maximumTime, _ body: sending @escaping () async throws -> R
    ) async throws -> R {
        if !(timeLimit >= 0 && timeLimit <= Self.maximumTime) {
            misuse(
                "VirtualTimeScheduler.run(timeLimit:_:): timeLimit must be a number of seconds from 0 to \(Self.maximumTime), got \(timeLimit)"
            )
        }
        let limit = Self.nanoseconds(timeLimit)
        self.startDriving(api: "run(timeLimit:_:)")
        let outcome = TimelineOutcome<R>()
        let bodyTask = Task(executorPreference: self.jobs) {
            do {
                outcome.finish(.success(try await body()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<R, any Error>, Never>) in
                let driver = Thread {
                    continuation.resume(returning: self.drive(bodyTask, outcome: outcome, limit: limit))
                }
                driver.name = "SwiftSignalKitTesting.VirtualTimeScheduler.run"
                driver.start()
            }
        } onCancel: {
            outcome.markCancelledFromOutside()
            bodyTask.cancel()
        }
        return try result.get()
    }

    /// The driver's loop, on its own thread: jobs first, then the next due action, until `body` has
    /// returned and no job is left, or nothing can run.
    private func drive<R>(_ bodyTask: Task<Void, Never>, outcome: TimelineOutcome<R>, limit: Int64) -> Result<R, any Error> {
        let binding = TimelineExecutor.Binding(self.jobs)
        let executor = self.jobs.asUnownedTaskExecutor()
        var counter = ActionCounter(api: "run(timeLimit:_:)")
        var jobsRun = 0
        var actionsRun = 0
        var stop: Stop?
        TimelineExecutor.whileDriving(binding) {
            while true {
                if stop == nil, let departure = binding.firstDeparture {
                    // Work left for a real thread: whatever runs next would race with it, so nothing
                    // does. The body's task is cancelled (so that what it started is disposed) but not
                    // run again: its jobs are dropped.
                    stop = .departed(WorkLeftTheTimeline(time: self.now, departure: departure))
                    bodyTask.cancel()
                    self.jobs.dropAll()
                    return
                }
                if let job = self.jobs.next() {
                    jobsRun += 1
                    if jobsRun > Self.runJobLimit {
                        misuse(
                            "VirtualTimeScheduler.run(timeLimit:_:): ran \(Self.runJobLimit) jobs at \(self.now) s without time moving: "
                                + "a task that loops without waiting for virtual time?")
                    }
                    job.runSynchronously(on: executor)
                    continue
                }
                if outcome.isFinished || stop != nil { return }
                if let action = self.nextAction(upTo: limit) {
                    actionsRun += 1
                    counter.count(action)
                    action.action()
                    continue
                }
                // Nothing can run, and `body` waits: for work off the timeline, or for nothing.
                if outcome.isCancelledFromOutside {
                    stop = .cancelledFromOutside
                } else {
                    stop = .stalled(
                        Stalled(
                            time: self.now, timeLimit: limit == Int64.max ? nil : Double(limit) / 1e9,
                            laterActions: self.scheduledActionCount, jobsRun: jobsRun, actionsRun: actionsRun))
                }
                bodyTask.cancel()
            }
        }
        self.stopDriving()
        switch stop {
        case nil:
            return outcome.result
        case .stalled(let stalled):
            return .failure(stalled)
        case .departed(let departed):
            return .failure(departed)
        case .cancelledFromOutside:
            return outcome.isFinished ? outcome.result : .failure(CancellationError())
        }
    }

    /// Why a run stopped before its body returned.
    private enum Stop {
        case stalled(Stalled)
        case departed(WorkLeftTheTimeline)
        case cancelledFromOutside
    }

    /// The most jobs one ``run(timeLimit:_:)`` runs without time moving before it stops with a
    /// precondition failure: a task that loops on `Task.yield()` would otherwise never let it finish.
    public static let runJobLimit = 10_000_000

    /// What ``run(timeLimit:_:)`` throws when its body waits and nothing on the timeline can run.
    public struct Stalled: Error, Sendable, CustomStringConvertible {
        /// The virtual time, in seconds, at which nothing could run.
        public let time: Double
        /// The time limit that stopped the run, if it was reached; nil when nothing was scheduled.
        public let timeLimit: Double?
        /// How many actions were still scheduled (after the time limit).
        public let laterActions: Int
        /// How many jobs the run had run.
        public let jobsRun: Int
        /// How many scheduled actions the run had run.
        public let actionsRun: Int

        /// What was pending, and where to look.
        public var description: String {
            var lines: [String] = []
            if let timeLimit, self.laterActions > 0 {
                lines.append(
                    "VirtualTimeScheduler.run: the body was still waiting at the time limit, \(timeLimit) s; "
                        + "\(self.laterActions) scheduled action(s) are due later (a repeating timer?).")
            } else {
                lines.append(
                    "VirtualTimeScheduler.run: the body is waiting at \(self.time) s, and nothing on the timeline can run: "
                        + "no job is runnable and no action is scheduled.")
                lines.append(
                    "It waits for work that is not on the timeline: a continuation nobody resumes, an unstructured Task {} "
                        + "(start it with Task(executorPreference: scheduler.executor)), the main actor or an actor with its own "
                        + "executor, a Queue or DispatchQueue (give the operator the scheduler instead), or a sleep on a real clock "
                        + "(sleep on scheduler.clock).")
            }
            lines.append("The body's task was cancelled. Ran \(self.jobsRun) job(s) and \(self.actionsRun) scheduled action(s).")
            return lines.joined(separator: "\n")
        }
    }
}

extension VirtualTimeScheduler {
    /// What ``run(timeLimit:_:)`` throws when code on the timeline hands work to a `Queue` or a
    /// `ThreadPool`, which would run it on another thread at a real time: the events after that point
    /// would race with that thread, so the run stops there, deterministically, and says where.
    ///
    /// Give the operator the scheduler instead of a queue (`deliverOn(scheduler)`,
    /// `delay(_:scheduler:)`, `first(within:scheduler:)`, `retry(_:maxAttempts:scheduler:)`), or
    /// keep the queue out of the code under test.
    public struct WorkLeftTheTimeline: Error, Sendable, CustomStringConvertible {
        /// The virtual time, in seconds, at which the work left.
        public let time: Double
        /// Where it went, such as `Queue.justDispatch on com.example.database`.
        public let departure: String

        /// Where the work went, and what to do instead.
        public var description: String {
            return "VirtualTimeScheduler.run: at \(self.time) s, work left the timeline: \(self.departure). It would run on another "
                + "thread at a real time, racing with the test, so the run stopped there: the body's task was cancelled and "
                + "nothing on the timeline ran after the job that handed the work over. Give the "
                + "operator the scheduler instead of a Queue (deliverOn(scheduler), delay(_:scheduler:), "
                + "first(within:scheduler:), retry(_:maxAttempts:scheduler:)); a default argument is a Queue."
        }
    }
}

/// The task executor of one scheduler's timeline: a queue of jobs that ``VirtualTimeScheduler/run(timeLimit:_:)``
/// runs on its driving thread, in the order they were enqueued. Jobs may be enqueued from any thread.
final class TimelineJobs: TaskExecutor {
    private struct Queue: Sendable {
        var jobs: [UnownedJob] = []
        var head = 0
    }

    private let queue = LockedState(Queue())

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        self.queue.withLock { $0.jobs.append(job) }
    }

    /// Drops the queued jobs: their tasks never run again.
    func dropAll() {
        self.queue.withLock { $0 = Queue() }
    }

    /// The next job, or nil when none is runnable.
    func next() -> UnownedJob? {
        return self.queue.withLock { queue -> UnownedJob? in
            guard queue.head < queue.jobs.count else { return nil }
            let job = queue.jobs[queue.head]
            queue.head += 1
            if queue.head == queue.jobs.count {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.head = 0
            }
            return job
        }
    }
}

/// How the body of one run ended, set on the driving thread and read there.
final class TimelineOutcome<R: Sendable>: Sendable {
    private struct State: Sendable {
        var result: Result<R, any Error>?
        var cancelledFromOutside = false
    }

    private let state = LockedState(State())

    func finish(_ result: Result<R, any Error>) {
        self.state.withLock { $0.result = result }
    }

    func markCancelledFromOutside() {
        self.state.withLock { $0.cancelledFromOutside = true }
    }

    var isFinished: Bool {
        return self.state.withLock { $0.result != nil }
    }

    var isCancelledFromOutside: Bool {
        return self.state.withLock { $0.cancelledFromOutside }
    }

    /// The body's result; only once it ``isFinished``.
    var result: Result<R, any Error> {
        return self.state.withLock { $0.result! }
    }
}
