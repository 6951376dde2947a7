/// The shared part of one ``share(replay:connection:)``: its state, and the upstream it connects to.
@usableFromInline final class ShareStorage<T: Sendable, E: Sendable>: FanOutOwner {
    @usableFromInline typealias Value = T
    @usableFromInline typealias Failure = E

    @usableFromInline let state: LockedState<ShareStateMachine<T, E>>
    @usableFromInline let upstream: Signal<T, E>

    @inlinable init(upstream: Signal<T, E>, replay: ShareReplay, connection: ShareConnection) {
        self.upstream = upstream
        self.state = LockedState(ShareStateMachine(replay: replay, connection: connection))
    }

    @inlinable func withFanOut<R>(_ body: (inout FanOutState<T, E>) -> R) -> R {
        return self.state.withLock { body(&$0.fanOut) }
    }

    @inlinable func subscribe(_ subscriber: Subscriber<T, E>) -> Disposable {
        let action = self.state.withLock { $0.join(subscriber) }
        let key = action.joinedKey
        self.perform(consume action)
        // A subscriber that arrived after the end got it, and did not join.
        guard let key else { return EmptyDisposable }
        // One object whose closure captures only the storage (no context to allocate), where an
        // `ActionDisposable` took three; a second disposal finds no member to remove.
        return FanOutMembership(key: key) { [self] key in
            self.perform(self.state.withLock { $0.leave(key) })
        }
    }

    @inlinable func connect(_ generation: UInt64) {
        let subscriber = OperatorSubscriber(
            Linked<T, E, _>(to: ShareListeners(storage: self, generation: generation)),
            next: { [self] value in
                self.perform(self.state.withLock { $0.upstreamSent(value, generation: generation) })
            },
            error: { [self] error in
                self.perform(self.state.withLock { $0.upstreamEnded(.Error(error), generation: generation) })
            },
            completed: { [self] in
                self.perform(self.state.withLock { $0.upstreamEnded(.Completion, generation: generation) })
            })
        // Stored before the upstream starts, so that the last subscriber leaving while a synchronous
        // upstream runs (`take(1)` downstream, say) disposes it: loops inside its generator see that
        // their subscriber has ended, as they would without the share.
        switch self.state.withLock({ $0.connected(generation, subscriber) }) {
        case .none:
            _ = self.upstream.run(subscriber)
        case let unwanted:
            self.perform(unwanted)
        }
    }

    /// Runs an action of the machine, after unlocking.
    @inlinable func perform(_ action: consuming ShareStateMachine<T, E>.Action) {
        switch consume action {
        case .none, .joined, .lookAgain:
            break
        case .deliver(let work, let dropped):
            withExtendedLifetime(dropped) {}
            if let work { self.deliver(work) }
        case .replay(let replay, let key, let subscriber):
            replay.deliver(to: subscriber, key: key, of: self)
        case .replayEnded(let log, let event, let subscriber):
            log.replay(to: subscriber)
            subscriber.put(event)
        case .connect(let generation, _):
            self.connect(generation)
        case .disconnect(let work, let connection, let dropped, let departed):
            // The replay and the departed member (its subscriber, its undelivered events) are released
            // here, after unlocking.
            withExtendedLifetime((dropped, departed)) {}
            if let work { self.deliver(work) }
            connection?.dispose()
        case .release(let departed):
            withExtendedLifetime(departed) {}
        case .dispose(let connection):
            connection.dispose()
        }
    }

    /// Whether anyone still listens to connection `generation` (see ``ShareListeners``). Once the answer
    /// is no, it stays no: the connection is let go, and the next subscriber connects again.
    @inlinable func hasNoListeners(_ generation: UInt64) -> Bool {
        return FanOutListenerCheck.allHaveEnded(
            check: { limit in self.state.withLock { $0.listenerCheck(generation, limit: limit) } },
            abandon: { membership in
                let action = self.state.withLock { $0.abandon(generation, membership: membership) }
                if case .lookAgain = action { return false }
                self.perform(action)
                return true
            })
    }
}

/// The downstream of one connection's upstream subscriber: loops inside the upstream's generator (a
/// ``restart(_:)`` of a synchronous source) ask it whether anyone still listens, and stop once every
/// subscriber of the share has ended, even before the last one's disposal reaches the share (which
/// happens only when that subscriber's own generator returns). With ``ShareConnection/stayConnected``
/// someone always does.
@usableFromInline final class ShareListeners<T: Sendable, E: Sendable>: DownstreamLink {
    @usableFromInline let storage: ShareStorage<T, E>
    @usableFromInline let generation: UInt64

    @inlinable init(storage: ShareStorage<T, E>, generation: UInt64) {
        self.storage = storage
        self.generation = generation
    }

    @inlinable var isTerminated: Bool {
        return self.storage.hasNoListeners(self.generation)
    }
}
