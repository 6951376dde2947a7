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

        package init(_ executor: any TaskExecutor) {
            self.executor = executor
        }
    }

    /// The executor that a task started on the calling thread should prefer: the timeline's when the
    /// thread is driving one, else nil (no preference).
    @inlinable package static var current: (any TaskExecutor)? {
        guard let pointer = self.slot.value else { return nil }
        return Unmanaged<Binding>.fromOpaque(pointer).takeUnretainedValue().executor
    }

    /// Runs `body` with `binding` as the calling thread's timeline; `body` outlives no use of it, since
    /// the caller holds `binding` across the call.
    package static func whileDriving<R>(_ binding: Binding, _ body: () throws -> R) rethrows -> R {
        return try withExtendedLifetime(binding) {
            try self.slot.withValue(Unmanaged.passUnretained(binding).toOpaque(), body)
        }
    }
}
