/// The promises' front on the fan-out engine: ``Promise``, ``ValuePromise`` and ``ReplayingValuePipe``
/// keep a ``FanOutState`` that replays the latest value, beside what a promise alone decides under the
/// same lock (its source and the generation that versions it).
///
/// See ``FanOutState`` for the order of delivery and the replay: a new subscriber's replay is
/// delivered at once, on the subscribing thread, as the original library does, also from inside a
/// callback of the same promise and while another thread is delivering. Values that leave the state (a
/// replaced latest value, a delivered broadcast, a backlog) are released after unlocking.
@usableFromInline struct ReplayingFanOut<T: Sendable>: FanOutOwner {
    @usableFromInline typealias Value = T
    @usableFromInline typealias Failure = NoError

    @usableFromInline struct State: Sendable {
        @usableFromInline var fanOut: FanOutState<T, NoError>
        /// The version of the owner's source (``replaceSource(_:)``) or of its value (a compare-then-set
        /// through ``publish(_:ifGeneration:advancing:)``); changed only by those two, and by ``close()``
        /// (a `ReplayingValuePipe`'s, which uses no generation otherwise), which sets it to
        /// ``ReplayingFanOut/closedGeneration``. A flag of its own would make every promise 8 bytes
        /// larger.
        @usableFromInline var generation: UInt64 = 0
        /// The owner's current source subscription (a ``Promise``'s `PromiseSource<T>`), type-erased so
        /// that the owner can call it through its concrete type: through `Disposable` the call would
        /// run this module's unspecialised code.
        @usableFromInline var source: (any AnyObject & Sendable)?

        @usableFromInline init(value: T?) {
            self.fanOut = FanOutState(value: value)
        }
    }

    @usableFromInline let state: LockedState<State>

    init(value: T?) {
        self.state = .init(State(value: value))
    }

    @inlinable func withFanOut<R>(_ body: (inout FanOutState<T, NoError>) -> R) -> R {
        return self.state.withLock { body(&$0.fanOut) }
    }

    /// The generation of a fan-out that ``close()`` closed.
    @inlinable static var closedGeneration: UInt64 { .max }

    /// Adds a subscriber, as ``subscribe(_:)`` does, unless ``close()`` has closed the fan-out; then
    /// only replays the log to it, without making it a member, and returns nil.
    @inlinable func subscribeIfOpen(_ subscriber: Subscriber<T, NoError>) -> Int? {
        typealias Log = FanOutState<T, NoError>.Log
        let (joined, lateReplay) = self.state.withLock { state -> ((key: Int, replay: Log?)?, Log?) in
            if state.generation == Self.closedGeneration { return (nil, state.fanOut.log) }
            return (state.fanOut.join(subscriber), nil)
        }
        guard let (key, replay) = joined else {
            lateReplay?.replay(to: subscriber)
            return nil
        }
        replay?.deliver(to: subscriber, key: key, of: self)
        return key
    }

    /// Closes the fan-out for good (its owner, a `ReplayingValuePipe`, is going, so nothing will be
    /// published again): later subscriptions only get the log replayed (``subscribeIfOpen(_:)``), and
    /// the members are released, without an event, once the broadcasts already published have reached
    /// them: here, or by the thread delivering them when it runs out (``nextWork(resuming:)``). A member
    /// still receiving its replay stops being a member and finishes its backlog.
    ///
    /// Each member's subscriber holds its membership, which holds this state: a subscription that is
    /// never disposed would otherwise keep that cycle, and whatever its callbacks capture, for good.
    func close() {
        let members = self.state.withLock { state -> OrderedSlots<FanOutMember>? in
            state.generation = Self.closedGeneration
            return state.fanOut.delivery.isDelivering ? nil : state.fanOut.members.close()
        }
        // Released here, after unlocking.
        withExtendedLifetime(members) {}
    }

    /// The next broadcast for the thread delivering them; when there is none and the fan-out is
    /// closed, that thread releases the members, after unlocking (see ``close()``).
    ///
    /// Only a flag leaves the lock on the common path: a promise's delivery goes idle after every set,
    /// and carrying the members out as an optional there cost `ValuePromise.set` to ten subscribers 82
    /// instructions (739 to 821, W6). A closed pipe, which goes idle once more, takes the lock again.
    @inlinable func nextWork(resuming: Bool) -> SerialDeliveryStep<FanOutState<T, NoError>.Work> {
        let (step, closedWhileIdle) = self.state.withLock { state in
            let step = state.fanOut.nextWork(resuming: resuming)
            guard case .idle = step else { return (step, false) }
            return (step, state.generation == Self.closedGeneration)
        }
        if closedWhileIdle {
            self.releaseMembersOnceClosed()
        }
        return step
    }

    /// Releases the members of a closed fan-out, after unlocking, unless a delivery has begun since
    /// (whose thread releases them when it goes idle) or they are gone already.
    @usableFromInline func releaseMembersOnceClosed() {
        let members = self.state.withLock { state -> OrderedSlots<FanOutMember>? in
            guard !state.fanOut.delivery.isDelivering, !state.fanOut.members.isClosed else { return nil }
            return state.fanOut.members.close()
        }
        withExtendedLifetime(members) {}
    }

    /// Adds a subscriber and, if there is a current value, delivers it to the subscriber before
    /// returning, followed by whatever was published meanwhile.
    @inlinable func subscribe(_ subscriber: Subscriber<T, NoError>) -> Int {
        let (key, replay) = self.withFanOut { $0.join(subscriber) }
        replay?.deliver(to: subscriber, key: key, of: self)
        return key
    }

    /// The current value and generation, for an owner's compare-then-set (see
    /// ``publish(_:ifGeneration:advancing:)``).
    @inlinable func current() -> (value: T?, generation: UInt64) {
        return self.state.withLock { ($0.fanOut.log.latest, $0.generation) }
    }

    /// Starts a new generation without a value, with a new source made for it by `makeSource` (library
    /// code: it runs under the lock), so that a concurrent replacement or the owner's deinit finds and
    /// disposes it, and values the previous source sends afterwards fail the generation check. Returns
    /// the new source, the one it replaces, and the value it cleared, to be disposed and released after
    /// unlocking.
    @inlinable func replaceSource<Source: AnyObject & Sendable>(
        _ makeSource: (UInt64) -> Source
    ) -> (
        source: Source, previous: (any AnyObject & Sendable)?, cleared: FanOutState<T, NoError>.Log
    ) {
        return self.state.withLock { state in
            state.generation += 1
            let cleared = state.fanOut.clearLog()
            let previous = state.source
            let source = makeSource(state.generation)
            state.source = source
            return (source, previous, cleared)
        }
    }

    /// Takes the current source away (the owner is going), to be disposed after unlocking.
    func takeSource() -> (any AnyObject & Sendable)? {
        return self.state.withLock { state in
            let source = state.source
            state.source = nil
            return source
        }
    }

    /// Removes the member `key`; a key already removed finds nothing.
    ///
    /// Inlinable, like ``subscribe(_:)``: a subscription's disposal reaches it through a closure made
    /// where the owner's `get()` or `signal()` is specialised for the client's value type (see
    /// ``FanOutMembership``, in `FanOut.swift`).
    @inlinable func unsubscribe(_ key: Int) {
        let departure = self.withFanOut { $0.leave(key) }
        // Released here, after unlocking.
        withExtendedLifetime(departure) {}
    }

    /// Publishes `value`, unless `generation` is given and no longer current.
    ///
    /// - Parameters:
    ///   - generation: The generation the caller saw; a newer one means its value is stale.
    ///   - advancing: Whether publishing starts a new generation (``ValuePromise`` uses generations as a
    ///     version for its compare-then-set).
    /// - Returns: Whether the value was published.
    @inlinable @discardableResult
    func publish(_ value: T, ifGeneration generation: UInt64? = nil, advancing: Bool = false) -> Bool {
        let (published, work, replaced) = self.state.withLock {
            state -> (Bool, FanOutState<T, NoError>.Work?, T?) in
            if let generation, state.generation != generation {
                return (false, nil, nil)
            }
            if advancing {
                state.generation += 1
            }
            let (work, replaced) = state.fanOut.publish(value, keeping: 1)
            return (true, work, replaced)
        }
        withExtendedLifetime(replaced) {}
        if let work {
            self.deliver(work)
        }
        return published
    }
}
