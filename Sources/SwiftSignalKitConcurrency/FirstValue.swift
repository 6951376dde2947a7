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
    /// error, completion and cancellation.
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
@usableFromInline struct FirstValueWait<T: Sendable, E: Error> {
    @usableFromInline enum Phase {
        /// Not yet waiting; an event here (a value sent while starting, a cancellation) is remembered.
        case idle(early: FirstEvent<T, E>?)
        case waiting(UnsafeContinuation<FirstEvent<T, E>, Never>)
        case finished
    }

    @usableFromInline var phase: Phase = .idle(early: nil)

    @inlinable init() {}

    /// Ends the wait with `event` unless it has already ended (then nothing changes): returns whether
    /// it ended now, and the continuation to resume with `event` once unlocked, if a task was waiting.
    @inlinable mutating func end(
        with event: FirstEvent<T, E>
    ) -> (ended: Bool, continuation: UnsafeContinuation<FirstEvent<T, E>, Never>?) {
        switch self.phase {
        case .idle(early: nil):
            self.phase = .idle(early: event)
            return (true, nil)
        case .idle, .finished:
            return (false, nil)
        case .waiting(let waiting):
            self.phase = .finished
            return (true, waiting)
        }
    }
}

extension FirstEventSubscriber where T: Sendable, E: Error, Extra == FirstValueWait<T, E> {
    /// A waiter subscribed to `signal`. One object is the subscriber, the subscription and the wait's
    /// state (guarded by the subscriber's mutex). It takes only the first event, and ends the
    /// subscription before that event's handler runs. The handlers capture nothing: they are given the
    /// waiter.
    @inlinable @inline(__always) static func started(on signal: Signal<T, E>) -> FirstValueWaiter<T, E> {
        let waiter = FirstValueWaiter<T, E>(
            extra: FirstValueWait(),
            onValue: { waiter, value in FirstValueWaiter<T, E>.of(waiter).record(.value(value)) },
            onError: { waiter, error in FirstValueWaiter<T, E>.of(waiter).record(.failure(error)) },
            onCompletion: { waiter in FirstValueWaiter<T, E>.of(waiter).record(.completed) }
        )
        waiter.subscribe(to: signal)
        return waiter
    }

    /// The waiter a handler is given (see `FirstEventHandlers`), which is always one.
    @inlinable @inline(__always) static func of(_ subscriber: FirstEventHandlers<T, E>) -> FirstValueWaiter<T, E> {
        return unsafeDowncast(subscriber, to: FirstValueWaiter<T, E>.self)
    }

    /// Suspends until the first event or cancellation, once ``takeEarlyOutcome()`` found none.
    @inlinable func waitForOutcome(isolation: isolated (any Actor)?) async -> FirstEvent<T, E> {
        return await withTaskCancellationHandler(
            operation: {
                // Unsafe, not checked: the waiter's state machine resumes it exactly once (the tests
                // race every event against cancellation), and a checked continuation, a resilient
                // type, costs a metadata lookup on every copy.
                await withUnsafeContinuation(isolation: isolation) {
                    (continuation: UnsafeContinuation<FirstEvent<T, E>, Never>) in
                    self.install(continuation)
                }
            },
            onCancel: {
                self.cancel()
            },
            isolation: isolation
        )
    }

    /// Called once `start` has returned: returns the outcome if an event already arrived.
    @inlinable func takeEarlyOutcome() -> FirstEvent<T, E>? {
        // Answered on this thread while starting (a cached value, `single`): that outcome is final, so it
        // can be read without the lock.
        if let wait = self.extraIfAnsweredWhileStarting(), case .idle(let early?) = wait.phase {
            return early
        }
        return self.withExtra { wait in
            guard case .idle(let early) = wait.phase else {
                preconditionFailure("FirstValueWaiter started twice")
            }
            if let early {
                wait.phase = .finished
                return early
            }
            return nil
        }
    }

    /// Installs the continuation, or resumes it at once if an event arrived since ``takeEarlyOutcome()``.
    @inlinable func install(_ continuation: UnsafeContinuation<FirstEvent<T, E>, Never>) {
        let early: FirstEvent<T, E>? = self.withExtra { wait in
            guard case .idle(let early) = wait.phase else {
                preconditionFailure("FirstValueWaiter installed twice")
            }
            if let early {
                wait.phase = .finished
                return early
            }
            wait.phase = .waiting(continuation)
            return nil
        }
        if let early {
            continuation.resume(returning: early)
        }
    }

    /// The first event's handler: the subscription has already ended (see `FirstEventSubscriber`).
    /// Records `event` for ``takeEarlyOutcome()`` or ``install(_:)``, or resumes the waiting task with
    /// it, unless cancellation came first.
    @inlinable func record(_ event: FirstEvent<T, E>) {
        let continuation = self.withExtraForFirstEvent { $0.end(with: event).continuation }
        continuation?.resume(returning: event)
    }

    /// The cancellation handler: ends the wait with `.cancelled` if no event came first, disposing the
    /// subscription in the same lock round trip, then resumes the waiting task.
    @inlinable func cancel() {
        self.giveUp(with: .cancelled)
    }

    /// Ends the wait with `outcome` (cancellation or a deadline) if no event came first, disposing the
    /// subscription in the same lock round trip, then resumes the waiting task.
    @inlinable func giveUp(with outcome: FirstEvent<T, E>) {
        var continuation: UnsafeContinuation<FirstEvent<T, E>, Never>? = nil
        self.dispose(if: { wait in
            let (ended, waiting) = wait.end(with: outcome)
            continuation = waiting
            return ended
        })
        continuation?.resume(returning: outcome)
    }
}
