/// Shares one subscription to a signal among all concurrent subscribers of the same key.
///
/// ```swift
/// let shared = Multicast<Data>()
/// let a = shared.get(key: "feed", signal: expensiveFeed).start(next: { _ in })
/// let b = shared.get(key: "feed", signal: expensiveFeed).start(next: { _ in }) // no second subscription
/// ```
///
/// - The first subscriber of a key starts the source; later subscribers join it and receive the values
///   sent after they joined (nothing is replayed).
/// - The source's error or completion reaches every subscriber and ends the shared subscription; the next
///   subscriber of the key starts the source again.
/// - When the last subscriber leaves, the source is disposed.
/// - Keys are per error type: the same key used with signals of different error types is not shared.
public final class Multicast<T>: Sendable {
    @usableFromInline struct Key: Hashable, Sendable {
        @usableFromInline let name: String
        @usableFromInline let errorType: ObjectIdentifier

        @inlinable init(name: String, errorType: ObjectIdentifier) {
            self.name = name
            self.errorType = errorType
        }
    }

    @usableFromInline let instances = LockedState<[Key: any MulticastInstanceProtocol]>([:])

    /// Creates an empty multicast.
    public init() {}

    /// A signal that shares one subscription to `signal` among subscribers of `key`.
    ///
    /// - Parameters:
    ///   - key: Identifies the shared subscription.
    ///   - signal: The source, started by the first subscriber.
    /// - Returns: The shared signal.
    @inlinable public func get<E>(key: String, signal: Signal<T, E>) -> Signal<T, E> {
        let mapKey = Key(name: key, errorType: ObjectIdentifier(E.self))
        return Signal { subscriber in
            while true {
                let (instance, isNew) = self.instances.withLock { instances -> (MulticastInstance<T, E>, Bool) in
                    if let existing = instances[mapKey] as? MulticastInstance<T, E> {
                        return (existing, false)
                    }
                    let created = MulticastInstance<T, E>()
                    instances[mapKey] = created
                    return (created, true)
                }
                guard let member = instance.add(subscriber) else {
                    // That instance just ended; forget it and make a new one.
                    self.forget(instance, key: mapKey)
                    continue
                }
                if isNew {
                    instance.start(signal) { [weak self] in
                        self?.forget(instance, key: mapKey)
                    }
                }
                return ActionDisposable { [weak self] in
                    if instance.remove(member) {
                        self?.forget(instance, key: mapKey)
                    }
                }
            }
        }
    }

    @inlinable func forget(_ instance: any MulticastInstanceProtocol, key: Key) {
        let removed = self.instances.withLock { instances -> (any MulticastInstanceProtocol)? in
            guard let current = instances[key], current === instance else { return nil }
            return instances.removeValue(forKey: key)
        }
        withExtendedLifetime(removed) {}
    }
}

@usableFromInline protocol MulticastInstanceProtocol: AnyObject, Sendable {}

/// One shared subscription of a ``Multicast``.
@usableFromInline final class MulticastInstance<T, E>: MulticastInstanceProtocol {
    @usableFromInline struct State: Sendable {
        /// Every member is a `Subscriber<T, E>`.
        @usableFromInline var members = OrderedSlots<FanOutMember>()
        @usableFromInline var isEnded = false
        @usableFromInline var source: Disposable?

        @inlinable init() {}
    }

    @usableFromInline let state = LockedState<State>(State())

    @inlinable init() {}

    /// Adds a member, or returns nil if the instance has ended.
    @inlinable func add(_ subscriber: Subscriber<T, E>) -> Int? {
        return self.state.withLock { state in
            state.isEnded ? nil : state.members.add(FanOutMember(subscriber, joinedAfter: 0))
        }
    }

    /// Removes a member; returns true when it was the last one (the source is then disposed).
    @inlinable func remove(_ key: Int) -> Bool {
        let (removed, source, last) = self.state.withLock { state -> (FanOutMember?, Disposable?, Bool) in
            let removed = state.members.remove(key)
            guard state.members.isEmpty, !state.isEnded else { return (removed, nil, false) }
            state.isEnded = true
            let source = state.source
            state.source = nil
            return (removed, source, true)
        }
        withExtendedLifetime(removed) {}
        source?.dispose()
        return last
    }

    @inlinable func start(_ signal: Signal<T, E>, onEnd: @escaping @Sendable () -> Void) {
        // Every member may have left before the source was started.
        guard !self.state.withLock({ $0.isEnded }) else { return }
        let disposable = signal.start(
            next: { [weak self] value in
                guard let self else { return }
                // Copying the list only retains its storage; it is iterated after unlocking.
                self.state.withLock { $0.members }.broadcast(value, publishedAs: .max, failing: E.self)
            },
            error: { [weak self] error in
                guard let self else { return }
                for member in self.end() {
                    member.subscriber(of: T.self, failing: E.self).putError(error)
                }
                onEnd()
            },
            completed: { [weak self] in
                guard let self else { return }
                for member in self.end() {
                    member.subscriber(of: T.self, failing: E.self).putCompletion()
                }
                onEnd()
            })
        let stale = self.state.withLock { state -> Disposable? in
            if state.isEnded { return disposable }
            state.source = disposable
            return nil
        }
        stale?.dispose()
    }

    @inlinable func end() -> [FanOutMember] {
        return self.state.withLock { state in
            state.isEnded = true
            state.source = nil
            return state.members.removeAll()
        }
    }
}

/// A value with a bag of callbacks and a lock, for hand-written multicasting.
///
/// Kept for source compatibility. All three members are public and unsynchronised: take ``lock`` around
/// every access to ``subscribers`` and ``value``.
///
/// > Warning: Nothing enforces the locking; prefer ``ValuePromise`` or ``Promise``.
public final class MulticastPromise<T> {
    /// The callbacks; access under ``lock``.
    public let subscribers = Bag<(T) -> Void>()
    /// The lock that guards ``subscribers`` and ``value``.
    public let lock = Lock()
    /// The latest value; access under ``lock``.
    public var value: T?

    /// Creates an empty promise.
    public init() {}
}

// Safe only under the documented contract that every access to `subscribers` and `value` happens while
// holding `lock`, as in the original API; the type exists for source compatibility.
extension MulticastPromise: @unchecked Sendable {}
