import Dispatch

/// Where the time-based operators run their timed work: a ``Queue`` in production, a virtual-time
/// scheduler in tests.
///
/// Every timing operator and ``Timer`` take a scheduler as an argument, with a real queue as the default
/// or as the older `queue:` overload, so production code pays nothing for testability and nothing global
/// changes between a test and production. `SwiftSignalKitTesting` provides `VirtualTimeScheduler`, on
/// which the same operators run when a test advances time:
///
/// ```swift
/// // A server coalescing a client's bursts of updates: a queue of its own in production, a
/// // VirtualTimeScheduler in the test.
/// func settled(_ updates: Signal<String, NoError>, scheduler: some SignalScheduler = Queue())
///     -> Signal<String, NoError>
/// {
///     return updates |> debounce(for: .milliseconds(300), scheduler: scheduler)
/// }
/// ```
///
/// ### Conforming
///
/// A conformance runs each action once, never inline on the caller's stack, and never after the
/// disposable that ``schedule(after:_:)`` returned has been disposed (an action already running
/// finishes). Actions scheduled for the same time run in the order they were scheduled. No method
/// may block the caller, and no lock may be held while an action runs. ``scheduleAtEndOfInstant(_:)``
/// has a default, ``schedule(_:)``, which is right for every scheduler whose time is real; a scheduler
/// that forwards to another (a wrapper that logs, say) must forward it too, or a virtual-time scheduler
/// behind it loses what it promises at one instant.
public protocol SignalScheduler: Sendable {
    /// Runs `action` as soon as possible, after the caller returns.
    ///
    /// - Parameter action: The work.
    func schedule(_ action: @escaping @Sendable () -> Void)

    /// Runs `action` after `delay` seconds, unless the returned disposable is disposed first.
    ///
    /// `delay` follows the library's rules for waits: 0 or negative runs as soon as possible, `+infinity`
    /// never runs the action (it is released at once), a value above 100 years waits 100 years, and NaN
    /// is a precondition failure naming the argument and the value.
    ///
    /// - Parameters:
    ///   - delay: Seconds to wait.
    ///   - action: The work.
    /// - Returns: A disposable that cancels the action if it has not started; disposing it releases the
    ///   action.
    func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable

    /// Runs `action` at the current instant, after every action due at it, including the actions those
    /// schedule for it.
    ///
    /// The time-based operators decide with it what happens when a wait ends at the very instant an
    /// event is due: `timeout` asks for it when its wait runs out, so an event due then arrives first
    /// and passes, however many actions it takes to arrive. Such actions run in the order they were
    /// scheduled, so of two waits that end at one instant, the one armed first decides first, as on a
    /// real queue, where it also ends first. On a scheduler whose time is real, two
    /// things never happen at exactly the same instant, and the default, ``schedule(_:)``, is all it
    /// needs; a virtual-time scheduler runs such actions when nothing else is due at the instant (and,
    /// on a timeline, no task can run).
    ///
    /// - Parameter action: The work.
    func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void)
}

extension Queue: SignalScheduler {
    /// Runs `action` on the queue, after the caller returns (also when called on the queue).
    ///
    /// - Parameter action: The work.
    public func schedule(_ action: @escaping @Sendable () -> Void) {
        self.justDispatch(action)
    }

    /// Runs `action` on the queue after `delay` seconds of the monotonic clock, unless the returned
    /// disposable is disposed first.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer
    /// `schedule(after:_:)` with a `Duration`.
    ///
    /// - Parameters:
    ///   - delay: Seconds to wait; see ``SignalScheduler/schedule(after:_:)`` for the rules.
    ///   - action: The work.
    /// - Returns: A disposable that cancels the action and releases it.
    public func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        let wait = TimeIntervalValidation.wait(delay, as: .delay, api: "Queue.schedule(after:_:)", argument: "delay")
        guard case .seconds(let seconds) = wait else { return EmptyDisposable }
        return self.scheduleOnce(action) { timer in
            timer.schedule(deadline: DispatchTime.now() + seconds)
        }
    }
}

extension Queue {
    /// Runs `action` once on the queue when a dispatch timer source, given its deadline by `arm`, fires.
    ///
    /// The handler holds the source until it fires or is cancelled, so the caller need not keep the
    /// disposable; disposing cancels the source and releases the action.
    @usableFromInline func scheduleOnce(_ action: @escaping @Sendable () -> Void, arm: (DispatchSourceTimer) -> Void) -> Disposable {
        if TimelineExecutor.refusesDeparture("a timer on the Queue \(self.queue.label)") { return EmptyDisposable }
        let pending = LockedState<(@Sendable () -> Void)?>(action)
        let box = DispatchSourceTimerBox(DispatchSource.makeTimerSource(queue: self.queue))
        box.timer.setEventHandler(
            handler: self.marked {
                box.timer.cancel()
                pending.take()?()
            })
        arm(box.timer)
        box.timer.resume()
        return ActionDisposable {
            let action = pending.take()
            box.timer.cancel()
            // The action is released here, after unlocking.
            withExtendedLifetime(action) {}
        }
    }
}

extension LockedState {
    /// Takes the value out, leaving nil.
    func take<Wrapped>() -> Wrapped? where State == Wrapped? {
        return self.withLock { state in
            let value = state
            state = nil
            return value
        }
    }
}

// MARK: - Duration forms
//
// Every API of the core that takes a number of seconds as `Double` also takes a `Duration`, the
// form to prefer in new code, since the async code around a signal measures time in
// `Duration` (`Task.sleep(for:)`, clocks). The `Double` forms stay for code written against the original
// SwiftSignalKit. Each `Duration` form converts to seconds and calls its `Double` form, so the two share
// every rule (zero, negative and huge waits). A `Duration` cannot be NaN or infinite, so its one refusal
// is a negative duration where a length cannot be negative (a period, a retry's step or cap): the
// `Duration` form refuses it itself (`secondsForSignals(notNegative:argument:)`), with a message that
// shows the duration as the caller wrote it, not the `Double` form's seconds and its `.infinity` hint.
// The longest wait is still 100 years.
//
// Labels: where Combine has the operator, the `Duration` form takes Combine's label (`delay(for:)`,
// `debounce(for:)`, `throttle(for:)`, an unlabelled `timeout`); elsewhere it keeps the `Double` form's.
//
// Each `Duration` form is in the file of its `Double` form.

extension Duration {
    /// The duration as the seconds the `Double` forms take.
    @usableFromInline package var secondsForSignals: Double {
        let (seconds, attoseconds) = self.components
        // Divided, not multiplied by 1e-18: division rounds once, so 300 ms is exactly the `Double` 0.3.
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The seconds of a `Duration` form's argument that must not be negative; a negative one stops the
    /// program with a message naming the API, the argument and the duration.
    ///
    /// - Parameters:
    ///   - api: The `Duration` form, e.g. `"interval(_:scheduler:)"`.
    ///   - argument: What the duration is, for the message, e.g. `"period"`.
    /// - Returns: The seconds.
    package func secondsForSignals(notNegative api: String, argument: String) -> Double {
        if self < .zero {
            misuse("\(api): \(argument) must not be negative, got \(self)")
        }
        return self.secondsForSignals
    }
}

extension SignalScheduler {
    /// Runs `action` as ``schedule(_:)`` does: on a scheduler whose time is real, the end of an instant
    /// is the next moment.
    ///
    /// - Parameter action: The work.
    public func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void) {
        self.schedule(action)
    }

    /// Runs `action` after `delay`, unless the returned disposable is disposed first: the `Duration`
    /// form of `schedule(after:_:)`, for every scheduler.
    ///
    /// - Parameters:
    ///   - delay: How long to wait; zero or negative runs the action as soon as possible.
    ///   - action: The work.
    /// - Returns: A disposable that cancels the action if it has not started.
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Disposable {
        return self.schedule(after: delay.secondsForSignals, action)
    }
}
