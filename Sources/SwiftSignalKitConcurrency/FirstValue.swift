import SwiftSignalKit

extension Signal where E: Error, T: Sendable {
    /// Waits for the signal's first value, then disposes the subscription.
    ///
    /// ```swift
    /// let user = try await userSignal.get()
    /// ```
    ///
    /// The signal is started when `get()` is called. Its first event (value, error or completion) ends
    /// the wait, and the subscription is disposed at once, before `get()` returns; later events are
    /// dropped. Exactly one outcome is delivered, to the awaiting task, whatever the order of value,
    /// error, completion and cancellation. Once the signal has sent its first event, that event is the
    /// outcome: a cancellation while the source's disposable runs (a slow one delays the return) does
    /// not replace it.
    ///
    /// Cancellation: if the awaiting task is cancelled (also before `get()` is called), the subscription
    /// is disposed at once and `CancellationError` is thrown; a task cancelled before the call never
    /// starts the signal. The signal's `start` runs on the calling task: a cancellation while it runs is
    /// seen when it returns, so a value the signal sent by then is returned.
    ///
    /// Where the disposal runs: on the thread that sends the first event, inside its `putNext` (or
    /// `putError`, `putCompletion`), as `take(1)` does; and, for a cancellation, on the thread that
    /// cancels, inside `task.cancel()`. So a slow disposable delays that call too, and a producer that
    /// holds a lock while it sends must not take the same lock in the disposable it returned.
    ///
    /// A signal whose error type is not an `Error` can be awaited after `mapError(_:)`.
    /// For `NoError` signals, ``first(isolation:)`` needs no `try`.
    ///
    /// - Parameter isolation: Where the call runs; defaults to the caller's actor, so awaiting from an
    ///   actor does not leave it, and a value the signal has already is returned without suspending.
    /// - Returns: The first value.
    /// - Throws: The signal's error; `CancellationError` when the task is cancelled;
    ///   `SignalError.completedWithoutValue` when the signal completes without a value.
    @inlinable @inline(__always) public func get(isolation: isolated (any Actor)? = #isolation) async throws -> T {
        switch await self.firstOutcome(isolation: isolation) {
        case .value(let value):
            return value
        case .failure(let error):
            throw error
        case .completed:
            throw SignalError.completedWithoutValue
        case .cancelled, .timedOut:
            // `.timedOut` comes only from `first(within:)`.
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
    @inlinable @inline(__always) public func first(isolation: isolated (any Actor)? = #isolation) async throws(E) -> T? {
        switch await self.firstOutcome(isolation: isolation) {
        case .value(let value):
            return value
        case .failure(let error):
            throw error
        case .completed, .cancelled, .timedOut:
            return nil
        }
    }

    /// Runs on the caller's isolation (`#isolation`), so awaiting from an actor does not hop off it.
    ///
    /// Always inlined, like `get()` and `first()`: a call to an async function that takes an isolation
    /// checks for an executor switch on the way in and on the way out, even when the isolation is the
    /// caller's own, and those two checks were a sixth of the cost of an answer that is already there.
    /// Inlined, the compiler sees that no switch is needed. Only the fast path is inlined; the wait is a
    /// call, since it suspends anyway.
    @inlinable @inline(__always) func firstOutcome(isolation: isolated (any Actor)?) async -> FirstEvent<T, E> {
        // A task cancelled before the call never starts the signal.
        if Task.isCancelled { return .cancelled }
        let waiter = FirstValueWaiter<T, E>.started(on: self)
        // Fast path: a signal that answers while starting (a cached value, `single`) needs no suspension.
        // (The first event already ended the subscription.)
        if let outcome = waiter.takeEarlyOutcome() {
            return outcome
        }
        return await waiter.waitForOutcome(isolation: isolation)
    }
}

/// How a wait for the first value ended.
@usableFromInline enum FirstEvent<T: Sendable, E: Error>: Sendable {
    case value(T)
    case failure(E)
    case completed
    case cancelled
    /// The deadline of `first(within:)` passed first.
    case timedOut
}

/// One `get()` or `first()` call: the subscriber, which is also the subscription, with the state of the
/// wait. The first event (value, error, completion or cancellation) ends the subscription at once, so
/// the rest of a signal's events cost nothing; the continuation is resumed exactly once. Neither the
/// generator's disposable nor the continuation is called while the lock is held.
///
/// Inlinable, so that a client's `get()` is specialised for its types: unspecialised, its generic state
/// cost about twenty runtime metadata lookups per call.
@usableFromInline typealias FirstValueWaiter<T: Sendable, E: Error> = FirstEventSubscriber<T, E, FirstValueWait<T, E>>

/// The state of a wait for the first value; read and written under the waiter's lock (or, while the
/// signal starts, by the starting thread alone: see `FirstEventSubscriber.withExtraForFirstEvent`).
///
/// A wait ends in two steps. The outcome is decided in one lock round trip: the signal's first event
/// (admitted and recorded together, see `FirstEventHandlers`), or giving up (a deadline or the task's
/// cancellation), whichever comes first; the loser changes nothing. Then, outside the lock, the
/// subscription is disposed, and only then is the outcome handed to the task. So an event that was
/// admitted is the outcome however long the source's disposable takes, and the call never returns
/// before the subscription has been disposed.
@usableFromInline struct FirstValueWait<T: Sendable, E: Error> {
    @usableFromInline typealias Continuation = UnsafeContinuation<FirstEvent<T, E>, Never>

    @usableFromInline enum Phase {
        /// Nothing has happened, and the task does not wait yet.
        case idle
        /// The task waits, and nothing has happened yet.
        case waiting(Continuation)
        /// The outcome is decided and its subscription is being disposed; the task does not wait yet.
        case ending(FirstEvent<T, E>)
        /// As ``ending(_:)``, and the task waits.
        case endingAwaited(FirstEvent<T, E>, Continuation)
        /// The outcome is decided and the subscription disposed; the task will take it without waiting.
        case ended(FirstEvent<T, E>)
        /// The task has the outcome, or is being resumed with it.
        case finished
    }

    /// What the task does when it asks for the outcome (``take()``) or starts waiting for it
    /// (``install(_:)``).
    @usableFromInline enum TakeAction {
        /// Return this outcome now.
        case returnOutcome(FirstEvent<T, E>)
        /// Wait: the outcome is not decided, or its subscription is still being disposed.
        case wait
    }

    @usableFromInline var phase: Phase = .idle

    @inlinable init() {}

    /// An outcome is decided (the first event, or giving up): returns whether it is this one, in which
    /// case the caller disposes the subscription and then calls ``subscriptionEnded()``. An outcome
    /// decided earlier stands, and nothing changes.
    @inlinable mutating func decide(_ outcome: FirstEvent<T, E>) -> Bool {
        switch self.phase {
        case .idle:
            self.phase = .ending(outcome)
            return true
        case .waiting(let continuation):
            self.phase = .endingAwaited(outcome, continuation)
            return true
        case .ending, .endingAwaited, .ended, .finished:
            return false
        }
    }

    /// The decided outcome's subscription has been disposed: returns the waiting task to resume with
    /// the outcome, if one waits.
    @inlinable mutating func subscriptionEnded() -> (Continuation, FirstEvent<T, E>)? {
        switch self.phase {
        case .ending(let outcome):
            self.phase = .ended(outcome)
            return nil
        case .endingAwaited(let outcome, let continuation):
            self.phase = .finished
            return (continuation, outcome)
        case .idle, .waiting, .ended, .finished:
            preconditionFailure("FirstValueWaiter: a subscription ended with no outcome decided")
        }
    }

    /// The task, once `start` has returned, asks for the outcome.
    @inlinable mutating func take() -> TakeAction {
        switch self.phase {
        case .idle, .ending:
            return .wait
        case .ended(let outcome):
            self.phase = .finished
            return .returnOutcome(outcome)
        case .waiting, .endingAwaited, .finished:
            preconditionFailure("FirstValueWaiter started twice")
        }
    }

    /// The task waits with `continuation`: returns `.returnOutcome` when the outcome is ready, and the
    /// caller resumes the continuation with it once unlocked.
    @inlinable mutating func install(_ continuation: Continuation) -> TakeAction {
        switch self.phase {
        case .idle:
            self.phase = .waiting(continuation)
            return .wait
        case .ending(let outcome):
            self.phase = .endingAwaited(outcome, continuation)
            return .wait
        case .ended(let outcome):
            self.phase = .finished
            return .returnOutcome(outcome)
        case .waiting, .endingAwaited, .finished:
            preconditionFailure("FirstValueWaiter installed twice")
        }
    }
}

extension FirstEvent {
    /// The outcome a signal's first event gives.
    @inlinable init(_ event: SignalEvent<T, E>) {
        switch event {
        case .Next(let value): self = .value(value)
        case .Error(let error): self = .failure(error)
        case .Completion: self = .completed
        }
    }
}

extension FirstEventSubscriber where T: Sendable, E: Error, Extra == FirstValueWait<T, E> {
    /// A waiter subscribed to `signal`. One object is the subscriber, the subscription and the wait's
    /// state (guarded by the subscriber's mutex). It takes only the first event, which decides the
    /// outcome in the round trip that admits it. The closures capture nothing.
    @inlinable @inline(__always) static func started(on signal: Signal<T, E>) -> FirstValueWaiter<T, E> {
        let waiter = FirstValueWaiter<T, E>(
            extra: FirstValueWait(),
            onEvent: { wait, event in
                // Nothing else can have decided: giving up disposes in the round trip that decides.
                _ = wait.decide(FirstEvent(event))
            },
            onEnded: { waiter in
                if let resumption = waiter.withExtraForFirstEvent({ $0.subscriptionEnded() }) {
                    resumption.0.resume(returning: resumption.1)
                }
            }
        )
        waiter.subscribe(to: signal)
        return waiter
    }

    /// Suspends until the outcome is decided and its subscription disposed, once
    /// ``takeEarlyOutcome()`` found none.
    ///
    /// `whileWaiting` runs inside the cancellation handler's scope, before the task suspends, and what
    /// it returns is disposed when the wait ends: `first(within:)` arms its deadline there, so that a
    /// cancellation is recorded when it happens, before or after the deadline. A task already cancelled
    /// is given up before `whileWaiting` runs.
    @inlinable func waitForOutcome(
        isolation: isolated (any Actor)?, whileWaiting: () -> Disposable? = { nil }
    ) async -> FirstEvent<T, E> {
        return await withTaskCancellationHandler(
            operation: {
                let armed = whileWaiting()
                // Unsafe, not checked: the waiter's state machine resumes it exactly once (the tests
                // race every event against cancellation), and a checked continuation, a resilient
                // type, costs a metadata lookup on every copy.
                let outcome = await withUnsafeContinuation(isolation: isolation) {
                    (continuation: FirstValueWait<T, E>.Continuation) in
                    self.install(continuation)
                }
                armed?.dispose()
                return outcome
            },
            onCancel: {
                self.cancel()
            },
            isolation: isolation
        )
    }

    /// Called once `start` has returned: returns the outcome if it is decided and its subscription
    /// disposed; nil if the task must wait for it.
    @inlinable func takeEarlyOutcome() -> FirstEvent<T, E>? {
        // Answered on this thread while starting (a cached value, `single`): that outcome is final, so it
        // can be read without the lock.
        if let wait = self.extraIfAnsweredWhileStarting(), case .ended(let outcome) = wait.phase {
            return outcome
        }
        switch self.withExtra({ $0.take() }) {
        case .returnOutcome(let outcome):
            return outcome
        case .wait:
            return nil
        }
    }

    /// Installs the continuation, or resumes it at once if the outcome is ready.
    @inlinable func install(_ continuation: FirstValueWait<T, E>.Continuation) {
        if case .returnOutcome(let outcome) = self.withExtra({ $0.install(continuation) }) {
            continuation.resume(returning: outcome)
        }
    }

    /// The cancellation handler: ends the wait with `.cancelled` unless an outcome was decided first.
    @inlinable func cancel() {
        self.giveUp(with: .cancelled)
    }

    /// Ends the wait with `outcome` (cancellation or a deadline) unless an outcome was decided first (an
    /// admitted event wins, even while its subscription is still being disposed): decides it and
    /// disposes the subscription in one lock round trip, then hands the outcome to the task once the
    /// disposal has returned.
    @inlinable func giveUp(with outcome: FirstEvent<T, E>) {
        var decided = false
        self.dispose(if: { wait in
            decided = wait.decide(outcome)
            return decided
        })
        guard decided else { return }
        if let resumption = self.withExtra({ $0.subscriptionEnded() }) {
            resumption.0.resume(returning: resumption.1)
        }
    }
}
