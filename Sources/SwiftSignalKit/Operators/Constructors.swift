/// A signal that sends `value` and completes; the error type is given explicitly.
///
/// ```swift
/// let answer = single(42, NoError.self)
/// ```
///
/// - Parameters:
///   - value: The value to send.
///   - errorType: The signal's error type.
/// - Returns: A synchronous single-value signal.
public func single<T: Sendable, E>(_ value: T, _ errorType: E.Type) -> Signal<T, E> {
    return Signal<T, E>.single(value)
}

/// A signal that fails at once with `error`; the value type is given explicitly.
///
/// - Parameters:
///   - valueType: The signal's value type.
///   - error: The error to send.
/// - Returns: A failing signal.
public func fail<T, E: Sendable>(_ valueType: T.Type, _ error: E) -> Signal<T, E> {
    return Signal<T, E>.fail(error)
}

/// A signal that completes at once; both types are given explicitly.
///
/// - Parameters:
///   - valueType: The signal's value type.
///   - error: The signal's error type.
/// - Returns: An empty signal.
public func complete<T, E>(_ valueType: T.Type, _ error: E.Type) -> Signal<T, E> {
    return Signal<T, E>.complete()
}

/// A signal that never sends anything; both types are given explicitly.
///
/// - Parameters:
///   - valueType: The signal's value type.
///   - error: The signal's error type.
/// - Returns: A silent signal.
public func never<T, E>(_ valueType: T.Type, _ error: E.Type) -> Signal<T, E> {
    return Signal<T, E>.never()
}
