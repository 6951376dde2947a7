import SwiftSignalKit

/// A scheduler whose time moves only when a test moves it, so timing code is tested without waiting.
///
/// Pass it wherever an operator or a `Timer` takes a scheduler, then move time with
/// ``advance(by:)``, ``advance(to:)`` or ``run()``. Scheduled actions run on the thread that moves
/// time, inside that call, in the order of their due time; actions due at the same instant run in the
/// order they were scheduled. Time starts at 0 and is measured in seconds.
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
/// Work scheduled "as soon as possible" (``schedule(_:)``) is due at the current time: it runs at the
/// next call that moves time, including `advance(by: 0)`.
///
/// Actions may schedule and cancel other actions, from any thread. Moving time is for one thread at a
/// time and not from inside an action: either is a precondition failure with a message, not a hang.
///
/// > Note: ``clock`` is the same time as a `Clock`, for async code that sleeps: a task sleeping on it
/// > wakes when time moves past its deadline.
public final class VirtualTimeScheduler: SignalScheduler {
    /// One scheduled action.
    struct Entry: Sendable {
        let due: Double
        /// Scheduling order, which breaks ties between actions due at the same instant.
        let order: UInt64
        let action: @Sendable () -> Void
    }

    struct State: Sendable {
        var now: Double = 0
        var nextOrder: UInt64 = 0
        /// Sorted by due time, then scheduling order.
        var entries: [Entry] = []
        var isMovingTime = false
        var scheduleWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let state = LockedState(State())

    /// The most actions that run at one virtual instant before ``advance(by:)`` or ``run()`` gives up
    /// with a precondition failure. A repeating timer with a period of 0 would otherwise never let time
    /// move on.
    public static let actionsPerInstantLimit = 100_000

    /// Creates a scheduler whose time is 0 and that has nothing scheduled.
    public init() {}

    /// The current virtual time, in seconds since the scheduler was made.
    public var now: Double {
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
        _ = self.enqueue(after: 0, action)
    }

    /// Schedules `action` to run when virtual time reaches `now + delay`.
    ///
    /// The rules for `delay` are those of every wait in the library: 0 or negative means now,
    /// `+infinity` never (the action is released at once), above 100 years is 100 years, NaN is a
    /// precondition failure.
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
        return self.enqueue(after: Swift.min(Swift.max(delay, 0), Self.maximumDelay), action)
    }

    /// 100 years, as for the real queues.
    static let maximumDelay: Double = 100 * 365 * 24 * 60 * 60

    private func enqueue(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        let (order, due, woken) = self.state.withLock { state -> (UInt64, Double, [CheckedContinuation<Void, Never>]) in
            let entry = Entry(due: state.now + delay, order: state.nextOrder, action: action)
            state.nextOrder += 1
            state.entries.insert(entry, at: state.insertionIndex(due: entry.due, order: entry.order))
            return (entry.order, entry.due, state.takeSatisfiedWaiters())
        }
        for continuation in woken {
            continuation.resume()
        }
        return ScheduledAction(scheduler: self, due: due, order: order)
    }

    /// Removes a scheduled action; returns it, to be released after unlocking.
    func cancel(due: Double, order: UInt64) -> Entry? {
        return self.state.withLock { state -> Entry? in
            let index = state.insertionIndex(due: due, order: order)
            guard index < state.entries.count, state.entries[index].order == order else { return nil }
            return state.entries.remove(at: index)
        }
    }

    /// Moves virtual time forward by `seconds`, running every action due until then, in order.
    ///
    /// - Parameter seconds: How far to move; 0 runs what is due now. Negative, NaN or infinite values
    ///   are precondition failures.
    public func advance(by seconds: Double) {
        if !(seconds >= 0 && seconds.isFinite) {
            misuse("VirtualTimeScheduler.advance(by:): seconds must be finite and ≥ 0, got \(seconds)")
        }
        self.moveTime(api: "advance(by:)") { now in now + seconds }
    }

    /// Moves virtual time forward to `time`, running every action due until then, in order.
    ///
    /// - Parameter time: The new time; not earlier than ``now``, and finite.
    public func advance(to time: Double) {
        self.moveTime(api: "advance(to:)") { now in
            if !(time >= now && time.isFinite) {
                misuse("VirtualTimeScheduler.advance(to:): time must be finite and not before now (\(now)), got \(time)")
            }
            return time
        }
    }

    /// Runs every scheduled action, moving time to each one's due time, until nothing is scheduled.
    ///
    /// Actions scheduled meanwhile run too, so a repeating timer never lets `run()` finish: it stops with
    /// a precondition failure after ``runActionLimit`` actions. Use ``advance(by:)`` for repeating work.
    public func run() {
        self.moveTime(api: "run()", actionLimit: Self.runActionLimit) { _ in .greatestFiniteMagnitude }
    }

    /// The most actions one call to ``run()`` runs before it stops with a precondition failure.
    public static let runActionLimit = 1_000_000

    /// Runs due actions one at a time, each outside the lock, until none is due by the target time.
    private func moveTime(api: String, actionLimit: Int = .max, target: (Double) -> Double) {
        let limit = self.state.withLock { state -> Double in
            if state.isMovingTime {
                misuse(
                    "VirtualTimeScheduler.\(api): time is already being moved, by an action calling it or by another thread; "
                        + "move time from one thread, outside scheduled actions")
            }
            state.isMovingTime = true
            return target(state.now)
        }
        var instant = -Double.infinity
        var actionsAtInstant = 0
        var actions = 0
        while true {
            let next = self.state.withLock { state -> Entry? in
                guard let first = state.entries.first, first.due <= limit else {
                    if limit > state.now, limit.isFinite, limit < .greatestFiniteMagnitude { state.now = limit }
                    state.isMovingTime = false
                    return nil
                }
                state.entries.removeFirst()
                state.now = first.due
                return first
            }
            guard let next else { return }
            actions += 1
            if actions > actionLimit {
                misuse(
                    "VirtualTimeScheduler.\(api): ran \(actionLimit) actions and more are scheduled: a repeating timer? Use advance(by:) for repeating work"
                )
            }
            if next.due == instant {
                actionsAtInstant += 1
                if actionsAtInstant > Self.actionsPerInstantLimit {
                    misuse(
                        "VirtualTimeScheduler.\(api): more than \(Self.actionsPerInstantLimit) actions ran at the instant \(instant): "
                            + "a repeating timer with a period of 0, or work that reschedules itself without delay?")
                }
            } else {
                instant = next.due
                actionsAtInstant = 1
            }
            next.action()
        }
    }

    /// Waits until at least `count` actions are scheduled: a test's way to know that code running in
    /// another task has reached its timer or its sleep before it moves time.
    ///
    /// - Parameter count: How many scheduled actions to wait for.
    public func waitUntilScheduled(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = self.state.withLock { state -> Bool in
                if state.entries.count >= count { return true }
                state.scheduleWaiters.append((count, continuation))
                return false
            }
            if ready {
                continuation.resume()
            }
        }
    }
}

extension VirtualTimeScheduler.State {
    /// Where an entry with this due time and order belongs (or is), by binary search.
    func insertionIndex(due: Double, order: UInt64) -> Int {
        var low = 0
        var high = self.entries.count
        while low < high {
            let middle = (low + high) / 2
            let entry = self.entries[middle]
            if entry.due < due || (entry.due == due && entry.order < order) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

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
    private let scheduler: VirtualTimeScheduler
    private let due: Double
    private let order: UInt64

    init(scheduler: VirtualTimeScheduler, due: Double, order: UInt64) {
        self.scheduler = scheduler
        self.due = due
        self.order = order
    }

    func dispose() {
        let removed = self.scheduler.cancel(due: self.due, order: self.order)
        // The action is released here, after unlocking.
        withExtendedLifetime(removed) {}
    }
}
