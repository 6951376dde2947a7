import SwiftSignalKit

/// The state of one iteration over ``SignalValues``: the subscription, the buffer and the waiting
/// consumer. Continuations are resumed, the subscription disposed and buffered values released only
/// after unlocking.
///
/// The first `next()` registers its wait before it starts the subscription, so a value sent while the
/// signal starts goes straight to the waiting consumer, whatever the buffer's size (even 0).
@usableFromInline final class SignalValuesStorage<T: Sendable, E: Error>: Sendable {
    @usableFromInline typealias Waiter = UnsafeContinuation<Result<T?, E>, Never>

    @usableFromInline enum Terminal: Sendable {
        case completed
        case failed(E)
    }

    @usableFromInline struct State: Sendable {
        @usableFromInline var isStarted = false
        /// Iteration over: a terminal event was handed out, or the consumer cancelled or went away.
        @usableFromInline var isFinished = false
        @usableFromInline var buffer = ValueRing<T>()
        @usableFromInline var terminal: Terminal?
        @usableFromInline var waiter: Waiter?
        @usableFromInline var subscription: Disposable?

        @inlinable init() {}
    }

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let policy: SignalBufferingPolicy
    @usableFromInline let state = LockedState<State>(State())

    init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
        self.signal = signal
        self.policy = bufferingPolicy
    }

    @inlinable func next(isolation actor: isolated (any Actor)?) async throws(E) -> T? {
        if Task.isCancelled {
            self.cancel()
            return nil
        }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Waiter) in
                self.wait(with: continuation)
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// With the `.unbounded` policy, moves every buffered value into `batch` (which must be empty), last
    /// first, and returns true; returns false when nothing is buffered, or under a bounded policy, whose limit must
    /// hold for values the consumer has not taken one by one.
    @inlinable func takeBuffered(into batch: inout [T]) -> Bool {
        guard case .unbounded = self.policy else { return false }
        return self.state.withLock { state in
            guard !state.buffer.isEmpty, !state.isFinished else { return false }
            state.buffer.moveAllReversed(into: &batch)
            return true
        }
    }

    /// Ends the iteration: disposes the subscription and wakes a waiting consumer with nil.
    @inlinable func cancel() {
        let (waiter, subscription, dropped) = self.state.withLock { state -> (Waiter?, Disposable?, [T?]) in
            state.isFinished = true
            let waiter = state.waiter
            state.waiter = nil
            let subscription = state.subscription
            state.subscription = nil
            return (waiter, subscription, state.buffer.removeAll())
        }
        withExtendedLifetime(dropped) {}
        waiter?.resume(returning: .success(nil))
        subscription?.dispose()
    }

    /// Starts the subscription; called once, by the first `next()` after its wait is registered.
    @inlinable func start() {
        let subscription = self.signal.start(
            next: { value in self.received(value) },
            error: { error in self.ended(.failed(error)) },
            completed: { self.ended(.completed) }
        )
        let disposeNow = self.state.withLock { state -> Bool in
            if state.isFinished || state.terminal != nil { return true }
            state.subscription = subscription
            return false
        }
        if disposeNow {
            subscription.dispose()
        }
    }

    /// Hands the consumer what is ready, or registers its wait, and then, on the first call, starts the
    /// subscription: values sent while the signal starts find the consumer already waiting.
    @inlinable func wait(with continuation: Waiter) {
        var startNow = false
        let ready: Result<T?, E>? = self.state.withLock { state in
            if !state.buffer.isEmpty {
                return .success(state.buffer.removeFirst())
            }
            if state.isFinished {
                return .success(nil)
            }
            if let terminal = state.terminal {
                state.isFinished = true
                switch terminal {
                case .completed: return .success(nil)
                case .failed(let error): return .failure(error)
                }
            }
            if state.waiter != nil { misuse("SignalValues.Iterator.next() called while another next() waits") }
            state.waiter = continuation
            if !state.isStarted {
                state.isStarted = true
                startNow = true
            }
            return nil
        }
        if let ready {
            continuation.resume(returning: ready)
        } else if startNow {
            self.start()
        }
    }

    @inlinable func received(_ value: T) {
        let (waiter, dropped) = self.state.withLock { state -> (Waiter?, T?) in
            if state.isFinished { return (nil, value) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, nil)
            }
            switch self.policy {
            case .unbounded:
                state.buffer.append(value)
                return (nil, nil)
            case .bufferingNewest(let limit):
                if limit == 0 { return (nil, value) }
                var dropped: T?
                if state.buffer.count >= limit {
                    dropped = state.buffer.removeFirst()
                }
                state.buffer.append(value)
                return (nil, dropped)
            case .bufferingOldest(let limit):
                if state.buffer.count >= limit { return (nil, value) }
                state.buffer.append(value)
                return (nil, nil)
            }
        }
        withExtendedLifetime(dropped) {}
        waiter?.resume(returning: .success(value))
    }

    @inlinable func ended(_ terminal: Terminal) {
        let (waiter, subscription) = self.state.withLock { state -> (Waiter?, Disposable?) in
            if state.isFinished || state.terminal != nil { return (nil, nil) }
            // The subscription ended by itself; it is only released here, after unlocking.
            let subscription = state.subscription
            state.subscription = nil
            guard let waiter = state.waiter else {
                state.terminal = terminal
                return (nil, subscription)
            }
            state.waiter = nil
            state.isFinished = true
            return (waiter, subscription)
        }
        withExtendedLifetime(subscription) {}
        guard let waiter else { return }
        switch terminal {
        case .completed: waiter.resume(returning: .success(nil))
        case .failed(let error): waiter.resume(returning: .failure(error))
        }
    }
}
