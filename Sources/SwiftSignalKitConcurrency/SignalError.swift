import Foundation

/// Errors the async bridges throw on their own behalf (the signal's own errors are thrown as they are).
public enum SignalError: Error, Sendable, Equatable {
    /// The signal completed without sending a value, so `Signal.get()` has nothing to
    /// return.
    case completedWithoutValue
}

extension SignalError: CustomStringConvertible, LocalizedError {
    /// What went wrong, naming the call, for logs and test failures.
    public var description: String {
        switch self {
        case .completedWithoutValue:
            return "SignalError.completedWithoutValue: the signal completed without sending a value, so get() had "
                + "nothing to return (first() returns nil instead)"
        }
    }

    /// The same as ``description``, so `localizedDescription` says what went wrong.
    public var errorDescription: String? {
        return self.description
    }
}
