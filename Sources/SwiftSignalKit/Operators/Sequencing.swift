/// Drops every value, keeping only the error or completion.
///
/// - Parameter signal: The source.
/// - Returns: A signal with no values.
public func ignoreValues<T, E>(_ signal: Signal<T, E>) -> Signal<Never, E> {
    return Signal { subscriber in
        return signal.subscribe(ForwardingTerminals(to: subscriber), next: nil)
    }
}

/// Continues with `nextSignal` after the source completes.
///
/// ```swift
/// let all = cached |> then(fresh)
/// ```
///
/// `nextSignal` is not started for a subscriber that has already ended when the source completes: a
/// `get()` or `first()` that took the cached value, or a downstream ``take(_:)`` that took enough.
///
/// A source that completes as it starts starts `nextSignal` on the same stack, as in the original
/// library. A chain built by recursion whose steps complete synchronously (pages served from memory:
/// `.single(page) |> then(deferred { pages(after: page) })`) grows the stack by every step, and a few
/// thousand steps overflow an 8 MB stack in a debug build (fewer on a smaller stack). For a long or
/// unbounded chain of such steps, loop inside one generator, or use ``restart(_:)``, which loops.
///
/// - Parameter nextSignal: Started when the source completes, if anyone still listens.
/// - Returns: An operator for `|>`.
public func then<T, E>(_ nextSignal: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let next = MetaDisposable()
            let first = signal.subscribe(
                Forwarding(to: subscriber),
                completed: {
                    // A subscriber that has already ended (`get()` after the first value, a downstream
                    // `take` that took enough) would dispose the next signal at once: never start it.
                    if subscriber.isTerminated { return }
                    next.set(nextSignal.subscribe(Forwarding(to: subscriber)))
                })
            let disposable = DisposableSet()
            disposable.add(first)
            disposable.add(next)
            return disposable
        }
    }
}

/// Sends `values` first, then the source's events.
///
/// The values are sent synchronously when the result is started, before the source is started; if the
/// subscriber has ended by then (a downstream ``take(_:)`` took enough), the source is not started.
/// With no values the source is returned unchanged.
///
/// ```
/// source: ---c-d-|
/// startWith(a, b)
/// result: ab-c-d-|
/// ```
///
/// ```swift
/// let updates = ValuePipe<String>()
/// let status = updates.signal() |> startWith("loading")
/// ```
///
/// - Parameter values: The values to send first, in order.
/// - Returns: An operator for `|>`.
public func startWith<T: Sendable, E>(_ values: T...) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        if values.isEmpty {
            return signal
        }
        return Signal { subscriber in
            for value in values {
                subscriber.putNext(value)
            }
            if subscriber.isTerminated {
                return EmptyDisposable
            }
            return signal.subscribe(Forwarding(to: subscriber))
        }
    }
}

/// A signal made fresh by `generator` for each subscription.
///
/// - Parameter generator: Makes the signal; runs when the result is started.
/// - Returns: The deferred signal.
@preconcurrency public func deferred<T, E>(_ generator: @escaping @Sendable () -> Signal<T, E>) -> Signal<T, E> {
    return Signal { subscriber in
        return generator().subscribe(Forwarding(to: subscriber))
    }
}

/// Merges the values of several signals into one.
///
/// Values are passed on as they arrive. The result fails on the first error (disposing the other
/// sources) and completes when every source has completed; with no sources it completes at once.
///
/// ```swift
/// let anyChange = merge([settingsChanged, accountChanged])
/// ```
///
/// - Parameter signals: The sources, started in order.
/// - Returns: The merged signal.
public func merge<T, E>(_ signals: [Signal<T, E>]) -> Signal<T, E> {
    return Signal { subscriber in
        if signals.isEmpty {
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let remaining = LockedState<Int>(signals.count)
        let disposable = DisposableSet()
        for signal in signals {
            // A subscriber that has already ended (`get()` took an earlier source's value while it
            // started) would dispose the rest at once: never start them.
            if subscriber.isTerminated { break }
            disposable.add(
                signal.subscribe(
                    Forwarding(to: subscriber),
                    completed: {
                        let last = remaining.withLock { remaining -> Bool in
                            remaining -= 1
                            return remaining == 0
                        }
                        if last {
                            subscriber.putCompletion()
                        }
                    }))
        }
        return disposable
    }
}
