import SwiftSignalKit

/// A scheduler whose time moves only when a test moves it, so timing code is tested without waiting.
///
/// Pass it wherever an operator or a `Timer` takes a scheduler, then move time with ``advance(by:)-(Double)``,
/// ``advance(to:)-(Double)`` or ``run()``. Scheduled actions run on the thread that moves time, inside that call,
/// in the order of their due time; actions due at the same instant run in the order they were
/// scheduled. (In ``run(timeLimit:_:)`` time moves by itself, and the actions run in a task of the run
/// that has the caller's task-local values, as the body does: an `#expect` in a callback that an action
/// makes counts for the test that runs it; values bound inside the body do not reach the actions.) Time starts at 0 and is given in seconds.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// let fired = Atomic(value: false)
/// let timer = SwiftSignalKit.Timer(timeout: 5, repeat: false, scheduler: scheduler) { _ in
///     _ = fired.swap(true)
/// }
/// timer.start()
/// scheduler.advance(by: 4.9)  // not yet
/// scheduler.advance(by: 0.1)  // fires now, at 5.0
/// ```
///
/// Time is kept in whole nanoseconds: every time and delay is rounded to the nearest nanosecond, so
/// `0.1 + 0.2` seconds of delays are due at exactly `0.3`. It can reach about 292 years
/// (``maximumTime``).
///
/// Work scheduled "as soon as possible" (``schedule(_:)``) is due at the current time: it runs at the
/// next call that moves time, including `advance(by: 0)`. Work scheduled for the end of the instant
/// (``scheduleAtEndOfInstant(_:)``) runs at the current time too, once nothing else is due then.
///
/// Actions may schedule and cancel other actions, from any thread. Moving time is for one thread at a
/// time and not from inside an action: either is a precondition failure with a message, not a hang.
/// During ``run(timeLimit:_:)``, an action scheduled from a thread other than the run's is work that
/// comes back from off the timeline, and stops the run with ``WorkLeftTheTimeline``.
///
/// > Note: ``clock`` is the same time as a `Clock`, for async code that sleeps: a task sleeping on it
/// > wakes when time reaches its deadline.
public final class VirtualTimeScheduler: SignalScheduler {
    /// One scheduled action.
    struct Entry: Sendable {
        /// Nanoseconds since the scheduler was made.
        let due: Int64
        /// Whether the action waits for the end of its instant (``scheduleAtEndOfInstant(_:)``): it
        /// sorts after every other action due at that instant, including those scheduled later.
        let endsInstant: Bool
        /// Scheduling order, which breaks ties between actions due at the same instant.
        let order: UInt64
        let action: @Sendable () -> Void
        /// Whether it was scheduled during a run, from a thread that does not drive it: the run stops
        /// before running it, instead of running it at a time that depends on that thread.
        var cameFromAnotherThread = false
    }

    /// A task in ``waitUntilScheduled(_:)``.
    struct ScheduleWaiter: Sendable {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    struct State: Sendable {
        /// Nanoseconds since the scheduler was made.
        var now: Int64 = 0
        var nextOrder: UInt64 = 0
        var entries = ScheduledActions()
        var isMovingTime = false
        /// Whether ``VirtualTimeScheduler/run(timeLimit:_:)`` is driving the timeline.
        var isDriving = false
        /// Why the last run stopped before its body returned, if it did: no run may follow.
        var runStoppedEarly: String?
        var scheduleWaiters: [ScheduleWaiter] = []
        /// Waits cancelled before their continuation was stored.
        var cancelledWaits: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    let state = LockedState(State())

    /// The timeline's task executor (``executor``).
    let jobs = TimelineJobs()

    /// The most actions that run at one virtual instant before ``advance(by:)-(Double)`` or ``run()`` gives up
    /// with a precondition failure. A repeating timer with a period of 0 would otherwise never let time
    /// move on.
    public static let actionsPerInstantLimit = 100_000

    /// The most actions one call to ``run()`` runs before it stops with a precondition failure, and the
    /// most a ``run(timeLimit:_:)`` without a time limit runs before it gives up a body that has not
    /// returned as ``Stalled``.
    public static let runActionLimit = 1_000_000

    /// The latest virtual time, in seconds: about 292 years, the most nanoseconds an `Int64` holds.
    public static let maximumTime = Double(Int64.max) / 1e9

    /// 100 years, as for the real queues.
    static let maximumDelay: Double = 100 * 365 * 24 * 60 * 60

    /// Creates a scheduler whose time is 0 and that has nothing scheduled.
    public init() {}

    /// The current virtual time, in seconds since the scheduler was made.
    public var now: Double {
        return Double(self.nanosecondsNow) / 1e9
    }

    /// The current virtual time in nanoseconds.
    var nanosecondsNow: Int64 {
        return self.state.withLock { $0.now }
    }

    /// How many actions are scheduled and not yet run or cancelled.
    public var scheduledActionCount: Int {
        return self.state.withLock { $0.entries.count }
    }

    /// Schedules `action` for the current virtual time: it runs at the next call that moves time.
    ///
    /// - Parameter action: The work.
    public func schedule(_ action: @escaping @Sendable () -> Void) {
        _ = self.enqueue(action) { now in now }!
    }

    /// Schedules `action` for the end of the current virtual instant: it runs at the next call that moves
    /// time, after every other action due at this instant, including the actions those schedule for it,
    /// and before time moves on. During a run of the timeline (``run(timeLimit:_:)``), also after every
    /// task that can run at this instant.
    ///
    /// `timeout` uses it to let an event due exactly when its wait ends pass, however many actions
    /// (`deliverOn` hops, say) the event takes to arrive. Actions for the end of one instant run in the
    /// order they were scheduled.
    ///
    /// - Parameter action: The work.
    public func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void) {
        _ = self.enqueue(action, endsInstant: true) { now in now }!
    }

    /// Schedules `action` to run when virtual time reaches `now + delay`.
    ///
    /// The rules for `delay` are those of every wait in the library: 0 or negative means now,
    /// `+infinity` never (the action is released at once), above 100 years is 100 years, NaN is a
    /// precondition failure. A wait that would end past ``maximumTime`` is due at ``maximumTime``, as a
    /// ``clock`` deadline past it is: it runs only once time is moved to its end.
    ///
    /// - Parameters:
    ///   - delay: Seconds of virtual time.
    ///   - action: The work.
    /// - Returns: A disposable that cancels the action, if it has not run, and releases it.
    public func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        if delay.isNaN {
            misuse(
                "VirtualTimeScheduler.schedule(after:_:): delay must be a number of seconds (negative means now, .infinity means never), got \(delay)"
            )
        }
        if delay == .infinity {
            return EmptyDisposable
        }
        let nanoseconds = Self.nanoseconds(Swift.min(Swift.max(delay, 0), Self.maximumDelay))
        return self.enqueue(action) { now in now.addingReportingOverflow(nanoseconds).overflow ? .max : now + nanoseconds }!
    }

    /// Schedules `action` for the absolute virtual time `deadline` (nanoseconds); nil, scheduling
    /// nothing, if time has reached it already.
    func schedule(atNanoseconds deadline: Int64, _ action: @escaping @Sendable () -> Void) -> Disposable? {
        return self.enqueue(action) { now in deadline > now ? deadline : nil }
    }

    /// Seconds to whole nanoseconds; `seconds` is finite and at most ``maximumTime``.
    static func nanoseconds(_ seconds: Double) -> Int64 {
        let value = (seconds * 1e9).rounded()
        return value >= Double(Int64.max) ? .max : Int64(value)
    }

    /// Schedules `action` at the time `due` gives for the current time, under the lock; nothing when it
    /// gives nil.
    private func enqueue(
        _ action: @escaping @Sendable () -> Void, endsInstant: Bool = false, due: (Int64) -> Int64?
    ) -> Disposable? {
        let (scheduled, woken, fromAnotherThread) = self.state.withLock {
            state -> (UInt64?, [CheckedContinuation<Void, Never>], Bool) in
            // During a run, from a thread that does not drive it: whether the action lands before or
            // after what the run does meanwhile depends on that thread.
            let fromAnotherThread = state.isDriving && !TimelineExecutor.isDrivingThread(of: self.jobs)
            guard let due = due(state.now) else { return (nil, [], fromAnotherThread) }
            let entry = Entry(
                due: due, endsInstant: endsInstant, order: state.nextOrder, action: action, cameFromAnotherThread: fromAnotherThread)
            state.nextOrder += 1
            state.entries.insert(entry)
            return (entry.order, state.takeSatisfiedWaiters(), fromAnotherThread)
        }
        if fromAnotherThread {
            self.jobs.noteActionFromAnotherThread()
        }
        for continuation in woken {
            continuation.resume()
        }
        return scheduled.map { ScheduledAction(scheduler: self, order: $0) }
    }

    /// Removes a scheduled action (not one for the end of an instant: those have no disposable);
    /// returns it, to be released after unlocking.
    func cancel(order: UInt64) -> Entry? {
        return self.state.withLock { state -> Entry? in
            return state.entries.remove(order: order)
        }
    }

    /// Moves virtual time forward by `seconds`, running every action due until then, in order.
    ///
    /// - Parameter seconds: How far to move; 0 runs what is due now. Negative, NaN or infinite values,
    ///   and moves past ``maximumTime``, are precondition failures.
    public func advance(by seconds: Double) {
        if !(seconds >= 0 && seconds.isFinite) {
            misuse("VirtualTimeScheduler.advance(by:): seconds must be finite and ≥ 0, got \(seconds)")
        }
        self.moveTime(api: "advance(by:)") { now in
            let (target, overflow) = now.addingReportingOverflow(Self.nanoseconds(Swift.min(seconds, Self.maximumTime)))
            if overflow || seconds > Self.maximumTime {
                misuse(
                    "VirtualTimeScheduler.advance(by:): virtual time ends at \(Self.maximumTime) seconds; moving \(seconds) from \(Double(now) / 1e9) passes it"
                )
            }
            return target
        }
    }

    /// Moves virtual time forward to `time`, running every action due until then, in order.
    ///
    /// - Parameter time: The new time, in seconds: not earlier than ``now``, and at most ``maximumTime``.
    public func advance(to time: Double) {
        let requested = time.isFinite && time >= 0 && time <= Self.maximumTime ? Self.nanoseconds(time) : -1
        self.advance(toNanoseconds: requested, describedAs: "\(time)") { now in
            // `now` as seconds, read back: past 2^53 ns a Double cannot hold every nanosecond.
            time >= Double(now) / 1e9
        }
    }

    /// Moves virtual time forward to `requested` nanoseconds (-1 for a time out of range), running every
    /// action due until then; `isNow` says whether a request that converts to just before the current
    /// time meant the current time.
    func advance(toNanoseconds requested: Int64, describedAs time: String, isNow: (Int64) -> Bool = { _ in false }) {
        self.moveTime(api: "advance(to:)") { now in
            var nanoseconds = requested
            if nanoseconds < now && nanoseconds >= 0 && isNow(now) {
                nanoseconds = now
            }
            if nanoseconds < now {
                misuse(
                    "VirtualTimeScheduler.advance(to:): time must be a number of seconds from now (\(Double(now) / 1e9)) to \(Self.maximumTime), got \(time)"
                )
            }
            return nanoseconds
        }
    }

    /// Runs every scheduled action, moving time to each one's due time, until nothing is scheduled.
    ///
    /// Actions scheduled meanwhile run too, so a repeating timer never lets `run()` finish: it stops with
    /// a precondition failure after ``runActionLimit`` actions. Use ``advance(by:)-(Double)`` for repeating work.
    public func run() {
        self.moveTime(api: "run()", actionLimit: Self.runActionLimit, movesToTarget: false) { _ in .max }
    }

    /// Runs due actions one at a time, each outside the lock, until none is due by the target time, then
    /// sets the time to the target (unless `movesToTarget` is false: `run()` stops at the last action).
    private func moveTime(api: String, actionLimit: Int = .max, movesToTarget: Bool = true, target: (Int64) -> Int64) {
        let limit = self.state.withLock { state -> Int64 in
            Self.claimTime(&state, api: api)
            return target(state.now)
        }
        var counter = ActionCounter(api: api)
        var actions = 0
        while let next = self.nextAction(upTo: limit, endingMove: movesToTarget) {
            actions += 1
            if actions > actionLimit {
                misuse(
                    "VirtualTimeScheduler.\(api): ran \(actionLimit) actions and more are scheduled: a repeating timer? Use advance(by:) for repeating work"
                )
            }
            counter.count(next)
            next.action()
        }
    }

    /// Takes the role of moving time, or fails naming who holds it.
    private static func claimTime(_ state: inout State, api: String) {
        if state.isDriving {
            misuse(
                "VirtualTimeScheduler.\(api): the scheduler is running a timeline (run(timeLimit:_:)): one run at a time, and inside "
                    + "a run time moves by itself when nothing can run (sleep on scheduler.clock to let it pass)")
        }
        if state.isMovingTime {
            misuse(
                "VirtualTimeScheduler.\(api): time is already being moved, by an action calling it or by another thread; "
                    + "move time from one thread, outside scheduled actions")
        }
        state.isMovingTime = true
    }

    /// Takes the timeline for a run; returns the time the run starts at.
    ///
    /// The timeline's jobs take notes of work off the timeline before the scheduler starts marking
    /// the actions that other threads schedule: a note is made only while a run holds the timeline, and
    /// the run never runs a marked action, so a mark without its note would leave the run waiting,
    /// behind that action, for its grace, to report a stall that names no cause. (It did: a subscription
    /// made before the run, whose task slept on the clock as the run started, got `Stalled` after 5 s in
    /// 16 of 20 runs, a probe, 2026-12-01.)
    func claimForRun(api: String) -> Int64 {
        self.jobs.claimForRun()
        return self.startDriving(api: api)
    }

    /// Takes the role of moving time for a run of the timeline; returns the time the run starts at.
    private func startDriving(api: String) -> Int64 {
        return self.state.withLock { state -> Int64 in
            if let stoppedEarly = state.runStoppedEarly {
                misuse(
                    "VirtualTimeScheduler.\(api): an earlier run of this scheduler stopped early (\(stoppedEarly)), and the tasks it "
                        + "left may still wake; make a new VirtualTimeScheduler for each run")
            }
            Self.claimTime(&state, api: api)
            state.isDriving = true
            return state.now
        }
    }

    /// Gives the role back at the end of a run; `early` says why the run stopped before its body had
    /// returned, if it did.
    func stopDriving(early: String?) {
        self.state.withLock { state in
            state.isMovingTime = false
            state.isDriving = false
            state.runStoppedEarly = early
        }
    }

    /// Moves the time to `time` (a run's time limit), if it is later.
    func setTime(_ time: Int64) {
        self.state.withLock { $0.now = Swift.max($0.now, time) }
    }

    /// Whether a run is driving the timeline.
    var isDrivingTimeline: Bool {
        return self.state.withLock { $0.isDriving }
    }

    /// Removes the first action due by `limit` and moves the time to its due time; nil when none is due
    /// by then.
    ///
    /// - Parameter endingMove: When none is due, end the move of time in the same critical section (an
    ///   action scheduled by another thread is then either run or due after the move), moving the time
    ///   to `limit` if true; nil for a run of the timeline, which ends its move itself.
    func nextAction(upTo limit: Int64, endingMove: Bool? = nil) -> Entry? {
        return self.state.withLock { state -> Entry? in
            // In a run (no `endingMove`), an action from another thread stops it before it runs: the
            // driver finds the note that its scheduler makes just after scheduling it.
            guard let first = state.entries.first(), first.due <= limit, endingMove != nil || !first.cameFromAnotherThread else {
                if let movesToTarget = endingMove {
                    if movesToTarget { state.now = Swift.max(state.now, limit) }
                    state.isMovingTime = false
                }
                return nil
            }
            state.entries.removeFirst()
            state.now = Swift.max(state.now, first.due)
            return first
        }
    }

    /// Waits until at least `count` actions are scheduled: a test's way to know that code running in
    /// another task has reached its timer or its sleep before it moves time.
    ///
    /// `count` is of every action the scheduler holds, not of new ones: with others already scheduled
    /// (a marble signal's later events, a recorder's), wait for one more than there are, as in
    /// `await scheduler.waitUntilScheduled(scheduler.scheduledActionCount + 1)` read before the task
    /// is started.
    ///
    /// Returns early, without throwing, if the task is cancelled (a test's time limit, say).
    ///
    /// - Parameter count: How many scheduled actions to wait for.
    public func waitUntilScheduled(_ count: Int) async {
        let id = self.state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = self.state.withLock { state -> Bool in
                    if state.entries.count >= count || state.cancelledWaits.remove(id) != nil { return true }
                    state.scheduleWaiters.append(ScheduleWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready {
                    continuation.resume()
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.scheduleWaiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledWaits.insert(id)
                    return nil
                }
                return state.scheduleWaiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
        // A cancellation after the wait ended left its mark; clear it.
        _ = self.state.withLock { $0.cancelledWaits.remove(id) }
    }
}

/// Counts the actions run at one virtual instant, to stop work that reschedules itself without delay.
struct ActionCounter {
    let api: String
    private var instant = Int64.min
    private var actionsAtInstant = 0

    init(api: String) {
        self.api = api
    }

    mutating func count(_ action: VirtualTimeScheduler.Entry) {
        if action.due == self.instant {
            self.actionsAtInstant += 1
            if self.actionsAtInstant > VirtualTimeScheduler.actionsPerInstantLimit {
                if self.instant == .max {
                    misuse(
                        "VirtualTimeScheduler.\(self.api): more than \(VirtualTimeScheduler.actionsPerInstantLimit) actions ran at the end of virtual time "
                            + "(maximumTime, \(VirtualTimeScheduler.maximumTime) s), where every wait that would end later is due: "
                            + "a repeating timer, or work that waits again, once time has been moved to its end. "
                            + "Keep the test's times well inside maximumTime.")
                }
                misuse(
                    "VirtualTimeScheduler.\(self.api): more than \(VirtualTimeScheduler.actionsPerInstantLimit) actions ran at the instant \(Double(self.instant) / 1e9): "
                        + "a repeating timer with a period of 0, or work that reschedules itself without delay "
                        + "(schedule(_:) or scheduleAtEndOfInstant(_:) from its own action)?")
            }
        } else {
            self.instant = action.due
            self.actionsAtInstant = 1
        }
    }
}

extension VirtualTimeScheduler.State {
    /// Removes and returns the waiters of ``VirtualTimeScheduler/waitUntilScheduled(_:)`` that are
    /// satisfied, to be resumed after unlocking.
    mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
        guard !self.scheduleWaiters.isEmpty else { return [] }
        let count = self.entries.count
        var woken: [CheckedContinuation<Void, Never>] = []
        self.scheduleWaiters.removeAll { waiter in
            guard waiter.count <= count else { return false }
            woken.append(waiter.continuation)
            return true
        }
        return woken
    }
}

/// The disposable of one scheduled action.
final class ScheduledAction: Disposable {
    /// Weak: the action it cancels often holds, through a subscriber, this very disposable, and the
    /// scheduler holds the action until it runs. A strong reference closed that loop, so a scheduler
    /// released with work still pending (a test that ends before a diagram's last event) was never
    /// freed, nor was anything its actions held. (An operator's pending action, a `debounce` still
    /// waiting, holds the operator, which holds the scheduler: that loop stays until the action runs or
    /// is cancelled, as the testing article says.) Once the scheduler is gone there is nothing to cancel.
    private weak let scheduler: VirtualTimeScheduler?
    private let order: UInt64

    init(scheduler: VirtualTimeScheduler, order: UInt64) {
        self.scheduler = scheduler
        self.order = order
    }

    func dispose() {
        let removed = self.scheduler?.cancel(order: self.order)
        // The action is released here, after unlocking.
        withExtendedLifetime(removed) {}
    }
}
