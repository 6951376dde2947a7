/// Flattens a signal of signals by following only the latest inner signal.
///
/// When the outer signal sends a new inner signal, the previous inner signal's later events are ignored,
/// the new one is subscribed, and then the previous subscription is disposed: in that order, as in the
/// original library, so that an inner signal sharing its source with the previous one (a `share()`d
/// signal, a multicast) keeps that source connected across the switch instead of restarting it. The
/// result fails on the first error of the outer signal or of the current
/// inner signal, and completes when the outer signal and the current inner signal have both completed.
///
/// ```swift
/// let results = query.get() |> map { text in search(text) } |> switchToLatest
/// ```
///
/// > Note: Callbacks run outside the operator's lock. A value that the replaced inner signal was already
/// > delivering when the switch happened on another thread may still arrive after the switch.
///
/// - Parameter signal: The signal of signals.
/// - Returns: The flattened signal.
@inlinable public func switchToLatest<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    return Signal { subscriber in
        let state = LockedState<SwitchToLatestStateMachine>(SwitchToLatestStateMachine())
        let outer = signal.subscribe(
            Linked(to: subscriber),
            next: { inner in
                guard case .subscribe(let id) = state.withLock({ $0.outerSentInner() }) else {
                    return
                }
                // Not started once the result was disposed, or for a subscriber that has already ended
                // (`get()` took the first inner's value while the outer signal was starting); the
                // replaced subscription then goes with the result's disposal.
                guard !subscriber.isTerminated, state.withLock({ $0.isCurrent(id) }) else { return }
                let disposable = inner.subscribe(SwitchingInner(to: subscriber, state: state, id: id))
                if case .dispose(let unwanted) = state.withLock({ $0.innerStarted(id, disposable: disposable) }) {
                    unwanted?.dispose()
                }
            },
            error: { error in
                if case .fail(let inner) = state.withLock({ $0.outerFailed() }) {
                    subscriber.putError(error)
                    inner?.dispose()
                }
            },
            completed: {
                if case .complete = state.withLock({ $0.outerCompletedEvent() }) {
                    subscriber.putCompletion()
                }
            })
        return ActionDisposable {
            let action = state.withLock { $0.disposed() }
            // The inner subscription first, then the outer one, as in the original library.
            if case .dispose(let inner) = action { inner?.dispose() }
            outer.dispose()
        }
    }
}

/// Maps each value to a signal and follows only the latest one (``map(_:)`` then ``switchToLatest(_:)``).
///
/// - Parameter f: Makes a signal from each value.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency
public func mapToSignal<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        return signal |> map(f) |> switchToLatest
    }
}

/// Maps each value of a signal that cannot fail to a signal that can, following only the latest one.
///
/// - Parameter f: Makes a signal from each value.
/// - Returns: An operator for `|>`.
@preconcurrency public func mapToSignalPromotingError<T, R, E>(
    _ f: @escaping @Sendable (T) -> Signal<R, E>
) -> (Signal<T, NoError>) -> Signal<R, E> {
    return { signal in
        return signal |> castError(E.self) |> map(f) |> switchToLatest
    }
}

/// What the subscriber of one inner signal of ``switchToLatest(_:)`` does (see ``ValueStage``): passes
/// its events on while it is the current inner signal. Stored in the subscriber, whose value callback
/// captures only the subscriber itself (closures capturing the state, the id and the target needed a
/// context allocation each per inner signal).
@usableFromInline struct SwitchingInner<T, E>: ValueStage {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = E

    @usableFromInline let target: Subscriber<T, E>
    @usableFromInline let state: LockedState<SwitchToLatestStateMachine>
    @usableFromInline let id: UInt64

    @inlinable init(to target: Subscriber<T, E>, state: LockedState<SwitchToLatestStateMachine>, id: UInt64) {
        self.target = target
        self.state = state
        self.id = id
    }

    @inlinable func receive(_ value: T, by subscriber: Subscriber<T, E>) {
        if self.state.withLock({ $0.isCurrent(self.id) }) {
            self.target.putNext(value)
        }
    }

    @inlinable func receive(error: E) {
        if case .fail(let inner) = self.state.withLock({ $0.innerFailed(self.id) }) {
            self.target.putError(error)
            inner?.dispose()
        }
    }

    @inlinable func receiveCompletion() {
        if case .complete = self.state.withLock({ $0.innerCompleted(self.id) }) {
            self.target.putCompletion()
        }
    }

    @inlinable var downstreamIsTerminated: Bool {
        return self.target.isTerminated
    }

    /// The current inner signal's values go to `target` on the sending thread, so its producer may wait
    /// for the room of the consumer below (see `SignalDemand`); the outer signal's values start inner
    /// signals and do not.
    @inlinable var downstreamDemand: (any SignalDemand)? {
        return self.target.demand
    }
}
