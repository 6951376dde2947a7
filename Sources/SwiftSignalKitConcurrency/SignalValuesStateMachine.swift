import SwiftSignalKit

/// The state of one iteration over ``SignalValues``, and every decision about it: where a value goes
/// (to the waiting loop, the first `next()`'s hand-off, the buffer, or nowhere), when the iteration
/// ends, and which producers waiting for room under `.bounded(n)` go on. ``SignalValuesStorage`` holds
/// it under its lock and does what the returned action says after unlocking: resuming the loop or the
/// producers, disposing the subscription, releasing values that were dropped.
///
/// The phases, each with its data:
///
/// ```
/// idle --start--> running --source ends (or overflows)--> ending --loop takes the end--> finished
///                    |  \___________ source ends while the loop waits __________________/  ^
///                    \__________________________ loop cancels _____________________________/
/// ```
///
/// Unexpected events follow `CONTRIBUTING.md`: a value or an end that races the loop's cancellation is
/// a benign race (dropped, and handed back for release); a value, an end or a wait before the start
/// cannot happen, since the sequence starts its subscription when it is made, and traps.
@usableFromInline struct SignalValuesStateMachine<T: Sendable, E: Error>: RoomWaitingState {
    @usableFromInline typealias Waiter = UnsafeContinuation<Result<T?, E>, Never>
    @usableFromInline typealias Producers = [UnsafeContinuation<Void, Never>]

    /// How the source's side of the iteration ended, before the loop has been told.
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

    /// The values kept for the loop, oldest first.
    @usableFromInline struct Kept: Sendable {
        /// The value for the first `next()`, sent while the signal was starting; older than anything in
        /// `buffer`, and not counted against a `bufferingNewest`/`bufferingOldest`/`endingWhenFull` limit.
        @usableFromInline var handoff: T?
        @usableFromInline var buffer = ValueRing<T>()

        @inlinable init() {}

        /// How many values wait for the loop, the hand-off included (what a `.bounded(n)` counts).
        @inlinable var count: Int {
            return self.buffer.count + (self.handoff == nil ? 0 : 1)
        }

        /// The oldest value, taken out.
        @inlinable mutating func takeOldest() -> T? {
            if let handoff = self.handoff.take() { return handoff }
            return self.buffer.popFirst()
        }
    }

    /// While the subscription runs.
    @usableFromInline struct Running: Sendable {
        @usableFromInline var kept = Kept()
        /// The loop, waiting in `next()`.
        @usableFromInline var waiter: Waiter?
        /// The first `next()` waits but has not installed its continuation yet (the signal is
        /// starting): the first value goes to the hand-off, not to the buffer.
        @usableFromInline var firstNextPending = true
        /// Nil until the signal's `start` has returned (and after it, for a source that ended inside it).
        @usableFromInline var subscription: Disposable?

        @inlinable init() {}
    }

    @usableFromInline enum Phase: Sendable {
        /// Made; the subscription has not started.
        case idle
        /// The subscription runs.
        case running(Running)
        /// The source ended (or a value overflowed the buffer), and the loop has not been told: it takes
        /// the kept values first, then the end.
        case ending(Kept, Terminal)
        /// Over for the loop: it was told of the end, or it cancelled.
        case finished(SignalValuesEndReason)
        /// Only inside an event, while a case's data is taken out to be changed without a copy.
        case modifying
    }

    @usableFromInline let policy: SignalBufferingPolicy
    @usableFromInline private(set) var phase = Phase.idle
    /// Producers waiting for room under `.bounded` (see ``SignalValuesStorage/waitForRoom()``).
    @usableFromInline var producers = RoomWaiters()
    /// Under `.bounded`: producers whose wait ended with room and whose value has not arrived yet (see
    /// ``grantedRoom()``); each value that arrives takes one. A value an operator drops on its way
    /// (`filter`'s) leaves its credit behind, so the count is capped (``creditLimit``): a producer that
    /// cannot wait, in the same loop as such a waiting one, can send at most that many values beyond the
    /// bound before the loop ends.
    @usableFromInline private(set) var granted = 0
    /// An iterator has taken this subscription (see `StartedValues`).
    @usableFromInline private(set) var isClaimedByIterator = false

    /// The cap on ``granted``: more than producers that wait side by side need (the places of a
    /// concurrent `mapAsync`, the sources of a `merge`), small next to what it bounds.
    @inlinable static var creditLimit: Int { 64 }

    @inlinable init(policy: SignalBufferingPolicy) {
        self.policy = policy
    }

    // MARK: Reading

    /// Why the iteration ended, once the loop has been told (`next()` returned nil or threw) or has
    /// gone; see ``SignalValuesEndReason``.
    @inlinable var endReason: SignalValuesEndReason? {
        if case .finished(let reason) = self.phase { return reason }
        return nil
    }

    /// Whether a producer may send one more value under a bound of `bound`: the loop waits for one (or
    /// its first `next()` is about to), fewer than `bound` values wait for it, or the iteration is over
    /// for the source (a value sent then is dropped, and a producer must not wait for a loop that has
    /// gone).
    @inlinable func hasRoom(bound: Int) -> Bool {
        switch self.phase {
        case .idle:
            return bound > 0
        case .running(let running):
            return running.waiter != nil || running.firstNextPending || running.kept.count < bound
        case .ending, .finished, .modifying:
            return true
        }
    }

    /// Whether the iteration is over for the source: a value sent now is dropped, and the subscription
    /// is being disposed, or the source has ended it. A producer that can wait stops there (see
    /// `SignalDemand.waitForRoom()`).
    @inlinable var isOverForTheSource: Bool {
        switch self.phase {
        case .ending, .finished:
            return true
        case .idle, .running, .modifying:
            return false
        }
    }

    // MARK: Events

    /// What a caller that asked to take or to start the subscription does.
    @usableFromInline enum ClaimAction: Equatable, Sendable {
        /// It takes the subscription (an iterator), or starts it (the sequence): it is the first to ask.
        case take
        /// Nothing: another caller asked first.
        case none
    }

    /// An iterator asks for the subscription made with its sequence: the first one takes it.
    @inlinable mutating func iteratorClaims() -> ClaimAction {
        defer { self.isClaimedByIterator = true }
        return self.isClaimedByIterator ? .none : .take
    }

    /// The sequence is about to start the subscription: the first caller starts it, once, with the
    /// first `next()` counted as waiting.
    @inlinable mutating func startClaimed() -> ClaimAction {
        guard case .idle = self.phase else { return .none }
        self.phase = .running(Running())
        return .take
    }

    @usableFromInline enum SubscribedAction {
        case keep
        /// The iteration ended while the signal started: dispose of the subscription now.
        case dispose(Disposable)
    }

    /// The signal's `start` returned `subscription`.
    @inlinable mutating func subscribed(_ subscription: Disposable) -> SubscribedAction {
        guard case .running(var running) = self.phase else { return .dispose(subscription) }
        self.phase = .modifying
        running.subscription = subscription
        self.phase = .running(running)
        return .keep
    }

    @usableFromInline enum WaitAction {
        /// Resume the loop now with this result.
        case resume(Result<T?, E>, producers: Producers)
        /// The loop's continuation is kept: a value or the end resumes it.
        case suspended(producers: Producers)
    }

    /// The loop waits in `next()` with `continuation`; the producers returned go on (taking a value, or
    /// waiting for one, may have made room).
    @inlinable mutating func loopWaits(_ continuation: Waiter) -> WaitAction {
        switch self.phase {
        case .running(var running):
            self.phase = .modifying
            running.firstNextPending = false
            if let value = running.kept.takeOldest() {
                self.phase = .running(running)
                return .resume(.success(value), producers: self.takeProducersIfRoom())
            }
            if running.waiter != nil {
                self.phase = .running(running)
                misuse("SignalValues.Iterator.next() called while another next() waits")
            }
            running.waiter = continuation
            self.phase = .running(running)
            return .suspended(producers: self.takeProducersIfRoom())
        case .ending(var kept, let terminal):
            self.phase = .modifying
            if let value = kept.takeOldest() {
                self.phase = .ending(kept, terminal)
                return .resume(.success(value), producers: self.takeProducersIfRoom())
            }
            self.phase = .finished(terminal.reason)
            return .resume(terminal.result, producers: self.takeProducersIfRoom())
        case .finished:
            return .resume(.success(nil), producers: self.takeProducersIfRoom())
        case .idle, .modifying:
            preconditionFailure("SignalValuesStateMachine: next() before the subscription started")
        }
    }

    @usableFromInline enum ReceiveAction {
        /// Kept for the loop.
        case none
        /// Resume the waiting loop with the value.
        case resume(Waiter)
        /// A value was dropped (the new one, or the oldest kept): release it after unlocking.
        case drop(T)
        /// The value overflowed the buffer and ends the iteration: release it, dispose of the
        /// subscription (nil if the signal's `start` has not returned), and under `.bounded(n)` say why
        /// in a debug build.
        case endEarly(dropping: T, subscription: Disposable?, overflowedBound: Int?)
    }

    /// The source sent `value`.
    @inlinable mutating func received(_ value: T) -> ReceiveAction {
        guard case .running(var running) = self.phase else {
            if case .idle = self.phase { preconditionFailure("SignalValuesStateMachine: a value before the subscription started") }
            // Ended, or cancelled meanwhile: a benign race.
            return .drop(value)
        }
        self.phase = .modifying
        // Under a bound: whether a producer that waited found room for this value.
        let hadRoom = self.granted > 0
        if hadRoom { self.granted -= 1 }
        if let waiter = running.waiter {
            running.waiter = nil
            self.phase = .running(running)
            return .resume(waiter)
        }
        if running.firstNextPending {
            // Sent while the signal starts: the first `next()` takes it once it waits.
            running.firstNextPending = false
            running.kept.handoff = value
            self.phase = .running(running)
            return .none
        }
        var action = ReceiveAction.none
        switch self.policy {
        case .unbounded:
            running.kept.buffer.append(value)
        case .bounded(let bound):
            // A bound makes producers that can wait do so (`waitForRoom()`). A value that finds the
            // buffer full is kept when a waiting producer found room for it at the same moment as
            // others; any other value would grow the buffer past the bound without limit.
            if !hadRoom && running.kept.count >= bound {
                self.phase = .ending(running.kept, .endedEarly(.producerCouldNotWait))
                return .endEarly(dropping: value, subscription: running.subscription, overflowedBound: bound)
            }
            running.kept.buffer.append(value)
        case .bufferingNewest(let limit):
            if limit == 0 {
                action = .drop(value)
            } else {
                if running.kept.buffer.count >= limit {
                    action = .drop(running.kept.buffer.removeFirst())
                }
                running.kept.buffer.append(value)
            }
        case .bufferingOldest(let limit):
            if running.kept.buffer.count >= limit {
                action = .drop(value)
            } else {
                running.kept.buffer.append(value)
            }
        case .endingWhenFull(let limit):
            if running.kept.buffer.count >= limit {
                // The loop fell behind: it takes what is kept, then its iteration ends; the source
                // stops sending to it now.
                self.phase = .ending(running.kept, .endedEarly(.fellBehind))
                return .endEarly(dropping: value, subscription: running.subscription, overflowedBound: nil)
            }
            running.kept.buffer.append(value)
        }
        self.phase = .running(running)
        return action
    }

    @usableFromInline enum EndAction {
        /// Already over: nothing to do.
        case none
        /// The loop is told later, after the kept values: release the subscription (it ended by itself)
        /// and let the producers go on, since no value will arrive.
        case release(Disposable?, producers: Producers)
        /// The loop waits: resume it with the end, release the subscription, let the producers go on.
        case resume(Waiter, Result<T?, E>, subscription: Disposable?, producers: Producers)
    }

    /// The source ended with `terminal`.
    @inlinable mutating func ended(_ terminal: Terminal) -> EndAction {
        switch self.phase {
        case .running(let running):
            let producers = self.producers.takeAll()
            guard let waiter = running.waiter else {
                self.phase = .ending(running.kept, terminal)
                return .release(running.subscription, producers: producers)
            }
            self.phase = .finished(terminal.reason)
            return .resume(waiter, terminal.result, subscription: running.subscription, producers: producers)
        case .ending, .finished:
            // Overflowed, or cancelled, meanwhile: a benign race.
            return .none
        case .idle, .modifying:
            preconditionFailure("SignalValuesStateMachine: the source ended before the subscription started")
        }
    }

    @usableFromInline enum CancelAction {
        /// Resume the loop (if it waits) with nil, dispose of the subscription (if `start` has
        /// returned), release the kept values, then let the producers go on.
        case stop(Waiter?, Disposable?, Kept, producers: Producers)
        /// The source had ended: release the kept values, let the producers go on.
        case drop(Kept, producers: Producers)
        /// Already over for the loop.
        case none(producers: Producers)
    }

    /// The loop's task was cancelled, or the loop went away.
    @inlinable mutating func cancelled() -> CancelAction {
        let producers = self.producers.takeAll()
        switch self.phase {
        case .running(let running):
            self.phase = .finished(.cancelled)
            return .stop(running.waiter, running.subscription, running.kept, producers: producers)
        case .ending(let kept, _):
            self.phase = .finished(.cancelled)
            return .drop(kept, producers: producers)
        case .idle:
            self.phase = .finished(.cancelled)
            return .none(producers: producers)
        case .finished, .modifying:
            return .none(producers: producers)
        }
    }

    /// With the `.unbounded` policy, moves every buffered value into `batch` (which must be empty), last
    /// first, and answers ``ClaimAction/take``; answers ``ClaimAction/none`` when nothing is buffered,
    /// a hand-off waits (it goes first, by `next()`), the loop was told of the end, or under another
    /// policy, whose limit must hold for values the consumer has not taken one by one.
    @inlinable mutating func takeBuffered(into batch: inout [T]) -> ClaimAction {
        guard case .unbounded = self.policy else { return .none }
        switch self.phase {
        case .running(var running):
            guard running.kept.handoff == nil, !running.kept.buffer.isEmpty else { return .none }
            self.phase = .modifying
            running.kept.buffer.moveAllReversed(into: &batch)
            self.phase = .running(running)
            return .take
        case .ending(var kept, let terminal):
            guard kept.handoff == nil, !kept.buffer.isEmpty else { return .none }
            self.phase = .modifying
            kept.buffer.moveAllReversed(into: &batch)
            self.phase = .ending(kept, terminal)
            return .take
        case .idle, .finished, .modifying:
            return .none
        }
    }

    // MARK: Producers under a bound

    /// Under a bound, the producers to resume once unlocked, when there is room now.
    @inlinable mutating func takeProducersIfRoom() -> Producers {
        guard case .bounded(let bound) = self.policy, !self.producers.isEmpty, self.hasRoom(bound: bound) else {
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
}
