/// The task executor that the tasks the library starts prefer: a virtual timeline's, on the thread
/// that drives that timeline, and none anywhere else.
///
/// `package`: the testing module sets it (`VirtualTimeScheduler.run(until:_:)`), the concurrency module
/// reads it where it starts a task (`Signal(operation:)`, `Signal(sequence)`, async bodies, the
/// `mapAsync` family).
///
/// Why a value of the thread and not of the task: an unstructured task does not inherit its creator's
/// executor preference, and the library starts tasks from subscriber callbacks, which run wherever the
/// events are sent; a timer action on the timeline runs in no task at all. Everything a timeline runs
/// runs on its driving thread, so "this thread drives a timeline" is exactly "this work is on it".
/// A thread that drives nothing reads nil, and its tasks start as before, with no preference.
@usableFromInline package enum TimelineExecutor {
    /// One key for the process; each driving thread sets its own value.
    @usableFromInline static let slot = ThreadSpecificSlot()

    /// Holds the executor while a thread drives it; the slot keeps an unretained pointer to it.
    @usableFromInline package final class Binding: Sendable {
        @usableFromInline let executor: any TaskExecutor
        /// Work that left the timeline for a queue, as `Queue.async on <label>`; written on the driving
        /// thread, read by it between jobs.
        private let departures = LockedState<[String]>([])

        package init(_ executor: any TaskExecutor) {
            self.executor = executor
        }

        /// The first work that left the timeline, if any did.
        package var firstDeparture: String? {
            return self.departures.withLock { $0.first }
        }

        func noteDeparture(_ description: String) {
            self.departures.withLock { $0.append(description) }
        }
    }

    /// The executor that a task started on the calling thread should prefer: the timeline's when the
    /// thread is driving one, else nil (no preference).
    @inlinable package static var current: (any TaskExecutor)? {
        guard let pointer = self.slot.value else { return nil }
        return Unmanaged<Binding>.fromOpaque(pointer).takeUnretainedValue().executor
    }

    /// Whether work about to leave for a place that runs it on another thread at a real time (a `Queue`,
    /// a `ThreadPool`) must be dropped instead, because the calling thread drives a timeline; if so, the
    /// departure is noted, and the run stops with an error that names it.
    ///
    /// Dropped, not sent: sent, it would race with the timeline (a value back before the sender's next
    /// line, or after), and a test that fails must fail the same way every time.
    package static func refusesDeparture(_ description: @autoclosure () -> String) -> Bool {
        guard let pointer = self.slot.value else { return false }
        Unmanaged<Binding>.fromOpaque(pointer).takeUnretainedValue().noteDeparture(description())
        return true
    }

    /// Whether the calling thread is driving the timeline of `executor`.
    package static func isDriving(_ executor: AnyObject) -> Bool {
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
