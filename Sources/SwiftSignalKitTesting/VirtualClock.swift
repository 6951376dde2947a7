import SwiftSignalKit

extension VirtualTimeScheduler {
    /// The scheduler's time as a `Clock`, for async code that sleeps or measures durations.
    ///
    /// ```swift
    /// func poll(every period: Duration, clock: some Clock<Duration>) async throws -> Int {
    ///     var polls = 0
    ///     while polls < 3 {
    ///         try await clock.sleep(for: period)
    ///         polls += 1
    ///     }
    ///     return polls
    /// }
    ///
    /// let scheduler = VirtualTimeScheduler()
    /// let polling = Task { try await poll(every: .seconds(10), clock: scheduler.clock) }
    /// for _ in 0..<3 {
    ///     await scheduler.waitUntilScheduled(1)  // the task is asleep
    ///     scheduler.advance(by: 10)
    /// }
    /// let polls = try await polling.value  // 3, at once
    /// ```
    ///
    /// A sleep counts as one scheduled action. Moving time to its deadline resumes the sleeping task;
    /// the task then runs on its executor, after the call that moved time has returned, so a test awaits
    /// what the task does next (``waitUntilScheduled(_:)`` for its next sleep, or its result).
    public var clock: VirtualClock {
        return VirtualClock(scheduler: self)
    }
}

/// The time of a ``VirtualTimeScheduler`` as a `Clock` whose durations are `Swift.Duration`.
///
/// It is also a `SignalScheduler` (the same scheduler), so async operators that take a clock run their
/// timed work on virtual time without a task per timer.
public struct VirtualClock: Clock, SignalScheduler {
    /// A point in virtual time: the duration since the scheduler was made.
    public struct Instant: InstantProtocol, Sendable {
        /// The time since the scheduler was made.
        public var offset: Duration

        /// Creates an instant at `offset` from the scheduler's start.
        ///
        /// - Parameter offset: The time since the scheduler was made.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant {
            return Instant(offset: self.offset + duration)
        }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration {
            return other.offset - self.offset
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            return lhs.offset < rhs.offset
        }
    }

    /// The scheduler whose time this is.
    public let scheduler: VirtualTimeScheduler

    /// Creates the clock of `scheduler`; the same as `scheduler.clock`.
    ///
    /// - Parameter scheduler: The scheduler whose time to read and move.
    public init(scheduler: VirtualTimeScheduler) {
        self.scheduler = scheduler
    }

    /// The scheduler's current time.
    public var now: Instant {
        return Instant(offset: .nanoseconds(self.scheduler.nanosecondsNow))
    }

    /// Zero: virtual time is exact.
    public var minimumResolution: Duration {
        return .zero
    }

    /// Suspends until virtual time reaches `deadline`, or throws `CancellationError` when the task is
    /// cancelled first. A deadline that has passed (`sleep(for: .zero)`, say) still suspends once, as a
    /// real clock's sleep does, and resumes without moving time: a task that polls with a zero sleep lets
    /// the timeline's other tasks run, where returning at once would spin and hang the run. The deadline is absolute: time moved
    /// by another thread meanwhile does not postpone it. Virtual time counts whole nanoseconds and ends
    /// at ``VirtualTimeScheduler/maximumTime``; a later deadline is reached only at that end.
    ///
    /// - Parameters:
    ///   - deadline: The instant to wake at.
    ///   - tolerance: Ignored: virtual time is exact.
    /// - Throws: `CancellationError` if the task is cancelled before the deadline.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let deadline = Self.nanoseconds(deadline.offset)
        let jobs = self.scheduler.jobs
        let offTimeline: TimelineJobs.OffTimelineSleeper?
        if !TimelineExecutor.isOnTimeline(of: jobs) {
            offTimeline = TimelineExecutor.currentTaskWasMadeInRun(of: jobs) ? .madeInRun : .madeElsewhere
        } else if jobs.runIsActive, !TimelineExecutor.currentTaskPrefersAnExecutor() {
            // On the timeline now, but it prefers no executor (a `Task.immediate {}` before its first
            // suspension): it would wake on the thread pool, at a real time.
            offTimeline = .wakesOnThePool
        } else {
            offTimeline = nil
        }
        if let offTimeline, jobs.runIsClaimed {
            // During a run, a task off the timeline: it would race with it.
            jobs.noteSleeperOffTheTimeline(offTimeline)
        }
        guard deadline > self.scheduler.nanosecondsNow else {
            // A real clock suspends here too (its timer fires at once): yield, so that a loop that polls
            // with zero sleeps lets other tasks run, on the timeline as on a real executor.
            await Task.yield()
            try Task.checkCancellation()
            return
        }
        let sleeper = VirtualSleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard
                    let scheduled = self.scheduler.schedule(
                        atNanoseconds: deadline,
                        {
                            // A task off the timeline that began to sleep before a run (a subscription
                            // made before it), woken by the run: it would race with it too. (Woken
                            // outside a run, by `advance`, it is a test driving time by hand.)
                            if let offTimeline { jobs.noteSleeperOffTheTimeline(offTimeline) }
                            sleeper.wake()
                        })
                else {
                    // Another thread moved time to the deadline meanwhile.
                    continuation.resume()
                    return
                }
                sleeper.install(continuation, scheduled: scheduled)
            }
        } onCancel: {
            sleeper.cancel()
        }
    }

    /// Schedules `action` on the scheduler, for the current time.
    public func schedule(_ action: @escaping @Sendable () -> Void) {
        self.scheduler.schedule(action)
    }

    /// Schedules `action` on the scheduler, `delay` seconds from now.
    public func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        return self.scheduler.schedule(after: delay, action)
    }

    /// Schedules `action` on the scheduler for the end of the current instant
    /// (``VirtualTimeScheduler/scheduleAtEndOfInstant(_:)``).
    public func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void) {
        self.scheduler.scheduleAtEndOfInstant(action)
    }

    /// `duration` in whole nanoseconds, rounded to the nearest as the scheduler rounds seconds (so
    /// `.seconds(2.3)`, 2.2999999999999998 s, is due with `schedule(after: 2.3)`), saturating at the
    /// ends of `Int64`: virtual time ends after about 292 years, so a later deadline is reached only when
    /// time is moved to its end.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let half: Int64 = 500_000_000
        let rounded = (attoseconds >= 0 ? attoseconds + half : attoseconds - half) / 1_000_000_000
        let (total, overflowAdding) = whole.addingReportingOverflow(rounded)
        if overflowAdding { return seconds < 0 ? .min : .max }
        return total
    }
}

/// One sleep on a ``VirtualClock``: wake-up, cancellation and the continuation's installation may come
/// in any order, from different threads.
final class VirtualSleeper: Sendable {
    private enum State {
        case starting
        case asleep(CheckedContinuation<Void, any Error>, scheduled: Disposable)
        case wokenEarly
        case cancelledEarly
        case finished
    }

    private enum Resume {
        case none
        case wake(CheckedContinuation<Void, any Error>)
        case cancel(CheckedContinuation<Void, any Error>, scheduled: Disposable)
    }

    private let state = LockedState<State>(.starting)

    func install(_ continuation: CheckedContinuation<Void, any Error>, scheduled: Disposable) {
        let resume = self.state.withLock { state -> Resume in
            switch state {
            case .starting:
                state = .asleep(continuation, scheduled: scheduled)
                return .none
            case .wokenEarly:
                state = .finished
                return .wake(continuation)
            case .cancelledEarly:
                state = .finished
                return .cancel(continuation, scheduled: scheduled)
            case .asleep, .finished:
                preconditionFailure("VirtualSleeper: installed twice")
            }
        }
        self.perform(resume)
    }

    func wake() {
        let resume = self.state.withLock { state -> Resume in
            switch state {
            case .starting:
                state = .wokenEarly
                return .none
            case .asleep(let continuation, _):
                state = .finished
                return .wake(continuation)
            case .wokenEarly, .cancelledEarly, .finished:
                return .none
            }
        }
        self.perform(resume)
    }

    func cancel() {
        let resume = self.state.withLock { state -> Resume in
            switch state {
            case .starting:
                state = .cancelledEarly
                return .none
            case .asleep(let continuation, let scheduled):
                state = .finished
                return .cancel(continuation, scheduled: scheduled)
            case .wokenEarly, .cancelledEarly, .finished:
                return .none
            }
        }
        self.perform(resume)
    }

    private func perform(_ resume: Resume) {
        switch resume {
        case .none:
            break
        case .wake(let continuation):
            continuation.resume()
        case .cancel(let continuation, let scheduled):
            scheduled.dispose()
            continuation.resume(throwing: CancellationError())
        }
    }
}
