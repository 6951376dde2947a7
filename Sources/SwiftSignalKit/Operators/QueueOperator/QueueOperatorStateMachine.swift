/// The state of ``queue(_:)`` and ``throttled(_:)``: inner signals run one at a time, in order.
///
/// An inner signal that completes while it is still being started (synchronously) does not start the
/// next one from inside its own `start`; the starter loop picks the next one up (``StartTrampoline``),
/// so a long run of synchronous inner signals keeps a constant stack depth.
///
/// The state is an enum whose cases carry their data. Impossible transitions trap; events after the
/// end are a benign race (an inner signal completing as the result is disposed) and do nothing. Each
/// event sets `state` to `.terminated` while it changes the running state it took out, so that the
/// array of waiting signals is not copied.
@usableFromInline struct QueueOperatorStateMachine<T, E>: Sendable {
    @usableFromInline enum Mode: Sendable {
        /// Keep every waiting inner signal (``queue(_:)``).
        case queue
        /// Keep only the latest waiting inner signal (``throttled(_:)``).
        case throttle
    }

    /// What the operator does after unlocking: every event's answer.
    @usableFromInline enum Action: Sendable {
        /// Start this inner signal: the caller becomes (or stays) the starter.
        case start(Signal<T, E>)
        /// Complete the result.
        case complete
        /// Release these inner signals, dropped (replaced by a newer one under `throttled`, or waiting
        /// when the result ended), outside the lock.
        case release([Signal<T, E>?])
        /// Nothing to do now.
        case none
    }

    /// What the operator holds while an inner signal runs.
    @usableFromInline struct Running: Sendable {
        /// Inner signals sent while another ran, in order. Each is moved out as it starts, so it is
        /// released by the thread that starts it.
        @usableFromInline var waiting = ValueRing<Signal<T, E>>()
        /// Whether a thread is starting an inner signal, and whether the one it starts completed
        /// meanwhile (then that thread, not the completion, starts the next).
        @usableFromInline var trampoline = StartTrampoline()
        /// The outer signal completed: the result completes after the last inner signal.
        @usableFromInline var outerCompleted = false

        @inlinable init() {}
    }

    @usableFromInline enum State: Sendable {
        /// No inner signal runs, and the outer signal has not completed.
        case idle
        /// An inner signal runs or is being started.
        case running(Running)
        /// Completed, failed or disposed: inner signals sent now are dropped.
        case terminated
    }

    @usableFromInline let mode: Mode
    @usableFromInline private(set) var state = State.idle

    @inlinable init(mode: Mode) {
        self.mode = mode
    }

    /// The outer signal sent an inner signal: ``Action/start(_:)`` when it starts now (the caller
    /// becomes the starter); under `throttled`, ``Action/release(_:)`` with the waiting signal it
    /// replaces.
    @inlinable mutating func outerSent(_ signal: Signal<T, E>) -> Action {
        switch self.state {
        case .terminated:
            return .none
        case .idle:
            var running = Running()
            running.trampoline.begin()
            self.state = .running(running)
            return .start(signal)
        case .running(var running):
            self.state = .terminated
            var dropped: [Signal<T, E>?] = []
            if self.mode == .throttle {
                dropped = running.waiting.removeAll()
            }
            running.waiting.append(signal)
            self.state = .running(running)
            return dropped.isEmpty ? .none : .release(dropped)
        }
    }

    /// The starter returned from starting an inner signal.
    @inlinable mutating func startReturned() -> Action {
        switch self.state {
        case .terminated:
            return .none
        case .idle:
            preconditionFailure("queue: an inner signal's start returned while none was running")
        case .running(var running):
            self.state = .terminated
            guard running.trampoline.startReturned() else {
                self.state = .running(running)
                return .none
            }
            // It completed while being started: this thread starts the next one, or ends.
            return self.advance(&running)
        }
    }

    /// The running inner signal completed.
    @inlinable mutating func innerCompleted() -> Action {
        switch self.state {
        case .terminated:
            return .none
        case .idle:
            preconditionFailure("queue: an inner signal completed while none was running")
        case .running(var running):
            self.state = .terminated
            if running.trampoline.isStarting {
                // The starter picks the next one up when its `start` returns.
                running.trampoline.askAgain()
                self.state = .running(running)
                return .none
            }
            running.trampoline.begin()
            return self.advance(&running)
        }
    }

    /// The outer signal completed: ``Action/complete`` when the result completes now.
    @inlinable mutating func outerCompletedEvent() -> Action {
        switch self.state {
        case .terminated:
            return .none
        case .idle:
            self.state = .terminated
            return .complete
        case .running(var running):
            self.state = .terminated
            running.outerCompleted = true
            self.state = .running(running)
            return .none
        }
    }

    /// An error ended the result, or it was disposed: ``Action/release(_:)`` with the waiting signals.
    @inlinable mutating func terminate() -> Action {
        guard case .running(var running) = self.state else {
            self.state = .terminated
            return .none
        }
        self.state = .terminated
        return .release(running.waiting.removeAll())
    }

    /// The calling thread is the starter and nothing runs: starts the next waiting signal, or leaves
    /// `running` (completing the result if the outer signal has completed).
    ///
    /// `running` is `inout`, taken out of `state` by the caller: a copy would share the buffer of waiting
    /// signals, and the first change would copy it whole (quadratic over a long queue).
    @inlinable mutating func advance(_ running: inout Running) -> Action {
        if let next = running.waiting.popFirst() {
            self.state = .running(running)
            return .start(next)
        }
        if running.outerCompleted {
            self.state = .terminated
            return .complete
        }
        self.state = .idle
        return .none
    }
}
