/// Shares one subscription to a signal among all concurrent subscribers of the same key.
///
/// ```swift
/// let shared = Multicast<Quote>()
/// let a = shared.get(key: "feed", signal: expensiveFeed).start(next: { _ in })
/// let b = shared.get(key: "feed", signal: expensiveFeed).start(next: { _ in }) // no second subscription
/// ```
///
/// - The first subscriber of a key starts the source; later subscribers join it and receive the values
///   sent after they joined (nothing is replayed).
/// - The source's error or completion reaches every subscriber and ends the shared subscription; the next
///   subscriber of the key starts the source again.
/// - When the last subscriber leaves, the source is disposed.
/// - A loop inside the source's generator (``restart(_:)`` of a synchronous source) stops once every
///   subscriber has ended, as behind ``share(replay:connection:)``, even before the last one's disposal
///   arrives; the key's next subscriber starts the source again.
/// - Keys are per error type: the same key used with signals of different error types is not shared.
/// - Values need not be `Sendable`, as in the original library: from a source whose events are serial,
///   as a signal's should be, each value reaches the subscribers on the thread that sent it. A source
///   that sends from two threads at once (a ``ValuePipe`` fed by two threads) breaks that: a value sent
///   while another thread delivers is queued, the sending thread returns at once, and the delivering
///   thread delivers it after its own, so the value crosses threads. In Swift 6 code prefer
///   ``share(replay:connection:)``, which requires `Sendable` values, for such a source.
/// - A signal from `get(key:signal:)` holds the multicast: while that signal or a subscription to it
///   exists, the multicast stays, and a new subscription through the signal shares (or restarts) the
///   key's source as above.
/// - Every subscriber of a key gets the source's events in the same order, one at a time: a value that a
///   subscriber's callback makes the source send reaches every subscriber after the current one (as
///   with ``share(replay:connection:)``), not in the middle of its delivery.
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
        return self.shared(key: key, signal: signal)
    }

    /// ``get(key:signal:)``, under a name of its own that the `NoError` form can call (a call of `get`
    /// from there would choose that form itself).
    @inlinable func shared<E>(key: String, signal: Signal<T, E>) -> Signal<T, E> {
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

    /// ``get(key:signal:)`` for a signal that cannot fail: the original library's only form, kept so that
    /// a call whose signal takes its error type from this one (`get(key: "k", signal: .single(1))`, a
    /// `Signal { ... }` literal) compiles as it did there.
    ///
    /// - Parameters:
    ///   - key: Identifies the shared subscription.
    ///   - signal: The source, started by the first subscriber.
    /// - Returns: The shared signal.
    @inlinable public func get(key: String, signal: Signal<T, NoError>) -> Signal<T, NoError> {
        return self.shared(key: key, signal: signal)
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

/// One shared subscription of a ``Multicast``: a front on the fan-out engine (``FanOutState``, with no
/// replay), beside the source subscription it shares. So its subscribers get the source's events in
/// one order, one at a time: a value that a subscriber's callback makes the source send waits until
/// the current one has reached every subscriber, as with ``share(replay:connection:)``.
@usableFromInline final class MulticastInstance<T, E>: MulticastInstanceProtocol, FanOutOwner {
    @usableFromInline typealias Value = T
    @usableFromInline typealias Failure = E

    /// Where the shared subscription is.
    @usableFromInline enum Phase {
        /// Made; the source is being started.
        case starting
        /// The source's subscription, to dispose when the last subscriber leaves.
        case connected(Disposable)
        /// The last subscriber left or the source ended: no subscriber joins any more, and the next one
        /// of the key makes a new instance.
        case ended
    }

    @usableFromInline struct State {
        @usableFromInline var fanOut = FanOutState<T, E>(value: nil)
        @usableFromInline var phase = Phase.starting
        /// Counts joins and departures, so that a look at the members outside the lock can tell whether
        /// they changed meanwhile (see ``MulticastInstance/hasNoListeners(onEnd:)``).
        @usableFromInline var membership: UInt64 = 0

        @inlinable init() {}

        /// Ends the shared subscription; returns the source's subscription, if connected, for the
        /// caller to dispose or release after unlocking.
        @inlinable mutating func end() -> Disposable? {
            defer { self.phase = .ended }
            if case .connected(let source) = self.phase { return source }
            return nil
        }

        @inlinable var isEnded: Bool {
            if case .ended = self.phase { return true }
            return false
        }
    }

    @usableFromInline let state = LockedState<State>(State())

    @inlinable init() {}

    @inlinable func withFanOut<R>(_ body: (inout FanOutState<T, E>) -> R) -> R {
        return self.state.withLock { body(&$0.fanOut) }
    }

    /// Adds a member, or returns nil if the instance has ended.
    @inlinable func add(_ subscriber: Subscriber<T, E>) -> Int? {
        return self.state.withLock { state in
            // The log is always empty: the join has no replay to deliver.
            guard !state.isEnded else { return nil }
            state.membership &+= 1
            return state.fanOut.join(subscriber).key
        }
    }

    /// Removes a member; returns true when it was the last one (the source is then disposed).
    @inlinable func remove(_ key: Int) -> Bool {
        let (departure, source, last) = self.state.withLock {
            state -> (FanOutState<T, E>.Departure, Disposable?, Bool) in
            let departure = state.fanOut.leave(key)
            state.membership &+= 1
            guard state.fanOut.members.isEmpty, !state.isEnded else { return (departure, nil, false) }
            return (departure, state.end(), true)
        }
        withExtendedLifetime(departure) {}
        source?.dispose()
        return last
    }

    @inlinable func start(_ signal: Signal<T, E>, onEnd: @escaping @Sendable () -> Void) {
        // Every member may have left before the source was started.
        guard !self.state.withLock({ $0.isEnded }) else { return }
        // Linked to the members, as `share`'s upstream subscriber is: a loop inside the source's generator
        // (``restart(_:)`` of a synchronous source) learns that every member has ended, even before the
        // last one's disposal reaches this instance (only once that member's generator, the one running
        // this source, has returned).
        let subscriber = OperatorSubscriber(
            Linked<T, E, _>(to: MulticastListeners(instance: self, onEnd: onEnd)),
            next: { [weak self] value in
                guard let self else { return }
                if let work = self.withFanOut({ $0.publish(value, keeping: 0).work }) {
                    self.deliver(work)
                }
            },
            error: { [weak self] error in
                guard let self else { return }
                self.end(with: .Error(error))
                onEnd()
            },
            completed: { [weak self] in
                guard let self else { return }
                self.end(with: .Completion)
                onEnd()
            })
        let disposable = signal.run(subscriber)
        let stale = self.state.withLock { state -> Disposable? in
            if state.isEnded { return disposable }
            state.phase = .connected(disposable)
            return nil
        }
        stale?.dispose()
    }

    /// Whether every member has ended (see ``MulticastListeners``). Once the answer is yes, it stays yes:
    /// the instance ends, and the next subscriber of the key starts the source again.
    @inlinable func hasNoListeners(onEnd: @Sendable () -> Void) -> Bool {
        return FanOutListenerCheck<T, E>.allHaveEnded(
            check: { limit in
                self.state.withLock { state in
                    if state.isEnded { return .abandoned }
                    return .depends(on: state.fanOut.liveSubscribers(since: 0, limit: limit), membership: state.membership)
                }
            },
            abandon: { membership in
                let ended = self.state.withLock { state -> (ended: Bool, source: Disposable?) in
                    if state.isEnded { return (true, nil) }
                    // Someone joined or left meanwhile: look again.
                    guard state.membership == membership else { return (false, nil) }
                    state.fanOut.endAllMembers()
                    return (true, state.end())
                }
                guard ended.ended else { return false }
                ended.source?.dispose()
                onEnd()
                return true
            })
    }

    /// The source ended: sends `event` to every member and ends the instance.
    @inlinable func end(with event: SignalEvent<T, E>) {
        let (work, source) = self.state.withLock { state -> (FanOutState<T, E>.Work?, Disposable?) in
            // The source's subscription has ended by itself: released here, not disposed.
            return (state.fanOut.end(event).work, state.end())
        }
        withExtendedLifetime(source) {}
        if let work {
            self.deliver(work)
        }
    }
}

// Safe: the state is behind its lock, and the other stored properties are immutable. Its values (`T`,
// `E`) need not be `Sendable`, as in the original library: they come from the one source, whose events
// are serial, and the engine delivers each on the thread that sent it. Only a source that broke that
// rule, sending from two threads at once, would have the engine queue a value for the other thread.
extension MulticastInstance: @unchecked Sendable {}

/// The downstream of a ``MulticastInstance``'s source subscriber: loops inside the source's generator ask
/// it whether anyone still listens, and stop once every member has ended (as with `share`'s
/// `ShareListeners`).
@usableFromInline final class MulticastListeners<T, E>: DownstreamLink {
    @usableFromInline let instance: MulticastInstance<T, E>
    /// Forgets the instance in its ``Multicast``, once it has ended.
    @usableFromInline let onEnd: @Sendable () -> Void

    @inlinable init(instance: MulticastInstance<T, E>, onEnd: @escaping @Sendable () -> Void) {
        self.instance = instance
        self.onEnd = onEnd
    }

    @inlinable var isTerminated: Bool {
        return self.instance.hasNoListeners(onEnd: self.onEnd)
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
