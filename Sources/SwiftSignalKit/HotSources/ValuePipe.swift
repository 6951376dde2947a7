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
    /// Each element holds a `Subscriber<T, NoError>` type-erased (``FanOutMember``, shared with the
    /// promises' fan-out) so that the list and its iteration are concrete code: in this module's
    /// unspecialised generic code, a list of a generic element type looks up type metadata on every copy
    /// and every step of iteration.
    @usableFromInline let subscribers = LockedState<OrderedSlots<FanOutMember>>(OrderedSlots())

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
            let key = subscribers.withLock { $0.add(FanOutMember(subscriber, joinedAfter: 0)) }
            return ValuePipeMembership(list: subscribers, key: key)
        }
    }

    /// Sends `next` to every current subscriber.
    ///
    /// - Parameter next: The value.
    @inlinable public func putNext(_ next: T) {
        // Copying the list only retains its storage; it is iterated after unlocking.
        let targets = self.subscribers.withLock { $0 }
        targets.broadcast(next, publishedAs: .max)
    }
}

@usableFromInline final class ValuePipeMembership: Disposable {
    @usableFromInline let list: LockedState<OrderedSlots<FanOutMember>>
    @usableFromInline let key: Int

    @inlinable init(list: LockedState<OrderedSlots<FanOutMember>>, key: Int) {
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
