/// The shared part of one ``share(replay:connection:)``: its state, and the upstream it connects to.
///
/// It is the downstream of the upstream's subscriber, so loops inside the upstream's generator (a
/// ``restart(_:)`` of a synchronous source) stop once every subscriber has ended, even before the last
/// one's disposal reaches the share (which happens only when its own generator returns).
final class ShareStorage<T: Sendable, E: Sendable>: DownstreamLink {
    private let state: LockedState<ShareStateMachine<T, E>>
    private let upstream: Signal<T, E>

    init(upstream: Signal<T, E>, replay: ShareReplay, connection: ShareConnection) {
        self.upstream = upstream
        self.state = LockedState(ShareStateMachine(replay: replay, connection: connection))
    }

    func subscribe(_ subscriber: Subscriber<T, E>) -> Disposable {
        let join = self.state.withLock { $0.join(subscriber) }
        if join.deliver {
            self.deliver(to: join.id)
        }
        if let generation = join.connect {
            self.connect(generation)
        }
        return ActionDisposable { [self] in
            let (removed, action) = self.state.withLock { $0.leave(join.id) }
            // The member's subscriber and undelivered events are released here, after unlocking.
            withExtendedLifetime(removed) {}
            self.perform(action)
        }
    }

    private func connect(_ generation: UInt64) {
        let subscriber = SubscriptionSubscriber<T, E>(
            downstream: self,
            next: { [self] value in
                self.perform(self.state.withLock { $0.upstreamSent(value, generation: generation) })
            },
            error: { [self] error in
                self.perform(self.state.withLock { $0.upstreamEnded(.error(error), generation: generation) })
            },
            completed: { [self] in
                self.perform(self.state.withLock { $0.upstreamEnded(.completed, generation: generation) })
            })
        // Stored before the upstream starts, so that the last subscriber leaving while a synchronous
        // upstream runs (`take(1)` downstream, say) disposes it: loops inside its generator see that
        // their subscriber has ended, as they would without the share.
        if let unwanted = self.state.withLock({ $0.connected(generation, subscriber) }) {
            unwanted.dispose()
            return
        }
        _ = self.upstream.run(subscriber)
    }

    private func perform(_ action: ShareStateMachine<T, E>.BroadcastAction) {
        withExtendedLifetime(action.dropped) {}
        for id in action.deliver {
            self.deliver(to: id)
        }
        action.disconnect?.dispose()
    }

    /// Delivers member `id`'s outbox until it is empty or the member has left.
    private func deliver(to id: Int) {
        while let (subscriber, batch) = self.state.withLock({ $0.takeBatch(for: id) }), !batch.isEmpty {
            for event in batch {
                subscriber.put(event)
            }
        }
    }

    /// Whether nobody listens any more: every subscriber has ended (checked outside the share's lock).
    var isTerminated: Bool {
        let (subscribers, staysConnected) = self.state.withLock { ($0.activeSubscribers, $0.connectionPolicy == .stayConnected) }
        if subscribers.isEmpty {
            return !staysConnected
        }
        return subscribers.allSatisfy { $0.isTerminated }
    }
}
