/// The state of ``debounce(_:scheduler:)`` and ``throttle(_:scheduler:)``: the latest value waiting for
/// its timer, which timer is current, and the events on their way to the subscriber (in a
/// ``SerialDelivery``).
///
/// Timers are numbered; a timer that fires after it was replaced, or after the end, finds a different
/// number and does nothing. Values that leave the state unsent (replaced, or dropped by an error or a
/// disposal) are returned so that they are released after unlocking.
@usableFromInline struct DebounceThrottleStateMachine<T: Sendable, E: Sendable>: Sendable {
    @usableFromInline enum Mode: Sendable {
        /// Each value restarts the timer: a value is sent once the source has been quiet for the interval.
        case debounce
        /// The first value opens a window; when the window closes, its latest value is sent.
        case throttle
    }

    @usableFromInline enum ValueAction {
        /// Nothing to schedule; release `dropped` after unlocking.
        case none(dropped: T?)
        /// Schedule timer `generation`, dispose `cancel`, release `dropped`.
        case arm(generation: UInt64, cancel: Disposable?, dropped: T?)
    }

    @usableFromInline struct EndAction {
        /// The timer to dispose.
        @usableFromInline var cancel: Disposable?
        /// A value dropped by an error or a disposal, to release after unlocking.
        @usableFromInline var dropped: T?
        /// Whether the caller must deliver the queued events.
        @usableFromInline var deliver: Bool
        /// Events a disposal dropped, to release after unlocking.
        @usableFromInline var undelivered = ValueRing<SerialDelivery<SignalEvent<T, E>>.Entry>()

        @inlinable init(
            cancel: Disposable?, dropped: T?, deliver: Bool,
            undelivered: ValueRing<SerialDelivery<SignalEvent<T, E>>.Entry> = ValueRing()
        ) {
            self.cancel = cancel
            self.dropped = dropped
            self.deliver = deliver
            self.undelivered = undelivered
        }
    }

    /// The phase, carrying what it needs.
    @usableFromInline enum Phase: Sendable {
        /// No value waits.
        case idle
        /// `value` waits for timer `generation` (debounce: the quiet period; throttle: the window),
        /// which is stored once scheduled.
        case waiting(value: T, generation: UInt64, timer: Disposable?)
        /// The source ended or the subscription was disposed.
        case finished
    }

    @usableFromInline let mode: Mode
    @usableFromInline var phase = Phase.idle
    /// The number of the latest timer; a timer that fires with another number does nothing.
    @usableFromInline var generation: UInt64 = 0
    @usableFromInline var delivery = SerialDelivery<SignalEvent<T, E>>()

    @inlinable init(mode: Mode) {
        self.mode = mode
    }

    @inlinable mutating func valueArrived(_ value: T) -> ValueAction {
        switch self.phase {
        case .finished:
            return .none(dropped: value)
        case .idle:
            self.generation += 1
            self.phase = .waiting(value: value, generation: self.generation, timer: nil)
            return .arm(generation: self.generation, cancel: nil, dropped: nil)
        case .waiting(let replaced, let generation, let timer):
            switch self.mode {
            case .debounce:
                // The quiet period starts again.
                self.generation += 1
                self.phase = .waiting(value: value, generation: self.generation, timer: nil)
                return .arm(generation: self.generation, cancel: timer, dropped: replaced)
            case .throttle:
                // The window stays; its latest value changes.
                self.phase = .waiting(value: value, generation: generation, timer: timer)
                return .none(dropped: replaced)
            }
        }
    }

    /// Timer `generation` has been scheduled: returns it when it is no longer wanted, to be disposed.
    @inlinable mutating func timerScheduled(_ generation: UInt64, _ timer: Disposable) -> Disposable? {
        guard case .waiting(let value, let current, nil) = self.phase, current == generation else { return timer }
        self.phase = .waiting(value: value, generation: generation, timer: timer)
        return nil
    }

    /// Timer `generation` fired: returns whether the caller must deliver the queued events.
    @inlinable mutating func timerFired(_ generation: UInt64) -> Bool {
        guard case .waiting(let value, let current, _) = self.phase, current == generation else { return false }
        self.phase = .idle
        return self.delivery.post(.Next(value))
    }

    /// The source completed: the waiting value, if any, is sent at once, then the completion.
    @inlinable mutating func sourceCompleted() -> EndAction {
        switch self.phase {
        case .finished:
            return EndAction(cancel: nil, dropped: nil, deliver: false)
        case .idle:
            self.phase = .finished
            return EndAction(cancel: nil, dropped: nil, deliver: self.delivery.post(.Completion))
        case .waiting(let value, _, let timer):
            self.phase = .finished
            let deliver = self.delivery.post(.Next(value))
            return EndAction(cancel: timer, dropped: nil, deliver: self.delivery.post(.Completion) || deliver)
        }
    }

    /// The source failed: the waiting value is dropped, the error is sent.
    @inlinable mutating func sourceFailed(_ error: E) -> EndAction {
        switch self.phase {
        case .finished:
            return EndAction(cancel: nil, dropped: nil, deliver: false)
        case .idle:
            self.phase = .finished
            return EndAction(cancel: nil, dropped: nil, deliver: self.delivery.post(.Error(error)))
        case .waiting(let value, _, let timer):
            self.phase = .finished
            return EndAction(cancel: timer, dropped: value, deliver: self.delivery.post(.Error(error)))
        }
    }

    /// The subscription was disposed.
    @inlinable mutating func disposed() -> EndAction {
        var action = EndAction(cancel: nil, dropped: nil, deliver: false, undelivered: self.delivery.close())
        if case .waiting(let value, _, let timer) = self.phase {
            action.cancel = timer
            action.dropped = value
        }
        self.phase = .finished
        return action
    }
}
