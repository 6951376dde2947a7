/// The state of ``switchToLatest(_:)``: which inner signal is current and whether the outer one ended.
///
/// Inner signals are numbered; events from any inner signal but the current one are ignored. The result
/// completes only when the outer signal has completed and the *current* inner signal has completed, so a
/// replaced inner signal that completes late cannot end the result early.
@usableFromInline struct SwitchToLatestStateMachine: Sendable {
    @usableFromInline enum InnerStartedAction {
        /// Keep the new inner subscription and dispose the one it replaced, if any.
        case keep(disposePrevious: Disposable?)
        /// The inner signal was already replaced or the result ended: dispose the new subscription.
        case disposeNew
    }

    @usableFromInline init() {}

    private var outerCompleted = false
    private var currentInner: UInt64?
    private var lastInner: UInt64 = 0
    private var innerDisposable: Disposable?
    private(set) var isTerminated = false

    /// The outer signal sent a new inner signal: returns its number and the subscription to dispose.
    @usableFromInline
    mutating func outerSentInner() -> (id: UInt64, disposePrevious: Disposable?)? {
        guard !self.isTerminated else { return nil }
        self.lastInner += 1
        self.currentInner = self.lastInner
        let previous = self.innerDisposable
        self.innerDisposable = nil
        return (self.lastInner, previous)
    }

    /// The subscription to inner signal `id` has been made.
    @usableFromInline
    mutating func innerStarted(_ id: UInt64, disposable: Disposable) -> InnerStartedAction {
        guard !self.isTerminated, self.lastInner == id else { return .disposeNew }
        let previous = self.innerDisposable
        self.innerDisposable = disposable
        return .keep(disposePrevious: previous)
    }

    /// Whether events of inner signal `id` are passed on.
    @usableFromInline func isCurrent(_ id: UInt64) -> Bool {
        return !self.isTerminated && self.currentInner == id
    }

    /// Inner signal `id` completed: returns true when the result completes now.
    @usableFromInline
    mutating func innerCompleted(_ id: UInt64) -> Bool {
        guard !self.isTerminated, self.currentInner == id else { return false }
        self.currentInner = nil
        if self.outerCompleted {
            self.isTerminated = true
            return true
        }
        return false
    }

    /// The outer signal completed: returns true when the result completes now.
    @usableFromInline
    mutating func outerCompletedEvent() -> Bool {
        guard !self.isTerminated else { return false }
        self.outerCompleted = true
        if self.currentInner == nil {
            self.isTerminated = true
            return true
        }
        return false
    }

    /// An error ended the result, or it was disposed: returns the inner subscription to dispose.
    @usableFromInline
    mutating func terminate() -> Disposable? {
        self.isTerminated = true
        let inner = self.innerDisposable
        self.innerDisposable = nil
        return inner
    }
}
