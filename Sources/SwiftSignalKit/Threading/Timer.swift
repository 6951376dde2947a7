import Dispatch

/// A one-shot or repeating timer that fires on a ``Queue``, or on any ``SignalScheduler`` (a
/// virtual-time scheduler in tests).
///
/// Kept for source compatibility with the original SwiftSignalKit. In new code, prefer a signal,
/// `timer(_:period:scheduler:)` or `interval(_:scheduler:)` with a `Duration`, whose subscription is
/// its disposable, or a scheduler's `schedule(after:_:)` for one action. In a file that imports
/// Foundation too, plain `Timer` is ambiguous: write `SwiftSignalKit.Timer`.
///
/// ```swift
/// let timer = Timer(timeout: 1.0, repeat: true, completion: { print("tick") }, queue: Queue())
/// timer.start()
/// // later
/// timer.invalidate()
/// ```
///
/// The timer does not keep itself alive: keep a reference while it should fire (releasing it
/// invalidates it). A one-shot timer invalidates itself after firing. ``start()`` on a started timer
/// restarts it.
///
/// ### Timeouts that are not ordinary numbers
///
/// | `timeout` | One-shot (`repeat: false`) | Repeating (`repeat: true`) |
/// | --- | --- | --- |
/// | NaN | precondition failure in `init` | precondition failure in `init` |
/// | negative, `-infinity` | fires as soon as possible (the deadline has passed) | precondition failure in `init` |
/// | `0` | fires as soon as possible | fires back to back, as often as the queue runs it |
/// | above 100 years | waits 100 years | fires every 100 years |
/// | `+infinity` | never fires | never fires |
///
/// Dispatch itself would trap on a negative, NaN or huge (≥ 2^64 ns, e.g. `1e11` s) repeating interval;
/// the precondition message names the argument and the value instead.
public final class Timer: Sendable {
    /// What the current start armed: a dispatch timer source, or the firing scheduled on a scheduler.
    private let armed = LockedState<Disposable?>(nil)
    /// The wait before the first firing (and, when repeating, between firings).
    private let wait: Wait
    private let `repeat`: Bool
    private let completion: @Sendable (Timer) -> Void
    private let clock: Clock

    /// Where the timer fires.
    private enum Clock: Sendable {
        /// A dispatch timer source on the queue: repeating firings keep Dispatch's period.
        case queue(Queue)
        /// One scheduled action per firing.
        case scheduler(any SignalScheduler)
    }

    /// Creates a timer whose handler takes no arguments.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same
    /// initialiser with a `Duration` `timeout`.
    ///
    /// - Parameters:
    ///   - timeout: Seconds until it fires, and between firings when repeating. See the type's
    ///     documentation for negative, NaN, infinite and huge values.
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`.
    ///   - queue: Where the handler runs.
    ///
    /// > Important: Traps, with a message naming `timeout` and its value, when `timeout` is NaN, or
    /// > negative for a repeating timer.
    @preconcurrency public init(timeout: Double, `repeat`: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.wait = Timer.wait(timeout, repeat: `repeat`)
        self.`repeat` = `repeat`
        self.completion = { _ in completion() }
        self.clock = .queue(queue)
    }

    /// Creates a timer whose handler receives the timer.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same
    /// initialiser with a `Duration` `timeout`.
    ///
    /// - Parameters:
    ///   - timeout: Seconds until it fires, and between firings when repeating. See the type's
    ///     documentation for negative, NaN, infinite and huge values.
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`; it may call ``invalidate()``.
    ///   - queue: Where the handler runs.
    ///
    /// > Important: Traps, with a message naming `timeout` and its value, when `timeout` is NaN, or
    /// > negative for a repeating timer.
    @preconcurrency public init(timeout: Double, `repeat`: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue) {
        self.wait = Timer.wait(timeout, repeat: `repeat`)
        self.`repeat` = `repeat`
        self.completion = completion
        self.clock = .queue(queue)
    }

    /// Creates a timer that fires on a scheduler, such as a virtual-time scheduler in tests.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer the same
    /// initialiser with a `Duration` `timeout`.
    ///
    /// On a ``Queue`` this is the queue's timer. On another scheduler, a repeating timer schedules each
    /// firing `timeout` seconds after the previous handler returned.
    ///
    /// - Parameters:
    ///   - timeout: Seconds until it fires, and between firings when repeating. See the type's
    ///     documentation for negative, NaN, infinite and huge values.
    ///   - repeat: Whether it fires repeatedly.
    ///   - scheduler: Where the handler runs.
    ///   - completion: The handler; it may call ``invalidate()``.
    ///
    /// > Important: Traps, with a message naming `timeout` and its value, when `timeout` is NaN, or
    /// > negative for a repeating timer.
    public init(timeout: Double, `repeat`: Bool, scheduler: some SignalScheduler, completion: @escaping @Sendable (Timer) -> Void) {
        self.wait = Timer.wait(timeout, repeat: `repeat`, api: "Timer(timeout:repeat:scheduler:completion:)")
        self.`repeat` = `repeat`
        self.completion = completion
        if let queue = scheduler as? Queue {
            // A dispatch timer source keeps a repeating timer's period without drift.
            self.clock = .queue(queue)
        } else {
            self.clock = .scheduler(scheduler)
        }
    }

    private static func wait(_ timeout: Double, `repeat`: Bool, api: String = "Timer(timeout:repeat:completion:queue:)") -> Wait {
        return TimeIntervalValidation.wait(timeout, as: `repeat` ? .interval : .delay, api: api, argument: "timeout")
    }

    deinit {
        self.invalidate()
    }

    /// Starts (or restarts) the timer.
    ///
    /// A timer whose timeout is `+infinity` never fires: starting it only stops an earlier start.
    public func start() {
        guard case .seconds(let seconds) = self.wait else {
            self.invalidate()
            return
        }
        switch self.clock {
        case .queue(let queue):
            self.arm(queue, seconds: seconds)
        case .scheduler(let scheduler):
            self.arm(scheduler, seconds: seconds)
        }
    }

    private func arm(_ queue: Queue, seconds: Double) {
        if TimelineExecutor.refusesDeparture("a Timer on the Queue \(queue.queue.label)") { return }
        let timer = DispatchSource.makeTimerSource(queue: queue.queue)
        let box = DispatchSourceTimerBox(timer)
        // Marked, so that `isCurrent()` of a global queue is true in the handler, as in its other work.
        timer.setEventHandler(
            handler: queue.marked { [weak self, weak box] in
                guard let self, let box else { return }
                // A handler that was queued before `invalidate()` must not run after it.
                guard self.armed.withLock({ $0 === box }) else { return }
                self.completion(self)
                if !self.repeat {
                    self.invalidate(ifCurrent: box)
                }
            })
        // `seconds` is finite, from 0 to 100 years: Dispatch accepts it as a deadline and as an interval.
        let deadline = DispatchTime.now() + seconds
        if self.repeat {
            timer.schedule(deadline: deadline, repeating: seconds)
        } else {
            timer.schedule(deadline: deadline)
        }
        self.replaceArmed(with: box)
        timer.resume()
    }

    private func arm(_ scheduler: some SignalScheduler, seconds: Double) {
        let firing = SchedulerTimerFirings()
        self.replaceArmed(with: firing)
        self.scheduleFiring(firing, number: 0, on: scheduler, after: seconds)
    }

    /// Schedules firing `number` of the start that `firings` stands for. The scheduler holds the timer
    /// weakly, like a dispatch source's handler. A repeating timer schedules its next firing after the
    /// handler returns, so firings never overlap, also on a concurrent scheduler.
    private func scheduleFiring(
        _ firings: SchedulerTimerFirings, number: UInt64, on scheduler: some SignalScheduler, after seconds: Double
    ) {
        let scheduled = scheduler.schedule(after: seconds) { [weak self, weak firings] in
            guard let self, let firings else { return }
            guard self.armed.withLock({ $0 === firings }) else { return }
            self.completion(self)
            if self.repeat {
                // Not if the handler invalidated or restarted the timer; an `invalidate()` racing with
                // this disposes `firings`, which then disposes what it is given.
                if self.armed.withLock({ $0 === firings }) {
                    self.scheduleFiring(firings, number: number + 1, on: scheduler, after: seconds)
                }
            } else {
                self.invalidate(ifCurrent: firings)
            }
        }
        // This firing may already have run on another thread and stored the next one: numbered, so that
        // it is not stored over that one (which would cancel it, and the timer would stop).
        firings.store(scheduled, number: number)
    }

    private func replaceArmed(with armed: Disposable) {
        let previous = self.armed.withLock { current -> Disposable? in
            let previous = current
            current = armed
            return previous
        }
        previous?.dispose()
    }

    /// Stops the timer. Called from the timer's handler, or on its queue when that queue is serial, no
    /// handler runs after it. Called from another thread (other work of a concurrent queue, such as a
    /// global one, included), it never waits: a handler already running finishes, and a firing that
    /// had just begun may still call the handler an instant after `invalidate()` returns, as a delivery
    /// under way may after `dispose()`. Later firings do not run.
    ///
    /// The timer keeps its handler (and what the handler captures) until the timer itself is released,
    /// as the original does, so that ``start()`` can run it again: an owner that keeps a timer whose
    /// handler captures the owner strongly makes a cycle that `invalidate()` does not break. Capture the
    /// owner weakly, or release the timer when invalidating it.
    public func invalidate() {
        let previous = self.armed.withLock { current -> Disposable? in
            let previous = current
            current = nil
            return previous
        }
        previous?.dispose()
    }

    private func invalidate(ifCurrent armed: Disposable) {
        let cancelled = self.armed.withLock { current -> Bool in
            guard current === armed else { return false }
            current = nil
            return true
        }
        if cancelled {
            armed.dispose()
        }
    }
}

/// The scheduled firings of one start of a ``Timer`` on a ``SignalScheduler``: the action of the latest
/// firing, which disposing cancels. Firings are numbered, since the action of one can run (on another
/// thread) and schedule the next before the scheduler has returned the first's disposable.
final class SchedulerTimerFirings: Disposable {
    private struct State {
        var latest: (number: UInt64, action: Disposable)?
        var isDisposed = false
    }

    private let state = LockedState<State>(State())

    /// Keeps `action`, firing `number`'s, unless a later firing's is kept already (this one has run:
    /// it is let go). Disposes it at once after ``dispose()``.
    func store(_ action: Disposable, number: UInt64) {
        let (stale, rejected) = self.state.withLock { state -> (Disposable?, Disposable?) in
            if state.isDisposed { return (nil, action) }
            if let latest = state.latest, latest.number > number { return (action, nil) }
            let previous = state.latest?.action
            state.latest = (number, action)
            return (previous, nil)
        }
        // Released or disposed here, outside the lock. An earlier firing's action has run (it scheduled
        // this one): letting it go is enough.
        withExtendedLifetime(stale) {}
        rejected?.dispose()
    }

    func dispose() {
        let latest = self.state.withLock { state -> Disposable? in
            state.isDisposed = true
            defer { state.latest = nil }
            return state.latest?.action
        }
        latest?.dispose()
    }
}

/// A dispatch timer source, held by reference so a handler can tell whether its source is still current;
/// disposing it cancels the source.
final class DispatchSourceTimerBox: Disposable, @unchecked Sendable {
    // Safe: `timer` is immutable after init, and DispatchSource methods are thread-safe.
    let timer: DispatchSourceTimer

    init(_ timer: DispatchSourceTimer) {
        self.timer = timer
    }

    func dispose() {
        self.timer.cancel()
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

extension Timer {
    /// Creates a timer whose handler takes no arguments: the `Duration` form of
    /// `init(timeout:repeat:completion:queue:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`.
    ///   - queue: Where the handler runs.
    @preconcurrency public convenience init(timeout: Duration, `repeat`: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.init(
            timeout: Timer.seconds(of: timeout, repeating: `repeat`, api: "Timer(timeout:repeat:completion:queue:)"), repeat: `repeat`,
            completion: completion, queue: queue)
    }

    /// Creates a timer whose handler receives the timer: the `Duration` form of
    /// `init(timeout:repeat:completion:queue:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`; it may call ``invalidate()``.
    ///   - queue: Where the handler runs.
    @preconcurrency public convenience init(
        timeout: Duration, `repeat`: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue
    ) {
        self.init(
            timeout: Timer.seconds(of: timeout, repeating: `repeat`, api: "Timer(timeout:repeat:completion:queue:)"), repeat: `repeat`,
            completion: completion, queue: queue)
    }

    /// Creates a timer that fires on a scheduler: the `Duration` form of
    /// `init(timeout:repeat:scheduler:completion:)`.
    ///
    /// - Parameters:
    ///   - timeout: Time until it fires, and between firings when repeating (then not negative).
    ///   - repeat: Whether it fires repeatedly.
    ///   - scheduler: Where the handler runs.
    ///   - completion: The handler; it may call ``invalidate()``.
    public convenience init(
        timeout: Duration, `repeat`: Bool, scheduler: some SignalScheduler, completion: @escaping @Sendable (Timer) -> Void
    ) {
        self.init(
            timeout: Timer.seconds(of: timeout, repeating: `repeat`, api: "Timer(timeout:repeat:scheduler:completion:)"), repeat: `repeat`,
            scheduler: scheduler, completion: completion)
    }

    /// The seconds of a `Duration` form's timeout: a repeating timer's must not be negative.
    private static func seconds(of timeout: Duration, repeating: Bool, api: String) -> Double {
        guard repeating else { return timeout.secondsForSignals }
        return timeout.secondsForSignals(notNegative: api, argument: "a repeating timer's timeout")
    }
}
