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

    /// What the thread that ran an event does next, after unlocking.
    @usableFromInline enum Action: Sendable {
        /// Nothing: a timer that fired after it was replaced, or after the end.
        case none
        /// Release this value: replaced by a later one in a throttle window, or sent after the end.
        case release(T)
        /// Schedule timer `generation`, dispose `cancelling` (the timer it replaces) and release
        /// `releasing` (the value it replaces).
        case arm(generation: UInt64, cancelling: Disposable?, releasing: T?)
        /// Dispose this timer: it was scheduled after its wait ended.
        case cancel(Disposable)
        /// The thread is the deliverer: it delivers the queued events.
        case deliver
        /// Release this timer, which fired (its disposable may be a user scheduler's, whose `deinit` is
        /// user code), then deliver the queued events when `deliver` (the thread became the deliverer).
        case fired(releasing: Disposable, deliver: Bool)
        /// The result ended, or the subscription was disposed: dispose `timer`, release `dropped` and
        /// `undelivered`, then deliver the queued events when `deliver` (the thread became the
        /// deliverer).
        case end(
            timer: Disposable?, dropped: T?, undelivered: ValueRing<SerialDelivery<SignalEvent<T, E>>.Entry>, deliver: Bool)
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

    @inlinable mutating func valueArrived(_ value: T) -> Action {
        switch self.phase {
        case .finished:
            return .release(value)
        case .idle:
            self.generation += 1
            self.phase = .waiting(value: value, generation: self.generation, timer: nil)
            return .arm(generation: self.generation, cancelling: nil, releasing: nil)
        case .waiting(let replaced, let generation, let timer):
            switch self.mode {
            case .debounce:
                // The quiet period starts again.
                self.generation += 1
                self.phase = .waiting(value: value, generation: self.generation, timer: nil)
                return .arm(generation: self.generation, cancelling: timer, releasing: replaced)
            case .throttle:
                // The window stays; its latest value changes.
                self.phase = .waiting(value: value, generation: generation, timer: timer)
                return .release(replaced)
            }
        }
    }

    /// Timer `generation` has been scheduled: it is disposed at once when it was replaced, or the
    /// result ended, meanwhile (a benign race).
    @inlinable mutating func timerScheduled(_ generation: UInt64, _ timer: Disposable) -> Action {
        guard case .waiting(let value, let current, nil) = self.phase, current == generation else { return .cancel(timer) }
        self.phase = .waiting(value: value, generation: generation, timer: timer)
        return .none
    }

    /// Timer `generation` fired: its value is sent, unless the timer was replaced or the result ended
    /// meanwhile (a benign race). The timer's disposable, if it was stored, is handed back to be released
    /// after unlocking.
    @inlinable mutating func timerFired(_ generation: UInt64) -> Action {
        guard case .waiting(let value, let current, let timer) = self.phase, current == generation else { return .none }
        self.phase = .idle
        let deliver = self.delivery.post(.Next(value))
        if let timer { return .fired(releasing: timer, deliver: deliver) }
        return deliver ? .deliver : .none
    }

    /// The source completed: the waiting value, if any, is sent at once, then the completion.
    @inlinable mutating func sourceCompleted() -> Action {
        switch self.phase {
        case .finished:
            return .none
        case .idle:
            self.phase = .finished
            return self.delivery.post(.Completion) ? .deliver : .none
        case .waiting(let value, _, let timer):
            self.phase = .finished
            let deliver = self.delivery.post(.Next(value))
            return .end(
                timer: timer, dropped: nil, undelivered: ValueRing(), deliver: self.delivery.post(.Completion) || deliver)
        }
    }

    /// The source failed: the waiting value is dropped, the error is sent.
    @inlinable mutating func sourceFailed(_ error: E) -> Action {
        switch self.phase {
        case .finished:
            return .none
        case .idle:
            self.phase = .finished
            return self.delivery.post(.Error(error)) ? .deliver : .none
        case .waiting(let value, _, let timer):
            self.phase = .finished
            return .end(timer: timer, dropped: value, undelivered: ValueRing(), deliver: self.delivery.post(.Error(error)))
        }
    }

    /// The subscription was disposed: hands back the timer, the waiting value and the events not
    /// delivered.
    @inlinable mutating func disposed() -> Action {
        let undelivered = self.delivery.close()
        guard case .waiting(let value, _, let timer) = self.phase else {
            self.phase = .finished
            return .end(timer: nil, dropped: nil, undelivered: undelivered, deliver: false)
        }
        self.phase = .finished
        return .end(timer: timer, dropped: value, undelivered: undelivered, deliver: false)
    }
}
