import SwiftSignalKit

/// Iterates an `AsyncSequence` on a scheduler's timeline and records its elements with the virtual time
/// at which each arrived, as ``SignalRecorder`` records a signal.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// try await scheduler.run {
///     let ticks = AsyncStream<Int> { continuation in
///         Task(executorPreference: scheduler.executor) {
///             for tick in 1...2 {
///                 try? await scheduler.clock.sleep(for: .seconds(1))
///                 continuation.yield(tick)
///             }
///             continuation.finish()
///         }
///     }
///     let recorder = SequenceRecorder(ticks, scheduler: scheduler)
///     await recorder.finished()
///     assert(recorder.mismatch(marbles: "-a(b|)", values: ["a": 1, "b": 2]) == nil)
/// }
/// ```
///
/// The recorder starts a task that iterates the sequence, preferring the scheduler's ``VirtualTimeScheduler/executor``:
/// make it inside ``VirtualTimeScheduler/run(timeLimit:_:)``, where that task runs (made outside a run,
/// it stops with a precondition failure that says so). Marble diagrams
/// compared with it start at the time it was made. The end of the sequence is recorded as `completed`,
/// its failure as `error`.
public final class SequenceRecorder<Element: Sendable, Failure: Error>: Sendable {
    private let recorded = LockedState<[Recorded<Element, Failure>]>([])
    private let task: Task<Void, Never>
    /// The virtual time at which the recorder was made.
    public let startedAt: Double

    /// Starts iterating `sequence` on `scheduler`'s timeline.
    ///
    /// - Parameters:
    ///   - sequence: The sequence to record; iterated once.
    ///   - scheduler: The scheduler whose timeline runs the iteration and whose time stamps the elements.
    public init<S: AsyncSequence & Sendable>(_ sequence: S, scheduler: VirtualTimeScheduler)
    where S.Element == Element, S.Failure == Failure {
        if !TimelineExecutor.isOnTimeline(of: scheduler.jobs) {
            misuse(
                "SequenceRecorder(_:scheduler:): make the recorder inside scheduler.run { }, whose timeline runs the iteration; "
                    + "outside a run, nothing would iterate the sequence and finished() would never return")
        }
        let recorded = self.recorded
        self.startedAt = scheduler.now
        self.task = Task(executorPreference: scheduler.executor) {
            do throws(Failure) {
                var iterator = sequence.makeAsyncIterator()
                while let element = try await iterator.next(isolation: nil) {
                    let time = scheduler.now
                    recorded.withLock { $0.append(.next(element, at: time)) }
                }
                let time = scheduler.now
                recorded.withLock { $0.append(.completed(at: time)) }
            } catch {
                let time = scheduler.now
                recorded.withLock { $0.append(.error(error, at: time)) }
            }
        }
    }

    /// The elements so far, then the end if the sequence has ended, in order, with their virtual times.
    public var events: [Recorded<Element, Failure>] {
        return self.recorded.withLock { $0 }
    }

    /// The elements so far, in order.
    public var values: [Element] {
        return self.events.compactMap { recorded in
            if case .next(let element) = recorded.event { return element }
            return nil
        }
    }

    /// Waits until the sequence has ended, or the iteration has stopped after ``cancel()``.
    public func finished() async {
        await self.task.value
    }

    /// Cancels the iterating task, which ends the iteration the way the sequence ends it on
    /// cancellation (for most sequences, at their next element or at once).
    public func cancel() {
        self.task.cancel()
    }
}

extension SequenceRecorder where Element: Equatable, Failure: Equatable {
    /// Compares the recording with `expected`; nil when they are equal, or a readable difference.
    ///
    /// - Parameter expected: The events the test expects, in order, at absolute virtual times.
    /// - Returns: nil, or the difference.
    public func mismatch(_ expected: [Recorded<Element, Failure>]) -> RecordingMismatch? {
        return RecordingMismatch.between(self.events, expected)
    }

    /// Compares the recording with a marble diagram whose frame 0 is the time the recorder was made.
    ///
    /// - Parameters:
    ///   - marbles: The expected events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The element of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Seconds per character.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: nil, or the difference, with the recording drawn as a diagram when it can be.
    public func mismatch(
        marbles: String, values: [Character: Element] = [:], error: Failure? = nil, frame: Double = 1,
        file: StaticString = #fileID, line: UInt = #line
    )
        -> RecordingMismatch?
    {
        return RecordingMismatch.between(
            self.events, marbles: marbles, values: values, error: error, frame: frame, start: self.startedAt, file: file,
            line: line)
    }
}
