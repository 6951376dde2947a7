// What the library's serialising operators queue: a signal's events as values (the public
// ``SignalEvent``), and how to send one.

extension Subscriber {
    /// Sends an event that an operator queued.
    @inlinable package func put(_ event: SignalEvent<T, E>) {
        switch event {
        case .Next(let value):
            self.putNext(value)
        case .Error(let error):
            self.putError(error)
        case .Completion:
            self.putCompletion()
        }
    }
}

extension SignalEvent {
    /// Whether the event ends the signal.
    @inlinable var isTerminal: Bool {
        switch self {
        case .Next:
            return false
        case .Error, .Completion:
            return true
        }
    }
}
