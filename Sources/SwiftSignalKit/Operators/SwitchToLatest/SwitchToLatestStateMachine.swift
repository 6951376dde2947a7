/// The state of ``switchToLatest(_:)``: which inner signal is current and whether the outer one ended.
///
/// Inner signals are numbered; events from any inner signal but the current one are ignored. The result
/// completes only when the outer signal has completed and the *current* inner signal has completed, so a
/// replaced inner signal that completes late cannot end the result early.
///
/// The state is an enum whose cases carry their data; events after the end are a benign race (an inner
/// signal's event crossing a disposal) and do nothing.
@usableFromInline struct SwitchToLatestStateMachine: Sendable {
    @usableFromInline enum InnerStartedAction {
        /// Keep the new inner subscription and dispose the one it replaced, if any.
        case keep(disposePrevious: Disposable?)
        /// The inner signal was already replaced or the result ended: dispose the new subscription.
        case disposeNew
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
        /// ``terminate()`` to hand back, so that it is not released under the lock.
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

    /// The outer signal sent a new inner signal: returns its number and the subscription to dispose.
    @usableFromInline
    mutating func outerSentInner() -> (id: UInt64, disposePrevious: Disposable?)? {
        return self.whileActive { active in
            active.lastInner += 1
            active.current = active.lastInner
            let previous = active.subscription
            active.subscription = nil
            return (active.lastInner, previous)
        }
    }

    /// The subscription to inner signal `id` has been made.
    @usableFromInline
    mutating func innerStarted(_ id: UInt64, disposable: Disposable) -> InnerStartedAction {
        return self.whileActive { active -> InnerStartedAction in
            guard active.lastInner == id else { return .disposeNew }
            let previous = active.subscription
            active.subscription = disposable
            return .keep(disposePrevious: previous)
        } ?? .disposeNew
    }

    /// Whether events of inner signal `id` are passed on.
    @usableFromInline func isCurrent(_ id: UInt64) -> Bool {
        guard case .active(let active) = self.state else { return false }
        return active.current == id
    }

    /// Inner signal `id` completed: returns true when the result completes now.
    @usableFromInline
    mutating func innerCompleted(_ id: UInt64) -> Bool {
        guard case .active(var active) = self.state, active.current == id else { return false }
        active.current = nil
        self.state = active.outerCompleted ? .terminated(leftover: active.subscription) : .active(active)
        return active.outerCompleted
    }

    /// The outer signal completed: returns true when the result completes now.
    @usableFromInline
    mutating func outerCompletedEvent() -> Bool {
        guard case .active(var active) = self.state else { return false }
        active.outerCompleted = true
        let completes = active.current == nil
        self.state = completes ? .terminated(leftover: active.subscription) : .active(active)
        return completes
    }

    /// An error ended the result, or it was disposed: returns the inner subscription to dispose.
    @usableFromInline
    mutating func terminate() -> Disposable? {
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
