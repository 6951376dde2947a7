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
                let dropped = self.state.withLock { $0.terminate() }
                withExtendedLifetime(dropped) {}
                return
            }
            self.current.set(
                signal.start(
                    forwardingTo: subscriber,
                    error: { error in
                        self.fail(error)
                    },
                    completed: {
                        self.innerCompleted()
                    }))
            switch self.state.withLock({ $0.startReturned() }) {
            case .start(let signal):
                next = signal
            case .complete:
                subscriber.putCompletion()
            case .none:
                break
            }
        }
    }

    @inlinable func fail(_ error: E) {
        let dropped = self.state.withLock { $0.terminate() }
        withExtendedLifetime(dropped) {}
        self.subscriber.putError(error)
    }

    @inlinable func innerCompleted() {
        switch self.state.withLock({ $0.innerCompleted() }) {
        case .start(let signal):
            self.run(signal)
        case .complete:
            self.subscriber.putCompletion()
        case .none:
            break
        }
    }
}
