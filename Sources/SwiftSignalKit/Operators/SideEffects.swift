/// Runs `f` with each value before passing it on.
///
/// - Parameter f: The side effect; its result is ignored.
/// - Returns: An operator for `|>`.
@preconcurrency public func beforeNext<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    _ = f(value)
                    subscriber.putNext(value)
                })
        }
    }
}

/// Runs `f` with each value after passing it on.
///
/// - Parameter f: The side effect; its result is ignored.
/// - Returns: An operator for `|>`.
@preconcurrency public func afterNext<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    subscriber.putNext(value)
                    _ = f(value)
                })
        }
    }
}

/// Runs `f` each time the signal is started, before the source starts.
///
/// - Parameter f: The side effect.
/// - Returns: An operator for `|>`.
@preconcurrency public func beforeStarted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            f()
            return signal.subscribe(Forwarding(to: subscriber))
        }
    }
}

/// Runs `f` when the source completes, before passing the completion on.
///
/// - Parameter f: The side effect.
/// - Returns: An operator for `|>`.
@preconcurrency public func beforeCompleted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(
                Forwarding(to: subscriber),
                completed: {
                    f()
                    subscriber.putCompletion()
                })
        }
    }
}

/// Runs `f` when the source completes, after passing the completion on.
///
/// - Parameter f: The side effect.
/// - Returns: An operator for `|>`.
@preconcurrency public func afterCompleted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(
                Forwarding(to: subscriber),
                completed: {
                    subscriber.putCompletion()
                    f()
                })
        }
    }
}

/// Runs `f` once when the subscription ends: on dispose, or after a terminal event, in both cases after
/// the source's subscription has been disposed (as in the original library), so `f` may release what
/// the source's disposal still uses.
///
/// - Parameter f: The side effect; its result is ignored.
/// - Returns: An operator for `|>`.
@preconcurrency public func afterDisposed<T, E, R>(_ f: @escaping @Sendable () -> R) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            // The source's generator gets the subscriber itself, and `f` follows the source's own
            // disposable in the one disposable the subscriber ends with: so `f` runs after the source's
            // disposal however the subscription ends (a subscription above that is still sending its
            // terminal event when this one disposes it disposes its own source then), and the
            // subscription needs no subscriber of its own.
            let source = signal.generator(subscriber)
            return ActionDisposable {
                source.dispose()
                _ = f()
            }
        }
    }
}

/// Prints, for each subscription, the time from its start to its first value, as
/// `measureTimeToFirstEvent(label): 12.5 ms`, on standard output, in every build; a subscription that
/// ends without a value prints nothing.
///
/// Kept for source compatibility with the original SwiftSignalKit, which printed for the signal's first
/// subscription only. In new code, prefer your own measurement (``beforeStarted(_:)`` and
/// ``beforeNext(_:)``, with the clock and the log your service uses).
///
/// - Parameter label: Names the measurement in the printed line.
/// - Returns: An operator for `|>`.
public func debug_measureTimeToFirstEvent<T, E>(label: String) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let start = LockedState<ContinuousClock.Instant?>(ContinuousClock.now)
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    let started = start.withLock { start -> ContinuousClock.Instant? in
                        defer { start = nil }
                        return start
                    }
                    if let started {
                        // To the microsecond: 0.303 ms, not 0.30275799999999997 ms.
                        let milliseconds = ((ContinuousClock.now - started).secondsForSignals * 1_000_000).rounded() / 1000
                        print("measureTimeToFirstEvent(\(label)): \(milliseconds) ms")
                    }
                    subscriber.putNext(value)
                })
        }
    }
}

/// Runs callbacks with per-subscription state: `initialState` makes the state when the signal starts, and
/// each callback receives it along with the event.
///
/// - Parameters:
///   - signal: The source.
///   - initialState: Makes the state for one subscription.
///   - next: Runs before each value is passed on.
///   - error: Runs before the error is passed on.
///   - completed: Runs before the completion is passed on.
///   - disposed: Runs when the subscription is disposed (also after a terminal event).
/// - Returns: The source with the callbacks attached.
@preconcurrency public func withState<T, E, S: Sendable>(
    _ signal: Signal<T, E>,
    _ initialState: @escaping @Sendable () -> S,
    next: @escaping @Sendable (T, S) -> Void = { _, _ in },
    error: @escaping @Sendable (E, S) -> Void = { _, _ in },
    completed: @escaping @Sendable (S) -> Void = { _ in },
    disposed: @escaping @Sendable (S) -> Void = { _ in }
) -> Signal<T, E> {
    return Signal { subscriber in
        let state = initialState()
        let disposable = signal.subscribe(
            Linked(to: subscriber, passingDemand: true),
            next: { value in
                next(value, state)
                subscriber.putNext(value)
            },
            error: { failure in
                error(failure, state)
                subscriber.putError(failure)
            },
            completed: {
                completed(state)
                subscriber.putCompletion()
            })
        return ActionDisposable {
            disposable.dispose()
            disposed(state)
        }
    }
}
