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
    @usableFromInline let subscribers = LockedState<OrderedSlots<any AnyObject & Sendable>>(OrderedSlots())

    /// Creates a pipe with no subscribers.
    public init() {}

    /// A signal of the values put after subscription. It never completes.
    ///
    /// - Returns: A hot signal.
    @inlinable public func signal() -> Signal<T, NoError> {
        // The signal holds the subscriber list, not the pipe, so it does not keep the pipe alive. (It used
        // to hold the pipe weakly; a weak reference gives the pipe a side table, which made every retain
        // and release of it take the runtime's slow path.) A subscription made after the pipe is gone
        // joins a list nobody puts into, and leaves it when disposed.
        let subscribers = self.subscribers
        return Signal { subscriber in
            let key = subscribers.withLock { $0.add(subscriber) }
            return ValuePipeMembership(list: subscribers, key: key)
        }
    }

    /// Sends `next` to every current subscriber.
    ///
    /// - Parameter next: The value.
    @inlinable public func putNext(_ next: T) {
        // Copying the list only retains its storage; it is iterated after unlocking.
        let targets = self.subscribers.withLock { $0 }
        for subscriber in targets {
            // Only `Subscriber<T, NoError>` objects are ever added (see `signal()`).
            unsafeDowncast(subscriber, to: Subscriber<T, NoError>.self).putNext(next)
        }
    }
}

/// A subscription's place in a ``ValuePipe``: disposing it removes the subscriber.
///
/// One small object instead of an `ActionDisposable` (a closure, its context and a lock). It holds the
/// pipe's subscriber list, not the pipe: a released pipe sends nothing more, and the list it leaves
/// behind holds only subscribers whose own disposables are still alive. A strong reference, because a
/// weak one cost three runtime calls per subscription (form, load, destroy).
@usableFromInline final class ValuePipeMembership: Disposable {
    @usableFromInline let list: LockedState<OrderedSlots<any AnyObject & Sendable>>
    @usableFromInline let key: Int

    @inlinable init(list: LockedState<OrderedSlots<any AnyObject & Sendable>>, key: Int) {
        self.list = list
        self.key = key
    }

    /// Removes the subscriber; later calls find nothing to remove.
    @inlinable func dispose() {
        let removed = self.list.withLock { $0.remove(self.key) }
        // The subscriber is released here, after unlocking.
        withExtendedLifetime(removed) {}
    }
}
