import SwiftSignalKit

/// The state of one iteration over ``SignalValues``: the subscription, the buffer and the waiting
/// consumer. Continuations are resumed and the subscription disposed only after unlocking.
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
        @usableFromInline var buffer: [T] = []
        @usableFromInline var bufferHead = 0
        @usableFromInline var terminal: Terminal?
        @usableFromInline var waiter: Waiter?
        @usableFromInline var subscription: Disposable?

        @inlinable init() {}

        @inlinable var bufferedCount: Int { self.buffer.count - self.bufferHead }

        @inlinable
        mutating func popFirst() -> T {
            let value = self.buffer[self.bufferHead]
            self.bufferHead += 1
            if self.bufferHead == self.buffer.count {
                self.buffer.removeAll(keepingCapacity: true)
                self.bufferHead = 0
            } else if self.bufferHead > 64 && self.bufferHead * 2 > self.buffer.count {
                self.buffer.removeFirst(self.bufferHead)
                self.bufferHead = 0
            }
            return value
        }
    }

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let policy: SignalBufferingPolicy
    @usableFromInline let state = LockedState<State>(State())

    init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
        switch bufferingPolicy {
        case .bufferingNewest(let limit), .bufferingOldest(let limit):
            precondition(limit >= 0, "A buffering limit must be at least 0, got \(limit)")
        case .unbounded:
            break
        }
        self.signal = signal
        self.policy = bufferingPolicy
    }

    @inlinable func next(isolation actor: isolated (any Actor)?) async throws(E) -> T? {
        if Task.isCancelled {
            self.cancel()
            return nil
        }
        self.startIfNeeded()
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Waiter) in
                self.wait(with: continuation)
            }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// With the `.unbounded` policy, moves every buffered value into `batch` (which must be empty) and
    /// returns true; returns false when nothing is buffered, or under a bounded policy, whose limit must
    /// hold for values the consumer has not taken one by one.
    @inlinable func takeBuffered(into batch: inout [T]) -> Bool {
        guard case .unbounded = self.policy else { return false }
        return self.state.withLock { state in
            guard state.bufferedCount > 0, !state.isFinished else { return false }
            if state.bufferHead == 0 {
                swap(&batch, &state.buffer)
            } else {
                batch.append(contentsOf: state.buffer[state.bufferHead...])
                state.buffer.removeAll(keepingCapacity: true)
                state.bufferHead = 0
            }
            return true
        }
    }

    /// Ends the iteration: disposes the subscription and wakes a waiting consumer with nil.
    @inlinable func cancel() {
        let (waiter, subscription, dropped) = self.state.withLock { state -> (Waiter?, Disposable?, [T]) in
            state.isFinished = true
            let waiter = state.waiter
            state.waiter = nil
            let subscription = state.subscription
            state.subscription = nil
            let dropped = state.buffer
            state.buffer = []
            state.bufferHead = 0
            return (waiter, subscription, dropped)
        }
        withExtendedLifetime(dropped) {}
        waiter?.resume(returning: .success(nil))
        subscription?.dispose()
    }

    @inlinable func startIfNeeded() {
        let start = self.state.withLock { state -> Bool in
            if state.isStarted || state.isFinished { return false }
            state.isStarted = true
            return true
        }
        guard start else { return }
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

    @inlinable func wait(with continuation: Waiter) {
        let ready: Result<T?, E>? = self.state.withLock { state in
            if state.bufferedCount > 0 {
                return .success(state.popFirst())
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
            precondition(state.waiter == nil, "SignalValues.Iterator.next() called concurrently")
            state.waiter = continuation
            return nil
        }
        if let ready {
            continuation.resume(returning: ready)
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
                if state.bufferedCount == limit {
                    dropped = state.popFirst()
                }
                state.buffer.append(value)
                return (nil, dropped)
            case .bufferingOldest(let limit):
                if state.bufferedCount >= limit { return (nil, value) }
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
