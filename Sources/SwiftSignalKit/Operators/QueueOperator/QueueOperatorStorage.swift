/// Starts the inner signals of ``queue(_:)`` and ``throttled(_:)``.
@usableFromInline final class QueueRunner<T, E>: Sendable {
    @usableFromInline let state: LockedState<QueueOperatorStateMachine<T, E>>
    @usableFromInline let current = MetaDisposable()
    @usableFromInline let subscriber: Subscriber<T, E>

    @inlinable init(subscriber: Subscriber<T, E>, mode: QueueOperatorStateMachine<T, E>.Mode) {
        self.state = .init(QueueOperatorStateMachine(mode: mode))
        self.subscriber = subscriber
    }

    /// Starts `first` and then every inner signal that completes synchronously hands over.
    @inlinable func run(_ first: Signal<T, E>) {
        var next: Signal<T, E>? = first
        while let signal = next {
            next = nil
            let subscriber = self.subscriber
            // While this loop runs inside the generator, a downstream disposal cannot reach the
            // operator's disposable yet; the subscriber knows it ended.
            if subscriber.isTerminated {
                self.perform(self.state.withLock { $0.terminate() })
                return
            }
            self.current.set(
                signal.subscribe(
                    Forwarding(to: subscriber),
                    error: { error in
                        self.fail(error)
                    },
                    completed: {
                        self.innerCompleted()
                    }))
            next = self.perform(self.state.withLock { $0.startReturned() })
        }
    }

    @inlinable func fail(_ error: E) {
        self.perform(self.state.withLock { $0.terminate() })
        self.subscriber.putError(error)
    }

    @inlinable func innerCompleted() {
        if let next = self.perform(self.state.withLock { $0.innerCompleted() }) {
            self.run(next)
        }
    }

    /// Does what the machine answered, after unlocking, except starting: returns the inner signal to
    /// start, which the caller starts (in ``run(_:)``'s loop, or by calling it).
    @inlinable @discardableResult func perform(_ action: QueueOperatorStateMachine<T, E>.Action) -> Signal<T, E>? {
        switch action {
        case .start(let signal):
            return signal
        case .complete:
            self.subscriber.putCompletion()
        case .release(let dropped):
            withExtendedLifetime(dropped) {}
        case .none:
            break
        }
        return nil
    }
}
