/// A hot pipe: values put in are sent to the current subscribers, and nothing is stored.
///
/// ```swift
/// let events = ValuePipe<String>()
/// let disposable = events.signal().start(next: { print($0) })
/// events.putNext("connected") // prints "connected"
/// ```
///
/// A subscriber sees only values put after it subscribed. ``putNext(_:)`` delivers on the calling thread,
/// to subscribers in the order they subscribed, outside any lock; values put concurrently from several
/// threads may reach a subscriber concurrently.
///
/// The signal holds the pipe weakly: once the pipe is released, new subscriptions receive nothing.
public final class ValuePipe<T>: Sendable {
    /// Each element is a `Subscriber<T, NoError>`, stored as `AnyObject & Sendable` so that the list and its iteration
    /// are concrete code: in this module's unspecialised generic code, a list of a generic element type
    /// looks up type metadata on every copy and every step of iteration.
    private let subscribers = LockedState<OrderedSlots<any AnyObject & Sendable>>(OrderedSlots())

    /// Creates a pipe with no subscribers.
    public init() {}

    /// A signal of the values put after subscription. It never completes.
    ///
    /// - Returns: A hot signal.
    public func signal() -> Signal<T, NoError> {
        return Signal { [weak self] subscriber in
            guard let self else { return EmptyDisposable }
            let key = self.subscribers.withLock { $0.add(subscriber) }
            return ActionDisposable { [weak self] in
                let removed = self?.subscribers.withLock { $0.remove(key) }
                withExtendedLifetime(removed) {}
            }
        }
    }

    /// Sends `next` to every current subscriber.
    ///
    /// - Parameter next: The value.
    public func putNext(_ next: T) {
        // Copying the list only retains its storage; it is iterated after unlocking.
        let targets = self.subscribers.withLock { $0 }
        for subscriber in targets {
            // Only `Subscriber<T, NoError>` objects are ever added (see `signal()`).
            unsafeDowncast(subscriber, to: Subscriber<T, NoError>.self).putNext(next)
        }
    }
}
