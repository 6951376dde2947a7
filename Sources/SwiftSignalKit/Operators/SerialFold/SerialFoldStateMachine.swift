/// An event a ``SerialFoldStorage`` received from its source.
enum SerialFoldInput<T, E> {
    case value(T)
    case error(E)
    case completion
}

extension SerialFoldInput: Sendable where T: Sendable, E: Sendable {}

/// The state of a serialising fold (``scan(_:_:)``, ``buffer(count:)``, ``distinct(by:)``): the source's
/// events are handled one at a time, in arrival order, by whichever thread holds the *drainer's role*,
/// outside the lock, because handling one runs user code (the fold, a key's `hash(into:)` and `==`).
///
/// The fold's state (the accumulator, the buffer, the set of keys) is owned by the drainer while it
/// works and parked here between drains, so it is never read or written under the lock, only moved in
/// and out. Events that arrive while a drainer works are queued, and the drainer takes them in order.
///
/// Lifecycle: `active` until a terminal input arrives; after that, later inputs are dropped and the
/// drainer handles what is queued, the terminal input last, then stops. Disposal drops the queue and
/// the parked state (both returned, to be released after unlocking) and tells a working drainer to stop.
struct SerialFoldStateMachine<State, T, E> {
    /// What the thread that delivered an input does next.
    enum ReceivedAction {
        /// It holds the drainer's role now: handle `input` with the state moved into `owned`.
        case process(SerialFoldInput<T, E>)
        /// Nothing: the input was queued for the current drainer, or dropped after the end.
        case none
    }

    /// What a thread handed the drainer's role does.
    enum ResumeAction {
        /// Handle `input` with the state moved into `owned`.
        case process(SerialFoldInput<T, E>)
        /// The subscription was disposed meanwhile: nothing to do.
        case stop
    }

    /// What the drainer does after handling an input.
    enum StepAction {
        /// Handle this queued input next (with the state it still owns).
        case process(SerialFoldInput<T, E>)
        /// More inputs are waiting but the drainer used its allowance: its state was parked, and it
        /// must hand the role to another thread, which calls ``resume(owned:)``.
        case handOff
        /// The queue is empty: the state was parked and the role given up.
        case idle
        /// The subscription ended (terminal input handled, or disposed): release the state it owns.
        case stop
    }

    private var inputs = FIFO<SerialFoldInput<T, E>>()
    /// The fold's state between drains; nil while a drainer owns it, and after the end.
    private var parked: State?
    private var isDraining = false
    /// A terminal input has been received (it is queued or being handled): later inputs are dropped.
    private var inputClosed = false
    private var isDisposed = false

    init(initialState: State) {
        self.parked = initialState
    }

    /// The source sent `input`. When the caller becomes the drainer, the state is moved into `owned`.
    mutating func received(_ input: SerialFoldInput<T, E>, owned: inout State?) -> ReceivedAction {
        guard !self.inputClosed else { return .none }
        switch input {
        case .value:
            break
        case .error, .completion:
            self.inputClosed = true
        }
        if self.isDraining {
            self.inputs.append(input)
            return .none
        }
        self.isDraining = true
        owned = self.parked
        self.parked = nil
        return .process(input)
    }

    /// The drainer handled an input. When it goes idle or hands off, its state is moved out of `owned`
    /// into the machine; when it stops, `owned` keeps the state for the drainer to release unlocked.
    ///
    /// - Parameter mayContinue: Whether the drainer still has allowance for another input.
    mutating func stepFinished(owned: inout State?, mayContinue: Bool) -> StepAction {
        if self.isDisposed {
            self.isDraining = false
            return .stop
        }
        if self.inputs.isEmpty {
            self.isDraining = false
            if self.inputClosed {
                // The input just handled was the terminal one.
                return .stop
            }
            self.parked = owned
            owned = nil
            return .idle
        }
        guard mayContinue else {
            self.parked = owned
            owned = nil
            return .handOff
        }
        return .process(self.inputs.popFirst()!)
    }

    /// A drainer that was handed the role (after ``StepAction/handOff``) starts: the parked state is
    /// moved into `owned`.
    mutating func resume(owned: inout State?) -> ResumeAction {
        precondition(self.isDraining, "SerialFoldStateMachine resumed without a handed-off drain")
        if self.isDisposed {
            // `disposed()` took the parked state.
            self.isDraining = false
            return .stop
        }
        owned = self.parked
        self.parked = nil
        guard let input = self.inputs.popFirst() else {
            preconditionFailure("SerialFoldStateMachine handed off with nothing queued")
        }
        return .process(input)
    }

    /// The subscription was disposed: returns the parked state and the queued inputs, to be released
    /// after unlocking. A drainer at work stops after the input it is handling.
    mutating func disposed() -> (State?, FIFO<SerialFoldInput<T, E>>) {
        self.isDisposed = true
        self.inputClosed = true
        let parked = self.parked
        self.parked = nil
        return (parked, self.inputs.removeAll())
    }
}

extension SerialFoldStateMachine: Sendable where State: Sendable, T: Sendable, E: Sendable {}

// For the state machine's unit tests (synthesised conformances must be declared in this file).
extension SerialFoldInput: Equatable where T: Equatable, E: Equatable {}
extension SerialFoldStateMachine.ReceivedAction: Equatable where T: Equatable, E: Equatable {}
extension SerialFoldStateMachine.ResumeAction: Equatable where T: Equatable, E: Equatable {}
extension SerialFoldStateMachine.StepAction: Equatable where T: Equatable, E: Equatable {}
