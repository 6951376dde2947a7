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
        return Signal<R, E> { subscriber in
            return signal.run(MapSubscriber(target: subscriber, transform: f))
        }
    }
}

/// Keeps the values for which `f` returns true.
///
/// - Parameter f: The predicate; runs on the thread that delivers each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func filter<T, E>(_ f: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal<T, E> { subscriber in
            return signal.run(FilterSubscriber(target: subscriber, predicate: f))
        }
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
            return signal.start(
                forwardingTerminalsTo: subscriber,
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
            return signal.start(
                forwardingValuesTo: subscriber,
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
            return signal.start(
                linkedTo: subscriber,
                next: { value in
                    subscriber.putNext(value)
                },
                completed: {
                    subscriber.putCompletion()
                })
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
public func distinctUntilChanged<T: Equatable & Sendable, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return signal |> distinctUntilChanged(isEqual: { $0 == $1 })
}

/// Drops values that `isEqual` considers equal to the one before them.
///
/// The comparison runs outside the operator's lock. When values arrive from several threads at once,
/// "the one before" is the last value whose comparison finished first.
///
/// - Parameter isEqual: The equality used.
/// - Returns: An operator for `|>`.
@preconcurrency public func distinctUntilChanged<T: Sendable, E>(
    isEqual: @escaping @Sendable (T, T) -> Bool
) -> (_ signal: Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            // The last value passed on, with a version so a racing value is compared again.
            let last = LockedState<(value: T?, version: UInt64)>((nil, 0))
            return signal.start(
                forwardingTerminalsTo: subscriber,
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

/// The subscriber `map` starts its source with: it holds the transform and its target, and its value
/// callback captures only the subscriber itself (a closure that captures one object needs no context
/// allocation, where one capturing the transform and the target needed one per subscription). The
/// callback is released, ending the cycle, when the subscriber terminates or is disposed. Its error or
/// completion goes on to the target through ``TerminalForwardingSubscriber``.
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `transform` is immutable and Sendable.
@usableFromInline final class MapSubscriber<T, R, E>: TerminalForwardingSubscriber<T, R, E>, @unchecked Sendable {
    @usableFromInline let transform: @Sendable (T) -> R

    @inlinable init(target: Subscriber<R, E>, transform: @escaping @Sendable (T) -> R) {
        self.transform = transform
        super.init(target: target, next: nil)
        // Set before the subscriber is shared, like an initialiser's stores.
        self.next = { value in
            self.target.putNext(self.transform(value))
        }
    }
}

/// The subscriber of a `filter` stage (see ``MapSubscriber``).
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `predicate` is immutable and Sendable.
@usableFromInline final class FilterSubscriber<T, E>: TerminalForwardingSubscriber<T, T, E>, @unchecked Sendable {
    @usableFromInline let predicate: @Sendable (T) -> Bool

    @inlinable init(target: Subscriber<T, E>, predicate: @escaping @Sendable (T) -> Bool) {
        self.predicate = predicate
        super.init(target: target, next: nil)
        self.next = { value in
            if self.predicate(value) {
                self.target.putNext(value)
            }
        }
    }
}
