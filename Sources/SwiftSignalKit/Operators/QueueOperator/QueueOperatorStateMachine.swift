/// The state of ``queue(_:)`` and ``throttled(_:)``: inner signals run one at a time, in order.
///
/// An inner signal that completes while it is still being started (synchronously) does not start the
/// next one from inside its own `start`; the starter loop picks the next one up, so a long run of
/// synchronous inner signals keeps a constant stack depth.
@usableFromInline struct QueueOperatorStateMachine<T, E>: Sendable {
    @usableFromInline enum Mode: Sendable {
        /// Keep every waiting inner signal (``queue(_:)``).
        case queue
        /// Keep only the latest waiting inner signal (``throttled(_:)``).
        case throttle
    }

    @usableFromInline enum AfterInner: Sendable {
        /// Start this inner signal next.
        case start(Signal<T, E>)
        /// Complete the result.
        case complete
        /// Nothing to do now.
        case none
    }

    @usableFromInline let mode: Mode
    /// Started entries are set to nil, so the signal is released by the thread that starts it.
    @usableFromInline var waiting: [Signal<T, E>?] = []
    @usableFromInline var waitingHead = 0
    /// An inner signal is running or being started.
    @usableFromInline var isExecuting = false
    /// A starter loop is on some stack and will look at `completedWhileStarting` when `start` returns.
    @usableFromInline var isStarting = false
    @usableFromInline var completedWhileStarting = false
    @usableFromInline var outerCompleted = false
    @usableFromInline var isTerminated = false

    @inlinable init(mode: Mode) {
        self.mode = mode
    }

    /// The outer signal sent an inner signal: returns it when it should start now, and the waiting
    /// signals it replaced (throttle mode), to be released outside the lock.
    @inlinable mutating func outerSent(_ signal: Signal<T, E>) -> (start: Signal<T, E>?, dropped: [Signal<T, E>?]) {
        guard !self.isTerminated else { return (nil, []) }
        if self.isExecuting {
            var dropped: [Signal<T, E>?] = []
            if self.mode == .throttle {
                dropped = self.waiting
                self.waiting = []
                self.waitingHead = 0
            }
            self.waiting.append(signal)
            return (nil, dropped)
        }
        self.isExecuting = true
        self.isStarting = true
        return (signal, [])
    }

    /// The starter returned from starting an inner signal.
    @inlinable mutating func startReturned() -> AfterInner {
        guard self.completedWhileStarting else {
            self.isStarting = false
            return .none
        }
        self.completedWhileStarting = false
        return self.advance()
    }

    /// The running inner signal completed.
    @inlinable mutating func innerCompleted() -> AfterInner {
        if self.isStarting {
            self.completedWhileStarting = true
            return .none
        }
        let next = self.advance()
        if case .start = next {
            self.isStarting = true
        }
        return next
    }

    /// The outer signal completed: returns true when the result completes now.
    @inlinable mutating func outerCompletedEvent() -> Bool {
        guard !self.isTerminated else { return false }
        self.outerCompleted = true
        if !self.isExecuting {
            self.isTerminated = true
            return true
        }
        return false
    }

    /// An error ended the result, or it was disposed: drops waiting signals (returned, to be released
    /// outside the lock).
    @inlinable mutating func terminate() -> [Signal<T, E>?] {
        self.isTerminated = true
        let dropped = self.waiting
        self.waiting = []
        self.waitingHead = 0
        return dropped
    }

    @inlinable mutating func advance() -> AfterInner {
        guard !self.isTerminated else {
            self.isExecuting = false
            self.isStarting = false
            return .none
        }
        if self.waitingHead < self.waiting.count {
            let next = self.waiting[self.waitingHead]!
            self.waiting[self.waitingHead] = nil
            self.waitingHead += 1
            if self.waitingHead == self.waiting.count {
                self.waiting.removeAll(keepingCapacity: true)
                self.waitingHead = 0
            }
            return .start(next)
        }
        self.isExecuting = false
        self.isStarting = false
        if self.outerCompleted {
            self.isTerminated = true
            return .complete
        }
        return .none
    }
}
