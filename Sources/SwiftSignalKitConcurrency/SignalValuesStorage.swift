import SwiftSignalKit

/// One iteration over ``SignalValues``: the subscription, and the lock around its
/// ``SignalValuesStateMachine``, which decides; this class only locks to get the machine's action and
/// carries it out after unlocking (continuations resumed, the subscription disposed, dropped values
/// released).
///
/// The sequence starts the subscription when it is made (``startNow()``), declaring first that the
/// consumer waits, so the first value sent while the signal starts is kept for the first `next()`
/// (``SignalValuesStateMachine/Kept/handoff``), whatever the buffer's size (even 0).
///
/// Under `.bounded(n)` it is also the consumer's ``SignalDemand``: producers that can wait suspend in
/// ``waitForRoom()`` while `n` values wait for the loop, and the loop's taking a value (or waiting in
/// `next()`) resumes them. Each wait that ends with room is counted
/// (``SignalValuesStateMachine/granted``), so that a value finding the buffer full is told apart: a
/// waiting producer's (several found room at the same moment) is kept, any other ends the iteration
/// (``SignalValuesEndReason/producerCouldNotWait``).
@usableFromInline final class SignalValuesStorage<T: Sendable, E: Error>: SignalDemand, Sendable {
    @usableFromInline typealias Machine = SignalValuesStateMachine<T, E>
    @usableFromInline typealias Waiter = Machine.Waiter

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let policy: SignalBufferingPolicy
    @usableFromInline let state: LockedState<Machine>

    @inlinable init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
        self.signal = signal
        self.policy = bufferingPolicy
        self.state = LockedState(Machine(policy: bufferingPolicy))
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

    /// See ``SignalValuesStateMachine/takeBuffered(into:)``.
    @inlinable func takeBuffered(into batch: inout [T]) -> Bool {
        guard case .unbounded = self.policy else { return false }
        return self.state.withLock { $0.takeBuffered(into: &batch) } == .take
    }

    /// True for the first caller only: the iterator that takes the subscription made with its sequence.
    func claimForIterator() -> Bool {
        return self.state.withLock { $0.iteratorClaims() } == .take
    }

    /// See `SignalValues.Iterator.endReason`.
    var endReason: SignalValuesEndReason? {
        return self.state.withLock { $0.endReason }
    }

    @inlinable func cancel() {
        switch self.state.withLock({ $0.cancelled() }) {
        case .stop(let waiter, let subscription, let kept, let producers):
            withExtendedLifetime(kept) {}
            waiter?.resume(returning: .success(nil))
            subscription?.dispose()
            // Nobody will take what they send: they go on, and their values are dropped. After the
            // disposal, so that a producer task it cancelled sees its cancellation when it wakes.
            RoomWaiters.resume(producers)
        case .drop(let kept, let producers):
            withExtendedLifetime(kept) {}
            RoomWaiters.resume(producers)
        case .none(let producers):
            RoomWaiters.resume(producers)
        }
    }

    /// Starts the subscription before any `next()`, for a sequence that subscribes when it is made. The
    /// first value is kept for the first `next()` as if it were already waiting, so the value a
    /// replaying source sends while it starts is not lost to a buffer of 0; later values are buffered
    /// under the policy.
    /// Subscribes, unless the task is cancelled. `asLaterIterator`: for a later loop over the same
    /// sequence (its debug diagnostic says so).
    @inlinable func startNow(asLaterIterator: Bool = false) {
        // Made in a task that is already cancelled: no subscription, as with every bridge (a cold
        // signal's generator would otherwise run, a request made for a loop that ends at once).
        if Task.isCancelled {
            self.cancel()
            return
        }
        guard self.state.withLock({ $0.startClaimed() }) == .take else { return }
        #if DEBUG
            let subscription = SequenceSubscription.marking(asLaterIterator: asLaterIterator) { self.subscribe() }
        #else
            let subscription = self.subscribe()
        #endif
        if case .dispose(let subscription) = self.state.withLock({ $0.subscribed(subscription) }) {
            subscription.dispose()
        }
    }

    /// Subscribes. Under `.bounded` and `.endingWhenFull` the subscriber knows this storage as its
    /// consumer (see `SignalDemand`): a value can end the iteration while the signal still starts, and a
    /// loop inside the generator (`restart` of a synchronous signal) then learns it by asking, since the
    /// subscription's disposable does not exist yet. Under the other policies nothing ends the iteration
    /// before `start` returns.
    @inlinable func subscribe() -> Disposable {
        switch self.policy {
        case .bounded, .endingWhenFull:
            return self.signal.start(
                next: { value in self.received(value) },
                error: { error in self.ended(.failed(error)) },
                completed: { self.ended(.completed) },
                pacedBy: self
            )
        case .unbounded, .bufferingNewest, .bufferingOldest:
            return self.signal.start(
                next: { value in self.received(value) },
                error: { error in self.ended(.failed(error)) },
                completed: { self.ended(.completed) }
            )
        }
    }

    /// Hands the consumer what is ready, or registers its wait.
    @inlinable func wait(with continuation: Waiter) {
        switch self.state.withLock({ $0.loopWaits(continuation) }) {
        case .resume(let result, let producers):
            continuation.resume(returning: result)
            RoomWaiters.resume(producers)
        case .suspended(let producers):
            RoomWaiters.resume(producers)
        }
    }

    @inlinable func received(_ value: T) {
        switch self.state.withLock({ $0.received(value) }) {
        case .none:
            break
        case .resume(let waiter):
            waiter.resume(returning: .success(value))
        case .drop(let dropped):
            withExtendedLifetime(dropped) {}
        case .endEarly(let dropped, let subscription, let overflowedBound):
            withExtendedLifetime(dropped) {}
            subscription?.dispose()
            if let overflowedBound { Self.reportOverflow(bound: overflowedBound) }
        }
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

    @inlinable func ended(_ terminal: Machine.Terminal) {
        switch self.state.withLock({ $0.ended(terminal) }) {
        case .none:
            break
        case .release(let subscription, let producers):
            // The subscription ended by itself; it is only released here, after unlocking.
            withExtendedLifetime(subscription) {}
            // No more values will arrive: whoever still waits for room goes on.
            RoomWaiters.resume(producers)
        case .resume(let waiter, let result, let subscription, let producers):
            withExtendedLifetime(subscription) {}
            waiter.resume(returning: result)
            RoomWaiters.resume(producers)
        }
    }

    /// Producers wait for room under `.bounded` only; under `.endingWhenFull` the storage is the
    /// subscriber's consumer only to be asked whether the iteration is over.
    @usableFromInline package var pacesProducers: Bool {
        if case .bounded = self.policy { return true }
        return false
    }

    /// Whether the iteration is over for the source (see `SignalDemand.consumerHasGone`).
    @usableFromInline package var consumerHasGone: Bool {
        return self.state.withLock { $0.isOverForTheSource }
    }

    /// Suspends a producer that can wait until the loop has room for one more value (see
    /// `SignalBufferingPolicy.bounded`); returns at once without a bound, when there is room, when the
    /// iteration is over (answering false), or when the calling task is cancelled (which also ends a wait
    /// under way).
    @usableFromInline package func waitForRoom() async -> Bool {
        guard case .bounded(let bound) = self.policy else { return true }
        return await self.state.waitForRoom(hasRoom: { $0.hasRoom(bound: bound) }, hasGone: { $0.isOverForTheSource })
    }
}
