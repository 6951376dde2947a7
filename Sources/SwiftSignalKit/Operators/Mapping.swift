/// Transforms each value.
///
/// ```swift
/// let lengths = names |> map { $0.count }
/// ```
///
/// - Parameter f: The transformation; runs on the thread that delivers each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func map<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        let stage = StatelessStage<MapStep<T, R>, E>(upstream: signal, step: MapStep(f))
        return stage.signal(fusedWithFilter: { [stage] predicate in
            return stage.filtered(by: predicate)
        })
    }
}

/// Keeps the values for which `f` returns true.
///
/// - Parameter f: The predicate; runs on the thread that delivers each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func filter<T, E>(_ f: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        // `map { ... } |> filter { ... }` runs as one stage: one subscriber per subscription.
        if let fuse = signal.fusion?.filter {
            return fuse(f)
        }
        return StatelessStage<FilterStep<T>, E>(upstream: signal, step: FilterStep(f)).signal(fusedWithFilter: nil)
    }
}

/// Transforms the non-nil values of a signal of optionals, passing nil through (an `Optional.map` on each
/// value, as in the original library, not a flattening).
///
/// ```swift
/// let names: Signal<String?, NoError> = users |> flatMap { $0.name }
/// ```
///
/// - Parameter f: The transformation of wrapped values.
/// - Returns: An operator for `|>`.
@preconcurrency public func flatMap<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T?, E>) -> Signal<R?, E> {
    return { signal in
        return Signal<R?, E> { subscriber in
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    subscriber.putNext(value.map(f))
                })
        }
    }
}

/// Transforms the error.
///
/// This is also how a signal whose error type is not an `Error` is prepared for the async bridges.
///
/// - Parameter f: The transformation of the error.
/// - Returns: An operator for `|>`.
@preconcurrency public func mapError<T, E, R>(_ f: @escaping @Sendable (E) -> R) -> (Signal<T, E>) -> Signal<T, R> {
    return { signal in
        return Signal<T, R> { subscriber in
            return signal.subscribe(
                ForwardingValues(to: subscriber),
                error: { error in
                    subscriber.putError(f(error))
                },
                completed: {
                    subscriber.putCompletion()
                })
        }
    }
}

/// Gives a signal that cannot fail a different error type, so it can be combined with failing signals.
///
/// - Parameter type: The new error type.
/// - Returns: An operator for `|>`.
public func castError<T, E>(_ type: E.Type) -> (Signal<T, NoError>) -> Signal<T, E> {
    return { signal in
        return Signal<T, E> { subscriber in
            // The source cannot fail, so the stage has no error to forward.
            return signal.subscribe(ForwardingValues<T, NoError, E>(to: subscriber))
        }
    }
}

/// Drops values equal to the one before them.
///
/// ```swift
/// let changes = temperature |> distinctUntilChanged
/// ```
///
/// - Parameter signal: The source.
/// - Returns: The source without consecutive duplicates.
@inlinable public func distinctUntilChanged<T: Equatable & Sendable, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return signal |> distinctUntilChanged(isEqual: { $0 == $1 })
}

/// Drops values that `isEqual` considers equal to the one before them.
///
/// The comparison runs outside the operator's lock. When values arrive from several threads at once,
/// "the one before" is the last value whose comparison finished first.
///
/// - Parameter isEqual: The equality used.
/// - Returns: An operator for `|>`.
///
/// Inlinable, so that it is specialised for the client's types: unspecialised, each value looked up
/// the type of the operator's state in the runtime's shared tables, which threads running unrelated
/// subscriptions all write.
@inlinable @preconcurrency public func distinctUntilChanged<T: Sendable, E>(
    isEqual: @escaping @Sendable (T, T) -> Bool
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            // The last value passed on, with a version so a racing value is compared again.
            let last = LockedState<(value: T?, version: UInt64)>((nil, 0))
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    while true {
                        let (previous, version) = last.withLock { $0 }
                        if let previous, isEqual(previous, value) {
                            return
                        }
                        let (stored, replaced) = last.withLock { state -> (Bool, T?) in
                            guard state.version == version else { return (false, nil) }
                            let replaced = state.value
                            state = (value, version + 1)
                            return (true, replaced)
                        }
                        withExtendedLifetime(replaced) {}
                        if stored {
                            subscriber.putNext(value)
                            return
                        }
                    }
                })
        }
    }
}
