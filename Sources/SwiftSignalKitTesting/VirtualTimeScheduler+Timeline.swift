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
    /// import SwiftSignalKitTesting
    ///
    /// let scheduler = VirtualTimeScheduler()
    /// try await scheduler.run {
    ///     let refresh = Task(executorPreference: scheduler.executor) { await catalog.refresh() }
    ///     await refresh.value
    /// }
    /// ```
    ///
    /// Its jobs run only while a run drives the timeline: outside a run, such a task waits for the next,
    /// so await it inside one.
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
    /// actions (every operator given this scheduler, sleeps on ``clock``), in a task of the run that has
    /// the caller's task-local values, as the body's has: an `#expect` in a callback that a timer or a
    /// marble signal's event makes counts for the test that runs it. They are the values of the call to
    /// `run`, not those a `withValue` inside `body` binds: wrap the call to `run` (Swift Testing's
    /// `withKnownIssue`, say) to reach the actions.
    ///
    /// **How time moves.** The scheduler runs every runnable job; when none is left, it moves time to
    /// the next scheduled action and runs it (a timer fires, a sleeper wakes), then the jobs that made
    /// runnable, and so on. When `body` has returned and no job is left, `run` returns. Time never
    /// moves while a job can run, so a test never waits for another task's progress, and the same
    /// test gives the same events, at the same virtual times, on every run.
    ///
    /// **What is not on it.** Work that runs elsewhere: an unstructured `Task {}`, `Task.immediate {}`
    /// (after its first suspension) or `Task.detached {}` that code under test starts itself (give it
    /// ``executor``), the main actor, actors with their own executors, a
    /// `Queue` or `DispatchQueue`, sleeps on a real clock, a thread that blocks, subscriptions made
    /// before the run. Work handed to a `Queue` or a `ThreadPool` from the timeline is not sent, and a
    /// job that comes back from another thread is not run: either stops the run with
    /// ``WorkLeftTheTimeline``. When `body` waits and nothing can run for ``offTimelineGrace`` of real
    /// time, `run` cancels `body`'s task, runs what that cancellation makes runnable, and throws
    /// ``Stalled``, instead of hanging. Code on the timeline that blocks its thread stops it; a run whose
    /// thread stays in one job for ``offTimelineGrace`` says so on standard error.
    ///
    /// Inside `body`, time moves by itself: sleep on ``clock`` to let it pass. ``advance(by:)-(Double)``,
    /// ``advance(to:)-(Double)`` and ``run()`` are precondition failures during a run, as is a second
    /// run of the same scheduler at the same time, and a run after one that stopped early (its tasks may
    /// still wake: make a new scheduler). Schedulers share nothing: tests that each make their own run
    /// in parallel. A task that prefers ``executor`` and is left suspended when a run returns runs again
    /// in the next run of the scheduler, not in between.
    ///
    /// - Parameters:
    ///   - timeLimit: Seconds of virtual time from the start of the run after which a `body` that is
    ///     still waiting is given up as ``Stalled`` (after ``offTimelineGrace`` of real time, as any body
    ///     waiting with nothing runnable: a job from another thread would still be reported as
    ///     ``WorkLeftTheTimeline``); `.infinity`, the default, for none. A scenario with
    ///     a repeating timer never goes quiet without one: a run without a time limit runs at most
    ///     ``runActionLimit`` scheduled actions, as ``run()`` does, and gives up a body that has not
    ///     returned by then as ``Stalled`` (a scenario that needs more actions needs a time limit).
    ///   - body: The test's scenario.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, ``Stalled`` or ``WorkLeftTheTimeline``; `CancellationError` if the
    ///   calling task is cancelled and `body` has not returned once the jobs that cancelling it made
    ///   runnable have run (time stops moving then).
    public func run<R: Sendable>(
        timeLimit: Double = .infinity, _ body: sending @escaping () async throws -> R
    ) async throws -> R {
        return try await self.run(timeLimit: timeLimit, actionLimit: Self.runActionLimit, body)
    }

    /// ``run(timeLimit:_:)`` giving up a body that has not returned after `actionLimit` scheduled actions
    /// when there is no time limit (tests reach the limit with fewer actions than ``runActionLimit``).
    func run<R: Sendable>(
        timeLimit: Double, actionLimit: Int, _ body: sending @escaping () async throws -> R
    ) async throws -> R {
        if !(timeLimit >= 0) {
            misuse(
                "VirtualTimeScheduler.run(timeLimit:_:): timeLimit must be a number of seconds of virtual time (0 or more, .infinity for none), got \(timeLimit)"
            )
        }
        let start = self.claimForRun(api: "run(timeLimit:_:)")
        let limit: Int64
        if timeLimit > Self.maximumTime {
            limit = .max
        } else {
            let (sum, overflow) = start.addingReportingOverflow(Self.nanoseconds(timeLimit))
            limit = overflow ? .max : sum
        }
        let outcome = TimelineOutcome<R>()
        let binding = TimelineExecutor.Binding(self.jobs)
        let bodyTask = Task(executorPreference: self.jobs) {
            await TimelineExecutor.$taskRun.withValue(binding) {
                do {
                    outcome.finish(.success(try await body()))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
        }
        // Made here, beside the body's task, so that it has the same task-local values (see
        // `TimelineActionRunner`).
        let actions = TimelineActionRunner()
        Task(executorPreference: self.jobs) {
            await TimelineExecutor.$taskRun.withValue(binding) {
                await actions.serve()
            }
        }
        let jobs = self.jobs
        // Looks at the driver four times a grace period: see `TimelineJobs.lookForABlockedDriver(at:)`. A
        // run that ends sooner, as most do, never wakes it.
        let watchdog = DispatchSource.makeTimerSource(queue: .global())
        let grace = jobs.watchdogThreshold.components
        let look = DispatchTimeInterval.nanoseconds(
            (Int(grace.seconds) * 1_000_000_000 + Int(grace.attoseconds / 1_000_000_000)) / 4)
        watchdog.schedule(deadline: .now() + look, repeating: look)
        watchdog.setEventHandler { [weak self] in jobs.lookForABlockedDriver(at: self?.now ?? 0) }
        watchdog.resume()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<R, any Error>, Never>) in
                let driver = Thread {
                    continuation.resume(
                        returning: self.drive(
                            bodyTask, actions: actions, binding: binding, outcome: outcome, limit: limit, actionLimit: actionLimit))
                }
                driver.name = "SwiftSignalKitTesting.VirtualTimeScheduler.run"
                driver.start()
            }
        } onCancel: {
            // First, so that the jobs this cancellation makes runnable, enqueued from this thread, are
            // not taken for work coming back from off the timeline.
            jobs.expectJobsFromOtherThreads()
            bodyTask.cancel()
            // Only now, once the cancellation handlers have enqueued what they make runnable: the
            // driver, seeing the mark, runs the jobs it finds and stops.
            outcome.markCancelledFromOutside()
            jobs.wakeDriver()
        }
        watchdog.cancel()
        return try result.get()
    }

    /// How long, in real time, a run whose body waits with nothing runnable waits for a job from another
    /// thread before it reports ``Stalled``: a job that comes is work that left the timeline and came
    /// back (``WorkLeftTheTimeline``). Waiting makes the report the same whether that work is quick or
    /// slow (a busy machine's thread pool can take seconds to run it); a body waiting for nothing is
    /// reported this much later. A run whose thread stays this long in one job (code that blocks it, a
    /// semaphore's wait, say) cannot report anything: it says so on standard error instead.
    public static let offTimelineGrace: Duration = .seconds(5)

    /// The driver's loop, on its own thread: jobs first, then the next due action, until `body` has
    /// returned and no job is left, or the run stops early.
    private func drive<R>(
        _ bodyTask: Task<Void, Never>, actions: TimelineActionRunner, binding: TimelineExecutor.Binding,
        outcome: TimelineOutcome<R>, limit: Int64, actionLimit: Int
    ) -> Result<R, any Error> {
        let executor = self.jobs.asUnownedTaskExecutor()
        var counter = ActionCounter(api: "run(timeLimit:_:)")
        var jobsRun = 0
        /// Jobs since time last moved (since the last action): what ``runJobLimit`` bounds.
        var jobsAtThisInstant = 0
        var actionsRun = 0
        var stop: Stop?
        TimelineExecutor.whileDriving(binding) {
            self.jobs.startDriving()
            while true {
                if stop == nil,
                    let (departure, cause) = binding.firstDeparture.map({ ($0, WorkLeftTheTimeline.Cause.sent) })
                        ?? self.jobs.firstArrivalFromAnotherThread
                {
                    // Work left for another thread, or came back from one: whatever runs next would race
                    // with that thread, so nothing does. The body's task is cancelled (so that what it
                    // started is disposed) but not run again: its jobs are dropped.
                    stop = .departed(WorkLeftTheTimeline(time: self.now, departure: departure, cause: cause))
                    bodyTask.cancel()
                    self.jobs.dropAll()
                    // The action runner still ends, in a job of its own that runs no test code: left
                    // waiting, it kept the caller's task-local values alive. Since `dropAll`, no job from
                    // another thread is queued, so its job is the only one.
                    if actions.hand(nil), let job = self.jobs.next() {
                        job.runSynchronously(on: executor)
                    }
                    return
                }
                if stop == nil, outcome.isCancelledFromOutside {
                    // Time stops; the jobs the cancellation made runnable run.
                    stop = .cancelledFromOutside
                }
                if let job = self.jobs.next() {
                    jobsRun += 1
                    jobsAtThisInstant += 1
                    if jobsAtThisInstant > Self.runJobLimit {
                        misuse(
                            "VirtualTimeScheduler.run(timeLimit:_:): ran \(Self.runJobLimit) jobs at \(self.now) s without time moving, "
                                + "with \(self.scheduledActionCount) scheduled action(s) waiting: a task that loops without "
                                + "waiting for virtual time (on Task.yield() or a zero sleep)? A scheduled action, even one "
                                + "due now (deliverOn(scheduler), a timer due now), runs only when no job can run, so a loop "
                                + "that polls that way never lets it: await what the loop polls for (first(), values) or sleep "
                                + "on scheduler.clock.")
                    }
                    job.runSynchronously(on: executor)
                    continue
                }
                if outcome.isFinished || stop != nil {
                    // The action runner ends in a job of its own, the run's last.
                    if actions.hand(nil) { continue }
                    return
                }
                if limit == .max, actionsRun == actionLimit, stop == nil, self.scheduledActionCount > 0 {
                    // No time limit, and the body has not returned after this many actions (in all, as
                    // `run()` counts them): a repeating timer would move time on for hours (to
                    // `maximumTime`). Stopped as a stall, the same way.
                    stop = .stalled(
                        Stalled(
                            time: self.now, timeLimit: nil, laterActions: self.scheduledActionCount, jobsRun: jobsRun,
                            actionsRun: actionsRun, reachedActionLimit: true))
                    bodyTask.cancel()
                    continue
                }
                if let action = self.nextAction(upTo: limit) {
                    actionsRun += 1
                    jobsAtThisInstant = 0
                    counter.count(action)
                    // In the runner's next job, which is the only runnable one: no job was left.
                    if !actions.hand(action.action) {
                        binding.runAction(action.action)
                    }
                    continue
                }
                // Nothing can run, and `body` waits: for work off the timeline, or for nothing.
                if self.jobs.waitForJobFromAnotherThread(Self.offTimelineGrace) || outcome.isCancelledFromOutside {
                    continue
                }
                let laterActions = self.scheduledActionCount
                let reachedLimit = laterActions > 0 && limit != .max
                if reachedLimit {
                    self.setTime(limit)
                }
                stop = .stalled(
                    Stalled(
                        time: self.now, timeLimit: reachedLimit ? Double(limit) / 1e9 : nil, laterActions: laterActions, jobsRun: jobsRun,
                        actionsRun: actionsRun, reachedActionLimit: false))
                bodyTask.cancel()
            }
        }
        self.jobs.stopDriving()
        switch stop {
        case nil:
            self.stopDriving(early: nil)
            return outcome.result
        case .stalled(let stalled):
            self.stopDriving(early: "stalled at \(stalled.time) s")
            return .failure(stalled)
        case .departed(let departed):
            self.stopDriving(early: "work left the timeline at \(departed.time) s")
            return .failure(departed)
        case .cancelledFromOutside:
            if outcome.isFinished {
                self.stopDriving(early: nil)
                return outcome.result
            }
            self.stopDriving(early: "cancelled at \(self.now) s")
            return .failure(CancellationError())
        }
    }

    /// Why a run stopped before its body returned.
    private enum Stop {
        case stalled(Stalled)
        case departed(WorkLeftTheTimeline)
        case cancelledFromOutside
    }

    /// The most jobs one ``run(timeLimit:_:)`` runs between two scheduled actions (without time moving)
    /// before it stops with a precondition failure: a task that loops on `Task.yield()` (or on a zero
    /// sleep on the clock, which suspends once as a real clock's does) would otherwise never let it finish. A long run whose time moves has no limit on its jobs in all.
    public static let runJobLimit = 10_000_000

    /// What ``run(timeLimit:_:)`` throws when its body waits and nothing on the timeline can run, when
    /// its time limit comes, or, in a run without a time limit, when the body has not returned after
    /// ``VirtualTimeScheduler/runActionLimit`` scheduled actions (a repeating timer, which never lets the
    /// timeline go quiet, would otherwise move time on for hours of real time).
    public struct Stalled: Error, Sendable, CustomStringConvertible {
        /// The virtual time, in seconds, at which nothing could run.
        public let time: Double
        /// The virtual time, in seconds, at which the run's time limit stopped it, when that is what
        /// happened (actions were scheduled after it); nil when nothing was scheduled at all.
        public let timeLimit: Double?
        /// How many actions were still scheduled (all after the time limit, when it stopped the run).
        public let laterActions: Int
        /// How many jobs the run had run.
        public let jobsRun: Int
        /// How many scheduled actions the run had run.
        public let actionsRun: Int
        /// Whether the run had no time limit and stopped after ``VirtualTimeScheduler/runActionLimit``
        /// actions.
        let reachedActionLimit: Bool

        /// What was pending, and where to look.
        public var description: String {
            var lines: [String] = []
            if self.reachedActionLimit {
                lines.append(
                    "VirtualTimeScheduler.run: the body had not returned at \(self.time) s after \(self.actionsRun) scheduled actions, "
                        + "the most a run without a time limit runs (VirtualTimeScheduler.runActionLimit); \(self.laterActions) "
                        + "action(s) are still scheduled. A repeating timer (interval, a Timer, a loop that sleeps on the clock) "
                        + "never lets the timeline go quiet: give run a timeLimit, the virtual time by which the body must have "
                        + "returned (a scenario that needs more actions needs one too).")
            } else if let timeLimit {
                lines.append(
                    "VirtualTimeScheduler.run: the body was still waiting at the time limit, \(timeLimit) s; "
                        + "\(self.laterActions) scheduled action(s) are due later (a sleep on the clock, a timer or a "
                        + "delay that ends after the limit, or a repeating timer).")
            } else {
                let actions =
                    self.laterActions == 0
                    ? "no action is scheduled"
                    : "no action was scheduled (\(self.laterActions) came from another thread after the wait)"
                lines.append(
                    "VirtualTimeScheduler.run: the body is waiting at \(self.time) s, and nothing on the timeline can run: "
                        + "no job is runnable, \(actions), and no job came from another thread within "
                        + "VirtualTimeScheduler.offTimelineGrace.")
                lines.append(
                    "It waits for something nothing on the timeline will do: a signal or stream nothing sends to (a ValuePipe "
                        + "nobody puts into, get() of a signal that never sends), or work that is not on the timeline: "
                        + "a continuation nobody resumes, an unstructured Task {} or "
                        + "Task.detached that has not finished (start it with Task(executorPreference: scheduler.executor) to run "
                        + "it on the timeline), the main actor or an actor with its own "
                        + "executor, a Queue or DispatchQueue (give the operator the scheduler instead), or a sleep on a real clock "
                        + "(sleep on scheduler.clock).")
            }
            lines.append("The body's task was cancelled. Ran \(self.jobsRun) job(s) and \(self.actionsRun) scheduled action(s).")
            return lines.joined(separator: "\n")
        }
    }
}

extension VirtualTimeScheduler {
    /// What ``run(timeLimit:_:)`` throws when work leaves the timeline for another thread, where it
    /// would run at a real time, racing with the test. The run stops there and says what happened:
    ///
    /// - Code on the timeline hands work to a `Queue`, a `Timer` on a queue or a `ThreadPool`. The work
    ///   is not sent, and the report is the same on every run: the work, and the time it was handed over.
    ///   The work is released unrun: if it held a `CheckedContinuation`, the Swift runtime also prints
    ///   that the continuation leaked, naming the function that made it; that is this dropped work.
    /// - A job of the run's tasks comes back to the timeline from another thread: a task waited for work
    ///   off it (the main actor, an actor with an executor of its own, a continuation resumed from a
    ///   `DispatchQueue`, a real sleep, an unstructured `Task` it awaits), or ran on a default actor that
    ///   code outside the run holds too (a global actor that a test running in parallel also calls).
    ///   Whether and when that return comes depends on the other thread: the report gives the time at
    ///   which the run noticed it, and a run can finish before it comes (a task nobody awaits).
    /// - A task that is not on the timeline sleeps on the scheduler's clock (a subscription made before
    ///   the run, an unstructured `Task`).
    ///
    /// A body still waiting when the run stops is left suspended, cancelled: its jobs are dropped, so
    /// what its task holds (the caller's task-local values, the scheduler when it sleeps on its clock)
    /// stays alive. The test has failed by then; the run's own task for the scheduled actions ends.
    ///
    /// Give the operator the scheduler instead of a queue (`deliverOn(scheduler)`,
    /// `delay(_:scheduler:)`, `first(within:scheduler:)`, `retry(_:maxAttempts:scheduler:)`), give the
    /// tasks the code under test starts ``VirtualTimeScheduler/executor``, and give each test its own
    /// instance of an actor rather than one shared with other tests (or run those tests serially).
    public struct WorkLeftTheTimeline: Error, Sendable, CustomStringConvertible {
        /// How the work left.
        enum Cause: Sendable {
            /// Handed to a queue or a thread pool from the timeline, and not sent.
            case sent
            /// A job came back from another thread.
            case cameBack
            /// A task off the timeline slept on the clock.
            case sleptOffTimeline
            /// An action was scheduled on the scheduler from another thread.
            case scheduledFromAnotherThread
        }

        /// The virtual time, in seconds, at which the work left (work handed to a queue), or at which
        /// the run noticed that it had (a job that came back from another thread, a task off the
        /// timeline sleeping on the clock).
        public let time: Double
        /// What left, such as `Queue.justDispatch on com.example.database`.
        public let departure: String
        let cause: Cause

        init(time: Double, departure: String, cause: Cause) {
            self.time = time
            self.departure = departure
            self.cause = cause
        }

        /// Where the work went, and what to do instead.
        public var description: String {
            let stopped =
                "It would run on another thread at a real time, racing with the test, so the run stopped there: the body's "
                + "task was cancelled and nothing on the timeline ran after it."
            switch self.cause {
            case .sent:
                return "VirtualTimeScheduler.run: at \(self.time) s, work left the timeline: \(self.departure). " + stopped
                    + " Give the operator the scheduler instead of a Queue (deliverOn(scheduler), delay(_:scheduler:), "
                    + "first(within:scheduler:), retry(_:maxAttempts:scheduler:)); a default argument is a Queue. "
                    + "An actor on a Queue runs its jobs on that queue (QueueExecutor, QueueLocalActor): keep it out "
                    + "of the code the run drives, or give that code an actor without an executor of its own."
            case .cameBack:
                return "VirtualTimeScheduler.run: noticed at \(self.time) s: \(self.departure). " + stopped
                    + " The time is when the run noticed, and can differ between runs. What a task waited for: the main actor "
                    + "or an actor with an executor of its own (keep it out of the code under test); a default actor that "
                    + "code outside this run also calls, such as a global actor shared with a test running in parallel, "
                    + "which ran this run's job on its thread (give each test its own instance, or run those tests "
                    + "serially); a continuation resumed from a DispatchQueue or another thread; a real sleep (sleep on "
                    + "scheduler.clock); an unstructured Task {}, Task.immediate {} or Task.detached {} (start it with "
                    + "Task(executorPreference: scheduler.executor)); or the run of another scheduler."
            case .sleptOffTimeline:
                return "VirtualTimeScheduler.run: noticed at \(self.time) s: \(self.departure). " + stopped
                    + " Make the subscription or the task inside the run's body, and start the task with "
                    + "Task(executorPreference: scheduler.executor) (or Task.immediate(executorPreference: "
                    + "scheduler.executor)): a Task {}, a Task.immediate {} or a Task.detached {} "
                    + "runs on the thread pool, and so does a child task given addTask(executorPreference: nil) in a "
                    + "release build (leave the argument out), or code inside withTaskExecutorPreference(_:) given "
                    + "another executor."
            case .scheduledFromAnotherThread:
                return "VirtualTimeScheduler.run: noticed at \(self.time) s: \(self.departure). The action was not run: "
                    + "the run stopped there, the body's task was cancelled and nothing on the timeline ran after it. "
                    + "Schedule on the scheduler only from code on the timeline: give the scheduler to the operator or "
                    + "timer that schedules (deliverOn(scheduler), delay(_:scheduler:), Timer(timeout:repeat:scheduler:completion:)), and start the "
                    + "task that calls it with Task(executorPreference: scheduler.executor), instead of calling it from a "
                    + "Queue's, a DispatchQueue's or another thread's callback. Code isolated to the main actor (a "
                    + "@MainActor type's method, a for await loop in one) runs on the main thread, not on the timeline, "
                    + "whatever task calls it: make the code under test nonisolated, or give it an actor of its own."
            }
        }
    }
}

/// The task executor of one scheduler's timeline: a queue of jobs that ``VirtualTimeScheduler/run(timeLimit:_:)``
/// runs on its driving thread, in the order they were enqueued. Jobs may be enqueued from any thread; one
/// enqueued from a thread other than the driving one, during a run, is work that comes back from off
/// the timeline, and is noted.
final class TimelineJobs: TaskExecutor {
    private struct State: Sendable {
        var jobs: [UnownedJob] = []
        var head = 0
        /// From ``claimForRun()`` to ``stopDriving()``: from before the scheduler marks the actions that
        /// other threads schedule, so that each one marked is also noted (see ``claimForRun()``).
        var runIsClaimed = false
        /// From ``startDriving()``, on the driving thread, to ``stopDriving()``: a job enqueued from
        /// another thread is work coming back (before, the caller of `run` enqueues the first jobs).
        var runIsActive = false
        /// Set when the test's task is cancelled: its cancellation handlers enqueue from its thread.
        var expectsOtherThreads = false
        /// Set by ``dropAll()``: the run stopped early, and a job from another thread is dropped too.
        var dropsOtherThreads = false
        var firstArrivalFromAnotherThread: (description: String, cause: VirtualTimeScheduler.WorkLeftTheTimeline.Cause)?
        /// When the driver began the job it runs now (from ``next()`` returning it to the driver's next
        /// call), in `DispatchTime` nanoseconds; nil between jobs. What the watchdog reads.
        var jobStarted: UInt64?
        /// Whether the watchdog has reported this run.
        var reportedABlockedDriver = false
        /// How long a job may run before the watchdog reports it, and where its report goes instead of
        /// standard error (tests).
        var watchdogThreshold = VirtualTimeScheduler.offTimelineGrace
        var blockedDriverReport: (@Sendable (String) -> Void)?
    }

    private let state = LockedState(State())
    /// Signalled for each job enqueued from another thread during a run, for the driver's wait when
    /// nothing can run.
    private let arrivals = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let fromAnotherThread = !TimelineExecutor.isDrivingThread(of: self)
        let signal = self.state.withLock { state -> Bool in
            if fromAnotherThread && state.dropsOtherThreads { return false }
            state.jobs.append(job)
            guard state.runIsActive, fromAnotherThread else { return false }
            if !state.expectsOtherThreads, state.firstArrivalFromAnotherThread == nil {
                state.firstArrivalFromAnotherThread = (
                    "a job of this run's tasks came back to the timeline from another thread", .cameBack
                )
            }
            return true
        }
        if signal {
            self.arrivals.signal()
        }
    }

    /// A task that sleeps on the clock and is not, or will not wake, on the timeline.
    enum OffTimelineSleeper {
        /// Made during the run (in its body or a timer action, directly or inside an actor's method),
        /// running elsewhere (a `Task {}` that prefers no executor, one that runs on an actor).
        case madeInRun
        /// Made before the run or outside it (a subscription made before it, a `Task.detached {}` or
        /// `Task.immediateDetached {}`).
        case madeElsewhere
        /// Running on the timeline now, but preferring no executor (a `Task.immediate {}`), so it
        /// wakes on the thread pool.
        case wakesOnThePool

        var description: String {
            switch self {
            case .madeInRun:
                return "a task made during the run that does not run on the timeline slept on the scheduler's clock: "
                    + "made in the run's body or an action, or inside an actor's method, which runs it on that actor"
            case .madeElsewhere:
                return "a task that is not on the timeline slept on the scheduler's clock: a subscription or a task made "
                    + "before the run, or a Task.detached or Task.immediateDetached"
            case .wakesOnThePool:
                return "a task that prefers no executor (a Task.immediate {}) slept on the scheduler's clock: it ran on the "
                    + "timeline until then, but would wake on the thread pool"
            }
        }
    }

    /// Notes, during a run, that a task which is not on the timeline, or will not wake on it, sleeps on
    /// its clock.
    func noteSleeperOffTheTimeline(_ sleeper: OffTimelineSleeper) {
        self.state.withLock { state in
            guard state.runIsClaimed, !state.expectsOtherThreads, state.firstArrivalFromAnotherThread == nil else { return }
            state.firstArrivalFromAnotherThread = (sleeper.description, .sleptOffTimeline)
        }
        self.arrivals.signal()
    }

    /// Notes, during a run, that an action was scheduled from a thread that does not drive it.
    func noteActionFromAnotherThread() {
        self.state.withLock { state in
            guard state.runIsClaimed, !state.expectsOtherThreads, state.firstArrivalFromAnotherThread == nil else { return }
            state.firstArrivalFromAnotherThread = (
                "an action was scheduled on the scheduler from another thread (a callback that a Queue, a DispatchQueue, "
                    + "the main actor or a task off the timeline ran)", .scheduledFromAnotherThread
            )
        }
        self.arrivals.signal()
    }

    /// Whether a run is driving the timeline now.
    var runIsActive: Bool {
        return self.state.withLock { $0.runIsActive }
    }

    /// Whether a run has claimed the timeline, its driver started or about to start.
    var runIsClaimed: Bool {
        return self.state.withLock { $0.runIsClaimed }
    }

    /// What came back from another thread first, during this run.
    var firstArrivalFromAnotherThread: (description: String, cause: VirtualTimeScheduler.WorkLeftTheTimeline.Cause)? {
        return self.state.withLock { $0.firstArrivalFromAnotherThread }
    }

    /// Forgets what an earlier run noted, and takes notes of work off the timeline from now on; see
    /// `VirtualTimeScheduler.claimForRun(api:)`, the one caller. Before the run's body task is made, so
    /// that a cancellation of the test that comes before the driver starts is not forgotten.
    func claimForRun() {
        self.state.withLock { state in
            state.runIsClaimed = true
            state.expectsOtherThreads = false
            state.dropsOtherThreads = false
            state.firstArrivalFromAnotherThread = nil
        }
        while self.arrivals.wait(timeout: .now()) == .success {}
    }

    func startDriving() {
        self.state.withLock { state in
            state.runIsActive = true
            state.jobStarted = nil
            state.reportedABlockedDriver = false
        }
    }

    /// The watchdog's look, four times in each ``VirtualTimeScheduler/offTimelineGrace`` of a run: when
    /// the driver has been running one job for that long, tells standard error, once a run. The
    /// driver cannot report it itself: a job that blocks its thread (a semaphore, a group's wait, a lock,
    /// a synchronous wrapper around async code) holds the only thread that runs the timeline, so what it
    /// waits for may never come (a task sleeping on the clock, a job queued behind it) and the run hung
    /// without a word (a probe, 2026-12-02). A job that is only long is reported too; the report says so.
    func lookForABlockedDriver(at time: @autoclosure () -> Double) {
        typealias Look = (arrival: String?, period: Duration, destination: (@Sendable (String) -> Void)?)
        let now = DispatchTime.now().uptimeNanoseconds
        let look = self.state.withLock { state -> Look? in
            guard state.runIsActive, !state.reportedABlockedDriver, let started = state.jobStarted,
                now >= started, Duration.nanoseconds(now - started) >= state.watchdogThreshold
            else { return nil }
            state.reportedABlockedDriver = true
            return (state.firstArrivalFromAnotherThread?.description, state.watchdogThreshold, state.blockedDriverReport)
        }
        guard let look else { return }
        let report =
            "VirtualTimeScheduler.run: at \(time()) s of virtual time, the run's thread has been running one job "
            + "for at least \(look.period) of real time\(look.arrival.map { "; meanwhile \($0)" } ?? ""). If that job is "
            + "waiting (a semaphore's or a group's wait, a lock, Thread.sleep, a synchronous wrapper around async "
            + "code), it blocks the only thread that runs the timeline: nothing on it runs and virtual time does not "
            + "move until it returns, so what it waits for may never come, and the run cannot stop to report it. "
            + "Code on the timeline must await, never block its thread."
        if let destination = look.destination {
            destination(report)
        } else {
            FileHandle.standardError.write(Data((report + "\n").utf8))
        }
    }

    /// Sends the watchdog's report to `destination` instead of standard error, for a job that runs for
    /// `threshold` (tests).
    func reportBlockedDriver(after threshold: Duration, to destination: @escaping @Sendable (String) -> Void) {
        self.state.withLock { state in
            state.watchdogThreshold = threshold
            state.blockedDriverReport = destination
        }
    }

    /// How long a job may run before the watchdog reports it.
    var watchdogThreshold: Duration {
        return self.state.withLock { $0.watchdogThreshold }
    }

    func stopDriving() {
        self.state.withLock { state in
            state.runIsActive = false
            state.runIsClaimed = false
        }
    }

    /// Ends the driver's wait for a job from another thread (the test was cancelled).
    func wakeDriver() {
        self.arrivals.signal()
    }

    func expectJobsFromOtherThreads() {
        self.state.withLock { $0.expectsOtherThreads = true }
    }

    /// Waits, on the driving thread and at most `grace` of real time, for a job from another thread;
    /// whether one came.
    func waitForJobFromAnotherThread(_ grace: Duration) -> Bool {
        let (seconds, attoseconds) = grace.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return self.arrivals.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// Drops the queued jobs, and those that come from other threads from now on (until the next run):
    /// their tasks never run again. (A run after one that stopped early is refused, so they would not
    /// run anyway.)
    func dropAll() {
        self.state.withLock { state in
            state.jobs.removeAll()
            state.head = 0
            state.dropsOtherThreads = true
        }
    }

    /// The next job, or nil when none is runnable.
    func next() -> UnownedJob? {
        return self.state.withLock { state -> UnownedJob? in
            guard state.head < state.jobs.count else {
                state.jobStarted = nil
                return nil
            }
            let job = state.jobs[state.head]
            state.jobStarted = DispatchTime.now().uptimeNanoseconds
            state.head += 1
            if state.head == state.jobs.count {
                state.jobs.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return job
        }
    }
}

/// Runs a run's scheduled actions (timers, the clock's wake-ups, the operators' deadlines, a marble
/// signal's events) in a task of the run, so that they see the task-local values of the test that runs
/// it, as the body does: Swift Testing credits an `#expect` to the test it finds there, and one that
/// failed in a callback an action made, run outside every task, was credited to no test while the test
/// passed (a probe, 2026-11-30). Code that keeps a request or a logger in a task-local sees it too.
///
/// The task is made where the body's is, so it inherits the same values, and it runs on the timeline.
/// When the driver would run an action and no job is runnable, it hands the action over, which makes
/// the runner's job the only runnable one; the driver runs that job, in which the runner runs the action
/// and waits for the next. So an action still runs at the same point of the run, before the jobs it
/// makes runnable. The driver ends the runner, in a job of its own, when the run ends.
final class TimelineActionRunner: Sendable {
    private enum State: Sendable {
        /// The runner's task has not waited yet.
        case starting
        case waiting(UnsafeContinuation<(@Sendable () -> Void)?, Never>)
        /// Running an action, or about to.
        case running
        case ended
    }

    private let state = LockedState(State.starting)

    /// The runner's task: runs each action handed over until the run ends.
    func serve() async {
        while let action = await self.nextAction() {
            action()
        }
    }

    private func nextAction() async -> (@Sendable () -> Void)? {
        return await withUnsafeContinuation { continuation in
            let ended = self.state.withLock { state -> Bool in
                if case .ended = state { return true }
                state = .waiting(continuation)
                return false
            }
            if ended { continuation.resume(returning: nil) }
        }
    }

    /// On the driving thread: hands `action` to the runner, or ends it (`nil`). Returns whether the
    /// runner was waiting, and so has a job runnable now; if it was not (it cannot be, between jobs),
    /// the caller runs the action itself.
    func hand(_ action: (@Sendable () -> Void)?) -> Bool {
        let continuation = self.state.withLock { state -> UnsafeContinuation<(@Sendable () -> Void)?, Never>? in
            guard case .waiting(let continuation) = state else {
                if action == nil { state = .ended }
                return nil
            }
            state = action == nil ? .ended : .running
            return continuation
        }
        continuation?.resume(returning: action)
        return continuation != nil
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
