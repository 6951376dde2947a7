/// Passes on the first `count` values, then completes and disposes the source.
///
/// Values sent from several threads at once: exactly `count` pass, and the completion follows every one
/// of them (it is sent by whichever thread finishes delivering the last of them).
///
/// - Parameter count: How many values to pass; with 0 the result completes at once without starting the
///   source. A negative count stops the program with a message naming it, when the operator is made
///   (the original library passed nothing then, and never completed): check a computed count first.
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
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
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

/// What ``take(until:)-((T)->SignalTakeAction)`` does with a value.
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
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
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

/// Passes values on until `notifier` sends its first value, then completes and disposes the source and
/// the notifier.
///
/// `notifier` is started first, so one that sends a value at once completes the result without starting
/// the source. If `notifier` completes or fails without a value, it is ignored and the result follows
/// the source to its end, as with Combine's `prefix(untilOutputFrom:)`; so its error type need not match
/// the source's. (RxSwift's `take(until:)` ignores the notifier's completion too, but fails with its
/// error.)
///
/// ```
/// source:   -a-b-c-d-|
/// notifier: -----x-
/// result:   -a-b-|
/// ```
///
/// ```swift
/// let frames = ValuePipe<Int>()
/// let stop = ValuePipe<Void>()
/// let untilStopped = frames.signal() |> take(until: stop.signal())
/// ```
///
/// > Note: The completion is sent on the thread on which `notifier` sends its value. A value the source
/// > was already delivering on another thread at that moment may still reach the subscriber (see
/// > ``Subscriber``); no value the source sends after the completion does. To end the result when the
/// > notifier fails as well, turn its error into a value first (with ``catch(_:)``).
///
/// - Parameter notifier: Ends the result with its first value.
/// - Returns: An operator for `|>`.
public func take<T, E, U, F>(until notifier: Signal<U, F>) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            // Errors and completion of the notifier have no handler: they only end its subscription.
            let notifierSubscription = notifier.subscribe(
                Linked(to: subscriber),
                next: { _ in
                    subscriber.putCompletion()
                })
            if subscriber.isTerminated {
                return notifierSubscription
            }
            let disposable = DisposableSet()
            disposable.add(notifierSubscription)
            disposable.add(signal.subscribe(Forwarding(to: subscriber)))
            return disposable
        }
    }
}

/// Drops the first `count` values, then passes the rest on. Errors and completion pass through.
///
/// ```
/// source: -a-b-c-d-|
/// skip(2)
/// result: -----c-d-|
/// ```
///
/// ```swift
/// let readings = ValuePipe<Double>()
/// let afterWarmUp = readings.signal() |> skip(3)
/// ```
///
/// > Note: Values sent from several threads at once are counted in the order they reach the operator's
/// > lock: exactly `count` are dropped. The values passed on are sent outside the lock, on the threads
/// > that sent them, so two of them sent at once may reach the subscriber in either order.
///
/// - Parameter count: How many values to drop; with 0 the source is returned unchanged. A negative count
///   stops the program with a message naming it, when the operator is made.
/// - Returns: An operator for `|>`.
public func skip<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    if count < 0 { misuse("skip(_:) needs a count of at least 0, got \(count)") }
    return { signal in
        if count == 0 {
            return signal
        }
        return Signal { subscriber in
            let skipped = LockedState<Int>(0)
            return signal.subscribe(
                ForwardingTerminals(to: subscriber),
                next: { value in
                    let passes = skipped.withLock { skipped -> Bool in
                        if skipped == count { return true }
                        skipped += 1
                        return false
                    }
                    if passes {
                        subscriber.putNext(value)
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
    return keepingLastValue(of: signal) { last, subscriber in
        subscriber.putNext(last)
    }
}

/// Sends the source's last value, if it sent any, when it completes; then completes.
///
/// ```
/// source:   -a-b-c-|      ---|
/// takeLast: -------c|     ---|
/// ```
///
/// A failure passes on at once, without the value kept. Unlike ``last(signal:)``, a source that sent no
/// value gives an empty result, not a nil value. The value is kept on the thread that sent it and sent
/// on the one that completes, hence `T: Sendable` (which the original did not require: an error in
/// Swift 6 mode for a type that is not `Sendable`).
///
/// - Parameter signal: The source.
/// - Returns: A signal of at most one value.
public func takeLast<T: Sendable, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return keepingLastValue(of: signal) { last, subscriber in
        if let last {
            subscriber.putNext(last)
        }
    }
}

/// Keeps the source's latest value; when the source completes, hands it (nil if there was none) and the
/// subscriber to `send`, then completes. Errors pass on at once.
private func keepingLastValue<T: Sendable, E, R>(
    of signal: Signal<T, E>, send: @escaping @Sendable (T?, Subscriber<R, E>) -> Void
) -> Signal<R, E> {
    return Signal { subscriber in
        let last = LockedState<T?>(nil)
        return signal.subscribe(
            Linked(to: subscriber),
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
                send(last.withLock { $0 }, subscriber)
                subscriber.putCompletion()
            })
    }
}
