/// Folds every value into an accumulator and sends the result when the source completes.
///
/// `f` runs outside the operator's lock, one value at a time, in arrival order, even when the source
/// sends from several threads.
///
/// ```swift
/// let total = amounts |> reduceLeft(value: 0, f: +)
/// ```
///
/// - Parameters:
///   - value: The initial accumulator.
///   - f: Combines the accumulator with a value.
/// - Returns: An operator for `|>` whose result sends one value, then completes.
@inlinable @preconcurrency public func reduceLeft<T: Sendable, E>(
    value: T, f: @escaping @Sendable (T, T) -> T
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return reduceLeft(value: value, f: { current, next, _ in f(current, next) })
}

/// Folds every value into an accumulator, with a way to send intermediate values; sends the final
/// accumulator when the source completes.
///
/// - Parameters:
///   - value: The initial accumulator.
///   - f: Combines the accumulator with a value; may call its third argument to send a value downstream,
///     which it does at once, before the call returns.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func reduceLeft<T: Sendable, E>(
    value: T, f: @escaping @Sendable (T, T, (T) -> Void) -> T
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return reduceLeft(
        value,
        generator: { current, next in
            Signal { subscriber in
                // An emitted value goes downstream at once, inside `f`, as in the original library.
                let updated = f(current, next) { subscriber.putNext((current, .Some($0))) }
                subscriber.putNext((updated, .None))
                subscriber.putCompletion()
                return EmptyDisposable
            }
        })
}

/// Whether ``reduceLeft(_:generator:)`` passes a value downstream.
public enum Passthrough<T> {
    /// Nothing is passed.
    case None
    /// The value is passed.
    case Some(T)
}

extension Passthrough: Sendable where T: Sendable {}

/// Folds every value with a signal: for each value, `generator` returns a signal of
/// (new accumulator, value to pass on) pairs, and the next value waits until that signal completes.
///
/// The final accumulator is sent when the source and the last generated signal have completed.
///
/// - Parameters:
///   - value: The initial accumulator.
///   - generator: Makes the signal for the current accumulator and a new value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func reduceLeft<T: Sendable, E>(
    _ value: T, generator: @escaping @Sendable (T, T) -> Signal<(T, Passthrough<T>), E>
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let accumulator = LockedState<T>(value)
            // `queue` starts each step only after the previous one completed, so each step reads the
            // accumulator the previous step left.
            let steps =
                signal
                |> map { next -> Signal<T, E> in
                    Signal { step in
                        let current = accumulator.withLock { $0 }
                        return generator(current, next).subscribe(
                            Linked(to: step),
                            next: { updated, passthrough in
                                let replaced = accumulator.withLock { accumulator -> T in
                                    let replaced = accumulator
                                    accumulator = updated
                                    return replaced
                                }
                                withExtendedLifetime(replaced) {}
                                if case .Some(let value) = passthrough {
                                    step.putNext(value)
                                }
                            },
                            error: { error in
                                step.putError(error)
                            },
                            completed: {
                                step.putCompletion()
                            })
                    }
                } |> queue
            // Linked to the subscriber, not started with callbacks of its own: a loop of synchronous
            // restarts upstream asks the chain below it whether anyone still listens, and a plain start
            // hid the subscriber, so `restart(...) |> reduceLeft(...) |> take(3)` never returned.
            return steps.subscribe(
                Linked(to: subscriber),
                next: { value in
                    subscriber.putNext(value)
                },
                error: { error in
                    subscriber.putError(error)
                },
                completed: {
                    subscriber.putNext(accumulator.withLock { $0 })
                    subscriber.putCompletion()
                })
        }
    }
}
