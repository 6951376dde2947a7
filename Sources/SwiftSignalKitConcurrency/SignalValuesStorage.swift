import SwiftSignalKit

/// The state of one iteration over ``SignalValues``: the subscription, the buffer and the waiting
/// consumer. Continuations are resumed, the subscription disposed and buffered values released only
/// after unlocking.
///
/// The sequence starts the subscription when it is made (``startNow()``), declaring first that the
/// consumer waits, so the first value sent while the signal starts is kept for the first `next()`
/// (``State/handoff``), whatever the buffer's size (even 0).
///
/// Under `.bounded(n)` it is also the consumer's ``SignalDemand``: producers that can wait suspend in
/// ``waitForRoom()`` while `n` values wait for the loop, and the loop's taking a value (or waiting in
/// `next()`) resumes them. Each wait that ends with room is counted (``State/granted``), so that a value
/// finding the buffer full is told apart: a waiting producer's (several found room at the same moment)
/// is kept, any other ends the iteration (``SignalValuesEndReason/producerCouldNotWait``).
@usableFromInline final class SignalValuesStorage<T: Sendable, E: Error>: SignalDemand, Sendable {
    @usableFromInline typealias Waiter = UnsafeContinuation<Result<T?, E>, Never>

    @usableFromInline enum Terminal: Sendable {
        case completed
        case failed(E)
        /// A value found the buffer full (`.endingWhenFull`, or `.bounded` with a producer that cannot
        /// wait): the loop takes what is kept, then ends for this reason, as after completion.
        case endedEarly(SignalValuesEndReason)

        /// Why the loop ended, once it has been told.
        @inlinable var reason: SignalValuesEndReason {
            switch self {
            case .completed: return .completed
            case .failed: return .failed
            case .endedEarly(let reason): return reason
            }
        }

        /// What the loop's `next()` gets: nil, or the error.
        @inlinable var result: Result<T?, E> {
            if case .failed(let error) = self { return .failure(error) }
            return .success(nil)
        }
    }

    @usableFromInline struct State: RoomWaitingState {
        @usableFromInline var isStarted = false
        /// Iteration over: a terminal event was handed out, or the consumer cancelled or went away.
        @usableFromInline var isFinished = false
        @usableFromInline var buffer = ValueRing<T>()
        @usableFromInline var terminal: Terminal?
        @usableFromInline var waiter: Waiter?
        /// The first `next()` is waiting but has not installed its continuation yet (the signal is
        /// starting): the first value goes to `handoff`, not to the buffer.
        @usableFromInline var firstNextPending = false
        /// The value for that first `next()`; older than anything in `buffer`.
        @usableFromInline var handoff: T?
        @usableFromInline var subscription: Disposable?
        /// Producers waiting for room under `.bounded` (see ``waitForRoom()``).
        @usableFromInline var producers = RoomWaiters()
        /// Why the iteration ended, once the loop has been told (`next()` returned nil or threw) or has
        /// gone; see ``SignalValuesEndReason``.
        @usableFromInline var endReason: SignalValuesEndReason?
        /// Under `.bounded`: producers whose wait ended with room and whose value has not arrived yet
        /// (see ``grantedRoom()``); each value that arrives takes one. A value an operator drops on its
        /// way (`filter`'s) leaves its credit behind, so the count is capped (``creditLimit``): a
        /// producer that cannot wait, in the same loop as such a waiting one, can send at most that many
        /// values beyond the bound before the loop ends.
        @usableFromInline var granted = 0
        /// The cap on ``granted``: more than producers that wait side by side need (the places of a
        /// concurrent `mapAsync`, the sources of a `merge`), small next to what it bounds.
        @usableFromInline static var creditLimit: Int { 64 }
        /// An iterator has taken this subscription (see `StartedValues`).
        @usableFromInline var isClaimedByIterator = false

        @inlinable init() {}

        /// Whether a producer may send one more value under a bound of `bound`: the loop waits for one
        /// (or its first `next()` is about to), fewer than `bound` values wait for it, or the iteration is
        /// over (a value sent then is dropped, and a producer must not wait for a loop that has gone).
        @inlinable func hasRoom(bound: Int) -> Bool {
            if self.isFinished || self.terminal != nil || self.waiter != nil || self.firstNextPending {
                return true
            }
            return self.buffer.count + (self.handoff == nil ? 0 : 1) < bound
        }

        /// Under a bound, the producers to resume once unlocked, when there is room now.
        @inlinable mutating func takeProducersIfRoom(policy: SignalBufferingPolicy) -> [UnsafeContinuation<Void, Never>] {
            guard case .bounded(let bound) = policy, !self.producers.isEmpty, self.hasRoom(bound: bound) else {
                return []
            }
            let resumed = self.producers.takeAll()
            self.granted = Swift.min(self.granted + resumed.count, Self.creditLimit)
            return resumed
        }

        /// A producer found room without waiting (see `RoomWaitingState.grantedRoom()`).
        @inlinable mutating func grantedRoom() {
            self.granted = Swift.min(self.granted + 1, Self.creditLimit)
        }

        /// The iteration is over for the loop: records why, unless a reason is already recorded.
        @inlinable mutating func finish(_ reason: SignalValuesEndReason) {
            self.isFinished = true
            if self.endReason == nil { self.endReason = reason }
        }
    }

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let policy: SignalBufferingPolicy
    @usableFromInline let state = LockedState<State>(State())

    @inlinable init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
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
            guard !state.buffer.isEmpty, !state.isFinished, state.handoff == nil else { return false }
            state.buffer.moveAllReversed(into: &batch)
            return true
        }
    }

    /// True for the first caller only: the iterator that takes the subscription made with its sequence.
    func claimForIterator() -> Bool {
        return self.state.withLock { state in
            defer { state.isClaimedByIterator = true }
            return !state.isClaimedByIterator
        }
    }

    /// See `SignalValues.Iterator.endReason`.
    var endReason: SignalValuesEndReason? {
        return self.state.withLock { $0.endReason }
    }

    @inlinable func cancel() {
        let (waiter, subscription, dropped, handoff, producers) = self.state.withLock {
            state -> (Waiter?, Disposable?, [T?], T?, [UnsafeContinuation<Void, Never>]) in
            state.finish(.cancelled)
            state.firstNextPending = false
            let waiter = state.waiter
            state.waiter = nil
            let subscription = state.subscription
            state.subscription = nil
            let producers = state.producers.takeAll()
            return (waiter, subscription, state.buffer.removeAll(), state.handoff.take(), producers)
        }
        withExtendedLifetime((dropped, handoff)) {}
        waiter?.resume(returning: .success(nil))
        subscription?.dispose()
        // Nobody will take what they send: they go on, and their values are dropped. After the
        // disposal, so that a producer task it cancelled sees its cancellation when it wakes.
        RoomWaiters.resume(producers)
    }

    /// Whether the subscription is still to start: then it marks the first `next()` as waiting.
    @inlinable static func claimStart(_ state: inout State) -> Bool {
        if state.isStarted || state.isFinished { return false }
        state.isStarted = true
        state.firstNextPending = true
        return true
    }

    /// Starts the subscription before any `next()`, for a sequence that subscribes when it is made. The
    /// first value is kept for the first `next()` as if it were already waiting (``State/handoff``), so
    /// the value a replaying source sends while it starts is not lost to a buffer of 0; later values are
    /// buffered under the policy.
    @inlinable func startNow() {
        if self.state.withLock({ Self.claimStart(&$0) }) {
            self.start()
        }
    }

    /// Starts the subscription; called once, by ``startNow()`` (see ``claimStart(_:)``).
    @inlinable func start() {
        #if DEBUG
            let subscription = SequenceSubscription.marking { self.subscribe() }
        #else
            let subscription = self.subscribe()
        #endif
        let disposeNow = self.state.withLock { state -> Bool in
            if state.isFinished || state.terminal != nil { return true }
            state.subscription = subscription
            return false
        }
        if disposeNow {
            subscription.dispose()
        }
    }

    @inlinable func subscribe() -> Disposable {
        let subscription: Disposable
        if case .bounded = self.policy {
            subscription = self.signal.start(
                next: { value in self.received(value) },
                error: { error in self.ended(.failed(error)) },
                completed: { self.ended(.completed) },
                pacedBy: self
            )
        } else {
            subscription = self.signal.start(
                next: { value in self.received(value) },
                error: { error in self.ended(.failed(error)) },
                completed: { self.ended(.completed) }
            )
        }
        return subscription
    }

    /// Hands the consumer what is ready, or registers its wait.
    @inlinable func wait(with continuation: Waiter) {
        var producers: [UnsafeContinuation<Void, Never>] = []
        // Taking a value, or waiting for one, may have made room (see `State.hasRoom(bound:)`).
        defer { RoomWaiters.resume(producers) }
        let ready: Result<T?, E>? = self.state.withLock { state in
            defer { producers = state.takeProducersIfRoom(policy: self.policy) }
            state.firstNextPending = false
            if let handoff = state.handoff.take() {
                return .success(handoff)
            }
            if !state.buffer.isEmpty {
                return .success(state.buffer.removeFirst())
            }
            if state.isFinished {
                return .success(nil)
            }
            if let terminal = state.terminal {
                state.finish(terminal.reason)
                return terminal.result
            }
            if state.waiter != nil { misuse("SignalValues.Iterator.next() called while another next() waits") }
            state.waiter = continuation
            return nil
        }
        if let ready {
            continuation.resume(returning: ready)
        }
    }

    @inlinable func received(_ value: T) {
        var ended: Disposable?
        var overflowed: Int?
        let (waiter, dropped) = self.state.withLock { state -> (Waiter?, T?) in
            if state.isFinished || state.terminal != nil { return (nil, value) }
            // Under a bound: whether a producer that waited found room for this value.
            let hadRoom = state.granted > 0
            if hadRoom { state.granted -= 1 }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, nil)
            }
            if state.firstNextPending {
                // Sent while the signal starts: the first `next()` takes it once it waits.
                state.firstNextPending = false
                state.handoff = value
                return (nil, nil)
            }
            switch self.policy {
            case .unbounded:
                state.buffer.append(value)
                return (nil, nil)
            case .bounded(let bound):
                // A bound makes producers that can wait do so (`waitForRoom()`). A value that finds the
                // buffer full is kept when a waiting producer found room for it at the same moment as
                // others; any other value would grow the buffer past the bound without limit.
                let waiting = state.buffer.count + (state.handoff == nil ? 0 : 1)
                if !hadRoom && waiting >= bound {
                    state.terminal = .endedEarly(.producerCouldNotWait)
                    ended = state.subscription
                    state.subscription = nil
                    overflowed = bound
                    return (nil, value)
                }
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
            case .endingWhenFull(let limit):
                if state.buffer.count < limit {
                    state.buffer.append(value)
                    return (nil, nil)
                }
                // The loop fell behind: it takes what is kept, then its iteration ends; the source
                // stops sending to it now.
                state.terminal = .endedEarly(.fellBehind)
                ended = state.subscription
                state.subscription = nil
                return (nil, value)
            }
        }
        withExtendedLifetime(dropped) {}
        ended?.dispose()
        waiter?.resume(returning: .success(value))
        if let overflowed { Self.reportOverflow(bound: overflowed) }
    }

    /// Says, in a debug build, why a `.bounded` loop is about to end early: the policy's usual reading
    /// ("producers wait") does not hold for the producer in question, and the fix is in its code. A
    /// release build says nothing (the loop's `endReason` does).
    @usableFromInline static func reportOverflow(bound: Int) {
        #if DEBUG
            debugDiagnostic(
                "values(bufferingPolicy: .bounded(\(bound))): a value arrived with \(bound) waiting, from a producer that "
                    + "cannot wait (a synchronous putNext, a generator's send(value), or a producer above an operator "
                    + "where pacing stops: deliverOn, delay, combineLatest, share, ...). The iteration ends with endReason "
                    + ".producerCouldNotWait instead of growing past the bound. Keep every value with .unbounded, "
                    + "end a slow client on purpose with .endingWhenFull(n), or make the producer wait "
                    + "(Signal(sequence), send.waitingForRoom(value)); see the Flow control article."
            )
        #endif
    }

    @inlinable func ended(_ terminal: Terminal) {
        var producers: [UnsafeContinuation<Void, Never>] = []
        // No more values will arrive: whoever still waits for room goes on.
        defer { RoomWaiters.resume(producers) }
        let (waiter, subscription) = self.state.withLock { state -> (Waiter?, Disposable?) in
            if state.isFinished || state.terminal != nil { return (nil, nil) }
            producers = state.producers.takeAll()
            // The subscription ended by itself; it is only released here, after unlocking.
            let subscription = state.subscription
            state.subscription = nil
            guard let waiter = state.waiter else {
                state.terminal = terminal
                return (nil, subscription)
            }
            state.waiter = nil
            state.finish(terminal.reason)
            return (waiter, subscription)
        }
        withExtendedLifetime(subscription) {}
        guard let waiter else { return }
        waiter.resume(returning: terminal.result)
    }

    /// Suspends a producer that can wait until the loop has room for one more value (see
    /// `SignalBufferingPolicy.bounded`); returns at once without a bound, when there is room, when the
    /// iteration is over, or when the calling task is cancelled (which also ends a wait under way).
    @usableFromInline package func waitForRoom() async {
        guard case .bounded(let bound) = self.policy else { return }
        await self.state.waitForRoom { $0.hasRoom(bound: bound) }
    }
}
