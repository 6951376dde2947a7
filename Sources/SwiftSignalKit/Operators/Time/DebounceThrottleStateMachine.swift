/// The state of ``debounce(_:scheduler:)`` and ``throttle(_:scheduler:)``: the latest value waiting for
/// its timer, which timer is current, and the events on their way to the subscriber (in a
/// ``SerialDelivery``).
///
/// Timers are numbered; a timer that fires after it was replaced, or after the end, finds a different
/// number and does nothing. Values that leave the state unsent (replaced, or dropped by an error or a
/// disposal) are returned so that they are released after unlocking.
struct DebounceThrottleStateMachine<T: Sendable, E: Sendable>: Sendable {
    enum Mode: Sendable {
        /// Each value restarts the timer: a value is sent once the source has been quiet for the interval.
        case debounce
        /// The first value opens a window; when the window closes, its latest value is sent.
        case throttle
    }

    enum ValueAction {
        /// Nothing to schedule; release `dropped` after unlocking.
        case none(dropped: T?)
        /// Schedule timer `generation`, dispose `cancel`, release `dropped`.
        case arm(generation: UInt64, cancel: Disposable?, dropped: T?)
    }

    struct EndAction {
        /// The timer to dispose.
        var cancel: Disposable?
        /// A value dropped by an error or a disposal, to release after unlocking.
        var dropped: T?
        /// Whether the caller must deliver the queued events.
        var deliver: Bool
        /// Events a disposal dropped, to release after unlocking.
        var undelivered = ValueRing<SerialDelivery<SignalEvent<T, E>>.Entry>()
    }

    let mode: Mode
    private var pending: T?
    private var generation: UInt64 = 0
    private var timer: Disposable?
    /// Throttle only: a window is open (its timer is scheduled or about to be).
    private var windowIsOpen = false
    private var isFinished = false
    var delivery = SerialDelivery<SignalEvent<T, E>>()

    init(mode: Mode) {
        self.mode = mode
    }

    mutating func valueArrived(_ value: T) -> ValueAction {
        guard !self.isFinished else { return .none(dropped: value) }
        let dropped = self.pending
        self.pending = value
        switch self.mode {
        case .debounce:
            self.generation += 1
            let previous = self.timer
            self.timer = nil
            return .arm(generation: self.generation, cancel: previous, dropped: dropped)
        case .throttle:
            if self.windowIsOpen {
                return .none(dropped: dropped)
            }
            self.windowIsOpen = true
            self.generation += 1
            return .arm(generation: self.generation, cancel: nil, dropped: dropped)
        }
    }

    /// Timer `generation` has been scheduled: returns it when it is no longer wanted, to be disposed.
    mutating func timerScheduled(_ generation: UInt64, _ timer: Disposable) -> Disposable? {
        guard !self.isFinished, generation == self.generation else { return timer }
        self.timer = timer
        return nil
    }

    /// Timer `generation` fired: returns whether the caller must deliver the queued events.
    mutating func timerFired(_ generation: UInt64) -> Bool {
        guard !self.isFinished, generation == self.generation else { return false }
        self.timer = nil
        self.windowIsOpen = false
        guard let value = self.pending else { return false }
        self.pending = nil
        return self.delivery.post(.Next(value))
    }

    /// The source completed: the waiting value, if any, is sent at once, then the completion.
    mutating func sourceCompleted() -> EndAction {
        guard !self.isFinished else { return EndAction(cancel: nil, dropped: nil, deliver: false) }
        self.isFinished = true
        var deliver = false
        if let value = self.pending {
            self.pending = nil
            deliver = self.delivery.post(.Next(value))
        }
        deliver = self.delivery.post(.Completion) || deliver
        return EndAction(cancel: self.takeTimer(), dropped: nil, deliver: deliver)
    }

    /// The source failed: the waiting value is dropped, the error is sent.
    mutating func sourceFailed(_ error: E) -> EndAction {
        guard !self.isFinished else { return EndAction(cancel: nil, dropped: nil, deliver: false) }
        self.isFinished = true
        let dropped = self.pending
        self.pending = nil
        let deliver = self.delivery.post(.Error(error))
        return EndAction(cancel: self.takeTimer(), dropped: dropped, deliver: deliver)
    }

    /// The subscription was disposed.
    mutating func disposed() -> EndAction {
        self.isFinished = true
        let dropped = self.pending
        self.pending = nil
        return EndAction(cancel: self.takeTimer(), dropped: dropped, deliver: false, undelivered: self.delivery.close())
    }

    private mutating func takeTimer() -> Disposable? {
        let timer = self.timer
        self.timer = nil
        return timer
    }
}
