/// Errors the async bridges throw on their own behalf (the signal's own errors are thrown as they are).
public enum SignalError: Error, Sendable, Equatable {
    /// The signal completed without sending a value, so `Signal.get()` has nothing to
    /// return.
    case completedWithoutValue
}
