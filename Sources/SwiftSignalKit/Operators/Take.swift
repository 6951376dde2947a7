/// Passes on the first `count` values, then completes and disposes the source.
///
/// - Parameter count: How many values to pass; with 0 the result completes at once without starting the
///   source.
/// - Returns: An operator for `|>`.
public func take<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    precondition(count >= 0, "take(_:) needs a count of at least 0, got \(count)")
    return { signal in
        return Signal { subscriber in
            if count == 0 {
                subscriber.putCompletion()
                return EmptyDisposable
            }
            let taken = LockedState<Int>(0)
            return signal.start(
                forwardingTerminalsTo: subscriber,
                next: { value in
                    let index = taken.withLock { taken -> Int in
                        taken += 1
                        return taken
                    }
                    if index <= count {
                        subscriber.putNext(value)
                    }
                    if index >= count {
                        subscriber.putCompletion()
                    }
                })
        }
    }
}

/// What ``take(until:)`` does with a value.
public struct SignalTakeAction: Sendable {
    /// Whether the value is passed on.
    public let passthrough: Bool
    /// Whether the signal completes after it.
    public let complete: Bool

    /// Creates an action.
    ///
    /// - Parameters:
    ///   - passthrough: Whether the value is passed on.
    ///   - complete: Whether the signal completes after it.
    public init(passthrough: Bool, complete: Bool) {
        self.passthrough = passthrough
        self.complete = complete
    }
}

/// Passes values on until `until` says to complete.
///
/// ```swift
/// let untilReady = states |> take(until: { state in
///     SignalTakeAction(passthrough: true, complete: state == .ready)
/// })
/// ```
///
/// - Parameter until: Decides, for each value, whether to pass it and whether to complete.
/// - Returns: An operator for `|>`.
@preconcurrency public func take<T, E>(until: @escaping @Sendable (T) -> SignalTakeAction) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.start(
                forwardingTerminalsTo: subscriber,
                next: { value in
                    let action = until(value)
                    if action.passthrough {
                        subscriber.putNext(value)
                    }
                    if action.complete {
                        subscriber.putCompletion()
                    }
                })
        }
    }
}

/// Sends the last value (or nil if there was none) when the source completes.
///
/// - Parameter signal: The source.
/// - Returns: A signal of one optional value.
public func last<T: Sendable, E>(signal: Signal<T, E>) -> Signal<T?, E> {
    return Signal { subscriber in
        let last = LockedState<T?>(nil)
        return signal.start(
            linkedTo: subscriber,
            next: { value in
                let replaced = last.withLock { last -> T? in
                    let replaced = last
                    last = value
                    return replaced
                }
                withExtendedLifetime(replaced) {}
            },
            error: { error in
                subscriber.putError(error)
            },
            completed: {
                subscriber.putNext(last.withLock { $0 })
                subscriber.putCompletion()
            })
    }
}
