/// Replaces a failure with the signal `f` returns for the error.
///
/// ```swift
/// let profile = remoteProfile |> `catch` { _ in cachedProfile }
/// ```
///
/// A source that fails as it starts starts the replacement on the same stack: as with ``then(_:)``, a
/// chain of thousands of synchronous failures built by recursion can overflow the stack; loop inside
/// one generator instead.
///
/// - Parameter f: Makes the replacement signal from the error.
/// - Returns: An operator for `|>`.
@preconcurrency public func `catch`<T, E, R>(_ f: @escaping @Sendable (E) -> Signal<T, R>) -> (Signal<T, E>) -> Signal<T, R> {
    return { signal in
        return Signal<T, R> { subscriber in
            let replacement = MetaDisposable()
            let source = signal.subscribe(
                ForwardingValues(to: subscriber),
                error: { error in
                    // A subscriber that has already ended (`get()` took a value before the failure)
                    // would dispose the replacement at once: never start it.
                    if subscriber.isTerminated { return }
                    replacement.set(f(error).subscribe(Forwarding(to: subscriber)))
                },
                completed: {
                    subscriber.putCompletion()
                })
            let disposable = DisposableSet()
            disposable.add(source)
            disposable.add(replacement)
            return disposable
        }
    }
}
