/// Starts subscriptions one at a time without growing the stack: the part of a state machine that
/// knows whether a thread is starting one, and whether another start was asked for meanwhile.
///
/// A source that ends synchronously, inside its own `start`, would otherwise make the operator start
/// the next one from inside that `start`, one stack frame deeper per source: 100,000 synchronous
/// sources would overflow the stack. With this value in its state, an operator starts a source only
/// from the loop of the thread that ``begin()`` made the starter; a start asked for while that loop is
/// inside `start` is recorded (``askAgain()``), and the loop runs it when `start` returns
/// (``startReturned()``). `retry`/`restart` (`RestartLoop`) and `queue`/`throttled` (`QueueRunner`) use
/// it. Lives in its owner's locked state; every event is a few loads and stores.
@usableFromInline struct StartTrampoline: Sendable, Equatable {
    @usableFromInline enum Phase: Sendable, Equatable {
        /// No thread is starting a subscription.
        case idle
        /// A thread is inside a subscription's `start`, and nothing asked for another start yet.
        case starting
        /// A thread is inside a subscription's `start`, and another start was asked for meanwhile: the
        /// starting thread runs it when `start` returns.
        case startingAndAskedAgain
    }

    @usableFromInline private(set) var phase = Phase.idle

    @inlinable init() {}

    /// Whether a thread is starting a subscription (a start asked for now waits for it).
    @inlinable var isStarting: Bool {
        return self.phase != .idle
    }

    /// The calling thread becomes the starter. Only when idle: an owner asks ``isStarting`` first (or
    /// uses ``ask()``).
    @inlinable mutating func begin() {
        precondition(self.phase == .idle, "StartTrampoline.begin() while a thread is starting")
        self.phase = .starting
    }

    /// Records a start asked for while a thread is starting: that thread runs it after its `start`.
    @inlinable mutating func askAgain() {
        precondition(self.phase != .idle, "StartTrampoline.askAgain() while no thread is starting")
        self.phase = .startingAndAskedAgain
    }

    /// A start was asked for: returns true when the caller becomes the starter and starts now, false
    /// when a starter is already on a stack and will start again after its `start` returns.
    @inlinable mutating func ask() -> Bool {
        if self.isStarting {
            self.askAgain()
            return false
        }
        self.begin()
        return true
    }

    /// The starter's `start` returned: returns true when another start was asked for meanwhile (the
    /// starter goes on, still the starter), false when none was (it is no longer the starter).
    @inlinable mutating func startReturned() -> Bool {
        switch self.phase {
        case .startingAndAskedAgain:
            self.phase = .starting
            return true
        case .starting:
            self.phase = .idle
            return false
        case .idle:
            preconditionFailure("StartTrampoline.startReturned() while no thread is starting")
        }
    }

    /// The starter stops being the starter without starting again (there is nothing left to start,
    /// or the owner has ended), whatever was asked for meanwhile.
    @inlinable mutating func end() {
        self.phase = .idle
    }
}
