/// Passes on the first `count` values, then completes and disposes the source.
///
/// Values sent from several threads at once: exactly `count` pass, and the completion follows every one
/// of them (it is sent by whichever thread finishes delivering the last of them).
///
/// - Parameter count: How many values to pass; with 0 the result completes at once without starting the
///   source.
/// - Returns: An operator for `|>`.
public func take<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    if count < 0 { misuse("take(_:) needs a count of at least 0, got \(count)") }
    return { signal in
        return Signal { subscriber in
            if count == 0 {
                subscriber.putCompletion()
                return EmptyDisposable
            }
            let progress = LockedState<TakeProgress>(TakeProgress())
            return signal.start(
                forwardingTerminalsTo: subscriber,
                next: { value in
                    let index = progress.withLock { progress -> Int in
                        progress.taken += 1
                        return progress.taken
                    }
                    guard index <= count else { return }
                    subscriber.putNext(value)
                    // Completing only after the last admitted value is delivered: a thread that admitted
                    // the final value must not complete while another is still delivering an earlier one.
                    let deliveredAll = progress.withLock { progress -> Bool in
                        progress.delivered += 1
                        return progress.delivered == count
                    }
                    if deliveredAll {
                        subscriber.putCompletion()
                    }
                })
        }
    }
}

/// How far a ``take(_:)`` subscription has got: values admitted, and values delivered.
struct TakeProgress: Sendable {
    var taken = 0
    var delivered = 0
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
