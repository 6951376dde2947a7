import SwiftSignalKit

extension Signal where E: Error, T: Sendable {
    /// Waits for the signal's first value, then disposes the subscription.
    ///
    /// ```swift
    /// let user = try await userSignal.get()
    /// ```
    ///
    /// The signal is started when `get()` is called; the first value ends the wait and the subscription
    /// is disposed at once. Exactly one outcome is delivered, to the awaiting task, whatever the order of
    /// value, error, completion and cancellation.
    ///
    /// Cancellation: if the awaiting task is cancelled (also before `get()` is called), the subscription
    /// is disposed at once and `CancellationError` is thrown; a task cancelled before the call never
    /// starts the signal.
    ///
    /// A signal whose error type is not an `Error` can be awaited after `mapError(_:)`.
    /// For `NoError` signals, ``first(isolation:)`` needs no `try`.
    ///
    /// - Parameter isolation: Where the call runs; defaults to the caller's actor, so awaiting from an
    ///   actor does not leave it, and a value the signal has already is returned without suspending.
    /// - Returns: The first value.
    /// - Throws: The signal's error; `CancellationError` when the task is cancelled;
    ///   `SignalError.completedWithoutValue` when the signal completes without a value.
    @inlinable public func get(isolation: isolated (any Actor)? = #isolation) async throws -> T {
        switch await self.firstOutcome(isolation: isolation) {
        case .value(let value):
            return value
        case .failure(let error):
            throw error
        case .completed:
            throw SignalError.completedWithoutValue
        case .cancelled:
            throw CancellationError()
        }
    }

    /// Waits for the signal's first value, returning nil on empty completion or cancellation, and
    /// throwing only the signal's own error.
    ///
    /// ```swift
    /// // A NoError signal: no `try` needed.
    /// if let settings = await settingsSignal.first() { apply(settings) }
    /// ```
    ///
    /// Otherwise behaves like ``get(isolation:)``: the subscription is disposed after the first value, on
    /// cancellation (also before the call, when the signal is never started) and on termination.
    ///
    /// - Parameter isolation: Where the call runs; defaults to the caller's actor.
    /// - Returns: The first value, or nil if the signal completed without one or the task was cancelled.
    /// - Throws: The signal's error, typed.
    @inlinable public func first(isolation: isolated (any Actor)? = #isolation) async throws(E) -> T? {
        switch await self.firstOutcome(isolation: isolation) {
        case .value(let value):
            return value
        case .failure(let error):
            throw error
        case .completed, .cancelled:
            return nil
        }
    }

    /// Runs on the caller's isolation (`#isolation`), so awaiting from an actor does not hop off it.
    @inlinable func firstOutcome(isolation: isolated (any Actor)?) async -> FirstValueOutcome<T, E> {
        // A task cancelled before the call never starts the signal.
        if Task.isCancelled { return .cancelled }
        let waiter = FirstValueWaiter<T, E>()
        let disposable = self.start(
            next: { value in waiter.finish(.value(value)) },
            error: { error in waiter.finish(.failure(error)) },
            completed: { waiter.finish(.completed) }
        )
        // Fast path: a signal that answers while starting (a cached value, `single`) needs no suspension.
        if let outcome = waiter.takeEarlyOutcome(orKeep: disposable) {
            disposable.dispose()
            return outcome
        }
        return await withTaskCancellationHandler(
            operation: {
                // Unsafe, not checked: the waiter's state machine resumes it exactly once (the tests
                // race every event against cancellation), and a checked continuation, a resilient
                // type, costs a metadata lookup on every copy.
                await withUnsafeContinuation(isolation: isolation) {
                    (continuation: UnsafeContinuation<FirstValueOutcome<T, E>, Never>) in
                    waiter.install(continuation)
                }
            },
            onCancel: {
                waiter.finish(.cancelled)
            },
            isolation: isolation
        )
    }
}

/// How a wait for the first value ended.
@usableFromInline enum FirstValueOutcome<T: Sendable, E: Error>: Sendable {
    case value(T)
    case failure(E)
    case completed
    case cancelled
}

/// The state of one `get()` or `first()` call: resumes its continuation exactly once
/// and disposes the subscription exactly once, never while holding its lock.
///
/// Inlinable, so that a client's `get()` is specialised for its types: unspecialised, its generic state
/// cost about twenty runtime metadata lookups per call.
@usableFromInline final class FirstValueWaiter<T: Sendable, E: Error>: Sendable {
    @usableFromInline typealias Event = FirstValueOutcome<T, E>

    @usableFromInline enum Phase: Sendable {
        /// Not yet waiting; an event here (a value sent while starting, a cancellation) is remembered.
        case idle(early: Event?)
        case waiting(UnsafeContinuation<FirstValueOutcome<T, E>, Never>)
        case finished
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var phase: Phase
        @usableFromInline var subscription: Disposable?

        @inlinable init() {
            self.phase = .idle(early: nil)
            self.subscription = nil
        }
    }

    /// Everything that leaves the lock (a continuation, the subscription) is resumed or disposed after
    /// unlocking.
    @usableFromInline let state: LockedState<State>

    @inlinable init() {
        self.state = LockedState(State())
    }

    /// Called once `start` has returned: returns the outcome if an event already arrived (the caller then
    /// disposes the subscription), or keeps the subscription for whoever ends the wait.
    @inlinable func takeEarlyOutcome(orKeep disposable: Disposable) -> FirstValueOutcome<T, E>? {
        let early: Event? = self.state.withLock { state in
            guard case .idle(let early) = state.phase else {
                preconditionFailure("FirstValueWaiter started twice")
            }
            if let early {
                state.phase = .finished
                return early
            }
            state.subscription = disposable
            return nil
        }
        return early
    }

    /// Installs the continuation, or resumes it at once (and disposes the subscription) if an event
    /// arrived since ``takeEarlyOutcome(orKeep:)``.
    @inlinable func install(_ continuation: UnsafeContinuation<FirstValueOutcome<T, E>, Never>) {
        let (early, subscription): (Event?, Disposable?) = self.state.withLock { state in
            guard case .idle(let early) = state.phase else {
                preconditionFailure("FirstValueWaiter installed twice")
            }
            if let early {
                state.phase = .finished
                let subscription = state.subscription
                state.subscription = nil
                return (early, subscription)
            }
            state.phase = .waiting(continuation)
            return (nil, nil)
        }
        if let early {
            continuation.resume(returning: early)
            subscription?.dispose()
        }
    }

    /// Ends the wait with `event` if it has not ended yet.
    @inlinable func finish(_ event: Event) {
        let (continuation, subscription) = self.state.withLock {
            state -> (UnsafeContinuation<FirstValueOutcome<T, E>, Never>?, Disposable?) in
            switch state.phase {
            case .idle(early: nil):
                state.phase = .idle(early: event)
                return (nil, nil)
            case .idle:
                return (nil, nil)
            case .waiting(let continuation):
                state.phase = .finished
                let subscription = state.subscription
                state.subscription = nil
                return (continuation, subscription)
            case .finished:
                return (nil, nil)
            }
        }
        continuation?.resume(returning: event)
        subscription?.dispose()
    }
}
