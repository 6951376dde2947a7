/// The state of ``switchToLatest(_:)``: which inner signal is current and whether the outer one ended.
///
/// Inner signals are numbered; events from any inner signal but the current one are ignored. The result
/// completes only when the outer signal has completed and the *current* inner signal has completed, so a
/// replaced inner signal that completes late cannot end the result early.
///
/// The state is an enum whose cases carry their data; events after the end are a benign race (an inner
/// signal's event crossing a disposal) and do nothing.
@usableFromInline struct SwitchToLatestStateMachine: Sendable {
    /// What the operator does after unlocking: every event's answer (``isCurrent(_:)``, asked per value,
    /// is a query).
    @usableFromInline enum Action: Sendable {
        /// Nothing: an event of a replaced inner signal, or one after the end.
        case none
        /// Subscribe to inner signal `id`. The subscription it replaces stays until then:
        /// ``innerStarted(_:disposable:)`` hands it back to dispose.
        case subscribe(id: UInt64)
        /// Dispose a subscription: the one a new inner subscription replaced, one made too late, or the
        /// last one at the end.
        case dispose(Disposable?)
        /// The result completes now.
        case complete
        /// The result fails now with the error at hand; then dispose the last inner subscription.
        case fail(disposing: Disposable?)
    }

    /// What a running `switchToLatest` holds.
    @usableFromInline struct Active: Sendable {
        /// The number of the inner signal whose events pass on; nil when none runs.
        var current: UInt64?
        /// The number given to the last inner signal.
        var lastInner: UInt64 = 0
        /// The current inner signal's subscription, once made.
        var subscription: Disposable?
        var outerCompleted = false
    }

    @usableFromInline enum State: Sendable {
        case active(Active)
        /// Completed, failed or disposed. `leftover` is the last inner subscription, kept for
        /// ``disposed()`` to hand back, so that it is not released under the lock.
        case terminated(leftover: Disposable?)
    }

    private var state = State.active(Active())

    @usableFromInline init() {}

    var isTerminated: Bool {
        if case .terminated = self.state { return true }
        return false
    }

    /// Runs `body` on the active state; nil once terminated. The state is taken out while `body` runs.
    private mutating func whileActive<Result>(_ body: (inout Active) -> Result) -> Result? {
        guard case .active(var active) = self.state else { return nil }
        self.state = .terminated(leftover: nil)
        defer { self.state = .active(active) }
        return body(&active)
    }

    /// The outer signal sent a new inner signal: ``Action/subscribe(id:)``. The previous inner signal's
    /// events are ignored from now on, but its subscription is disposed only once the new one is made
    /// (as in the original library): an inner signal that shares its source with the previous one (a
    /// `share()`d signal, say) then keeps that source connected across the switch.
    @usableFromInline
    mutating func outerSentInner() -> Action {
        return self.whileActive { active in
            active.lastInner += 1
            active.current = active.lastInner
            return .subscribe(id: active.lastInner)
        } ?? .none
    }

    /// The subscription to inner signal `id` has been made: kept if `id` is still the latest (disposing
    /// the one it replaces, which was kept until now), else disposed.
    @usableFromInline
    mutating func innerStarted(_ id: UInt64, disposable: Disposable) -> Action {
        return self.whileActive { active -> Action in
            guard active.lastInner == id else { return .dispose(disposable) }
            let previous = active.subscription
            active.subscription = disposable
            return .dispose(previous)
        } ?? .dispose(disposable)
    }

    /// Whether events of inner signal `id` are passed on.
    @usableFromInline func isCurrent(_ id: UInt64) -> Bool {
        guard case .active(let active) = self.state else { return false }
        return active.current == id
    }

    /// Inner signal `id` completed: ``Action/complete`` when the result completes now.
    @usableFromInline
    mutating func innerCompleted(_ id: UInt64) -> Action {
        guard case .active(var active) = self.state, active.current == id else { return .none }
        active.current = nil
        self.state = active.outerCompleted ? .terminated(leftover: active.subscription) : .active(active)
        return active.outerCompleted ? .complete : .none
    }

    /// The outer signal completed: ``Action/complete`` when the result completes now.
    @usableFromInline
    mutating func outerCompletedEvent() -> Action {
        guard case .active(var active) = self.state else { return .none }
        active.outerCompleted = true
        let completes = active.current == nil
        self.state = completes ? .terminated(leftover: active.subscription) : .active(active)
        return completes ? .complete : .none
    }

    /// Inner signal `id` failed: the result fails if `id` is the current one.
    @usableFromInline
    mutating func innerFailed(_ id: UInt64) -> Action {
        guard self.isCurrent(id) else { return .none }
        return .fail(disposing: self.takeSubscription())
    }

    /// The outer signal failed: the result fails (a subscriber that has already ended ignores it).
    @usableFromInline
    mutating func outerFailed() -> Action {
        return .fail(disposing: self.takeSubscription())
    }

    /// The result was disposed: dispose the inner subscription.
    @usableFromInline
    mutating func disposed() -> Action {
        return .dispose(self.takeSubscription())
    }

    /// Ends the state and returns the inner subscription (or the one left over at completion), once.
    private mutating func takeSubscription() -> Disposable? {
        switch self.state {
        case .active(let active):
            self.state = .terminated(leftover: nil)
            return active.subscription
        case .terminated(let leftover):
            self.state = .terminated(leftover: nil)
            return leftover
        }
    }
}
