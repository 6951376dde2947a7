/// The task executor that the tasks the library starts prefer: a virtual timeline's, for the code that
/// runs on that timeline, and none anywhere else.
///
/// `package`: the testing module sets it (`VirtualTimeScheduler.run(timeLimit:_:)`), the concurrency
/// module reads it where it starts a task (`Signal(operation:)`, `Signal(sequence)`, async bodies, the
/// `mapAsync` family), and the core reads it where work would leave for another thread (`Queue`,
/// `Timer`, `ThreadPool`).
///
/// Why a value of the thread first: an unstructured task does not inherit its creator's executor
/// preference, and the library starts tasks from subscriber callbacks, which run wherever the events are
/// sent; a timer action on the timeline runs in the run's action task, which is not the task whose
/// callback starts one. Everything a timeline runs runs on its
/// driving thread. A thread that drives nothing reads nil, and its tasks start as before, with no
/// preference: one thread-specific read is all that code off the timeline pays.
///
/// Why the task next: the driving thread also runs, now and then, a job of a task that is not on the
/// timeline. A default actor that a timeline task calls drains the jobs queued on it on the thread that
/// took it, and those may belong to another run's task (a global actor that tests running in parallel
/// both call), which then goes on running there until it suspends. Such code is not this run's: its
/// `Queue` work is sent as usual, not refused in this run's name, and the tasks it starts do not join
/// this timeline. So, on a driving thread, the code that runs is the run's unless its task says it
/// belongs elsewhere (``Binding/holdsCurrentTask()``): its task-local run (``taskRun``, which the run's
/// body sets and every task made inside it inherits, `Task {}` and `Task.immediate {}` included) is
/// another scheduler's, or it has none and prefers another executor, or none. The driver runs each
/// scheduled action with the run bound too, so that every task made on the timeline carries it: the
/// body's, those made in timer actions (`Task.immediate {}`, `Task(executorPreference:)`), and the
/// library's (``startTask(priority:_:)``). A task that carries no run and prefers no executor was made
/// off every timeline: a default actor drains it here (another test's task that shares the actor), or
/// it is a `Task.detached {}`.
@usableFromInline package enum TimelineExecutor {
    /// One key for the process; each driving thread sets its own value.
    @usableFromInline static let slot = ThreadSpecificSlot()

    /// The run the current task was made in: the body's task sets it, the driver binds it while it runs
    /// a scheduled action, and the tasks made there inherit it (child tasks, `Task {}`,
    /// `Task.immediate {}`; not `Task.detached {}`). Read only on a driving thread, to tell the
    /// timeline's tasks from others, whatever executor they prefer (one that forwards to the
    /// timeline's, a child given `executorPreference: nil`). A task left suspended by one run of a
    /// scheduler is its next run's too: runs are told apart by their executor.
    @TaskLocal package static var taskRun: Binding?

    /// Holds the executor while a thread drives it; the slot keeps an unretained pointer to it.
    @usableFromInline package final class Binding: Sendable {
        @usableFromInline let executor: any TaskExecutor
        /// The executor as the runtime names it, to compare with a task's preference.
        private let unownedExecutor: UnownedTaskExecutor
        /// The first work that left the timeline for a queue, as `Queue.async on <label>`; written on
        /// the driving thread, read by it between jobs.
        private let departure = LockedState<String?>(nil)

        package init(_ executor: any TaskExecutor) {
            self.executor = executor
            self.unownedExecutor = executor.asUnownedTaskExecutor()
        }

        /// The first work that left the timeline, if any did.
        package var firstDeparture: String? {
            return self.departure.withLock { $0 }
        }

        /// Runs a scheduled action with the run bound, so that the tasks it makes carry it.
        package func runAction(_ action: () -> Void) {
            TimelineExecutor.$taskRun.withValue(self, operation: action)
        }

        func noteDeparture(_ description: String) {
            self.departure.withLock { first in
                if first == nil { first = description }
            }
        }

        /// Whether the code running now, on the driving thread, is the timeline's: no task (a scheduled
        /// action); a task made on this scheduler's timeline (``taskRun``); or a task made off every
        /// timeline that prefers this executor.
        @usableFromInline func holdsCurrentTask() -> Bool {
            return withUnsafeCurrentTask { task in
                guard let task else { return true }
                if let run = TimelineExecutor.taskRun { return run.executor as AnyObject === self.executor as AnyObject }
                return task.unownedTaskExecutor == self.unownedExecutor
            }
        }
    }

    /// The binding of the timeline that the calling code runs on, if it runs on one.
    @inlinable static var binding: Binding? {
        guard let pointer = self.slot.value else { return nil }
        let binding = Unmanaged<Binding>.fromOpaque(pointer).takeUnretainedValue()
        return binding.holdsCurrentTask() ? binding : nil
    }

    /// Starts a task that the library runs for the code under test (a transform, an async body, the
    /// iteration of a sequence): off a timeline, with no preference, as before; on one, preferring its
    /// executor and carrying its run (``taskRun``), so that the tasks it makes in turn are the run's.
    @usableFromInline package static func startTask(
        priority: TaskPriority?, _ operation: sending @escaping () async -> Void
    ) -> Task<Void, Never> {
        guard let binding = self.binding else {
            return Task(priority: priority, operation: operation)
        }
        return Task(executorPreference: binding.executor, priority: priority) {
            await self.$taskRun.withValue(binding, operation: operation)
        }
    }

    /// Whether work about to leave for a place that runs it on another thread at a real time (a `Queue`,
    /// a `ThreadPool`) must be dropped instead, because the calling code runs on a timeline; if so, the
    /// departure is noted, and the run stops with an error that names it.
    ///
    /// Dropped, not sent: sent, it would race with the timeline (a value back before the sender's next
    /// line, or after), and a test that fails must fail the same way every time.
    package static func refusesDeparture(_ description: @autoclosure () -> String) -> Bool {
        guard let binding = self.binding else { return false }
        binding.noteDeparture(description())
        return true
    }

    /// Whether the calling code runs on the timeline of `executor`: its thread drives it, and the code is
    /// the run's (``Binding/holdsCurrentTask()``).
    package static func isOnTimeline(of executor: AnyObject) -> Bool {
        guard let binding = self.binding else { return false }
        return binding.executor as AnyObject === executor
    }

    /// Whether the current task was made in the body of a run of `executor`'s timeline, wherever it
    /// runs now.
    package static func currentTaskWasMadeInRun(of executor: AnyObject) -> Bool {
        guard let run = self.taskRun else { return false }
        return run.executor as AnyObject === executor
    }

    /// Whether the current task prefers a task executor (SE-0417): one that does not runs its jobs after
    /// a suspension on the global executor, whichever thread it ran on before.
    package static func currentTaskPrefersAnExecutor() -> Bool {
        return withUnsafeCurrentTask { task in task?.unownedTaskExecutor != nil }
    }

    /// Whether the calling thread drives the timeline of `executor`, whatever task runs on it.
    package static func isDrivingThread(of executor: AnyObject) -> Bool {
        guard let pointer = self.slot.value else { return false }
        return Unmanaged<Binding>.fromOpaque(pointer).takeUnretainedValue().executor as AnyObject === executor
    }

    /// Runs `body` with `binding` as the calling thread's timeline; `body` outlives no use of it, since
    /// the caller holds `binding` across the call.
    package static func whileDriving<R>(_ binding: Binding, _ body: () throws -> R) rethrows -> R {
        return try withExtendedLifetime(binding) {
            try self.slot.withValue(Unmanaged.passUnretained(binding).toOpaque(), body)
        }
    }
}
