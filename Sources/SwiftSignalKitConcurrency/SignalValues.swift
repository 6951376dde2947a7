import SwiftSignalKit

/// How many values an iteration over ``SignalValues`` keeps while the loop body is busy.
public enum SignalBufferingPolicy: Sendable, Equatable {
    /// Keep every value. Memory grows if the producer outpaces the consumer.
    case unbounded
    /// Keep at most this many values, dropping the oldest when full; besides them, the first value the
    /// subscription gets is kept for the loop's first `next()` (see `Signal.values(bufferingPolicy:)`),
    /// so `.bufferingNewest(1)` hands a loop that starts late the first value and then the latest. A
    /// negative limit stops the program with a message naming it.
    case bufferingNewest(Int)
    /// Keep at most this many values, dropping new ones when full; besides them, the first value the
    /// subscription gets is kept for the loop's first `next()`, as under `.bufferingNewest`. A negative
    /// limit stops the program with a message naming it.
    case bufferingOldest(Int)
    /// Never keep more than this many values: producers that can wait do so while this many values
    /// wait for the loop (an async generator's `await send.waitingForRoom(value)`, and `Signal(sequence)`,
    /// which then pulls its next element only when there is room), and a value from a producer that
    /// cannot wait, arriving when the buffer is full, ends the iteration.
    ///
    /// - The bound reaches the producer through the operators that hand each value on synchronously
    ///   (`map`, `filter`, `take`, `skip`, `distinctUntilChanged`, `beforeNext`, ...) and through
    ///   `mapAsync`, which holds its results until there is room. Operators that hold values back, hop
    ///   threads, combine or share (`deliverOn`, `delay`, `debounce`, `combineLatest`, `zip`, `share`,
    ///   the outer signal of `mapToSignal`) are where it stops: the producers above them do not wait.
    ///   The Flow control article lists every operator.
    /// - A producer that cannot wait (a synchronous `putNext`, the generator's `send(value)`, a producer
    ///   above an operator where pacing stops) is never blocked. Its values are kept while there is room;
    ///   one that finds the buffer full ends the iteration as `.endingWhenFull` does: the loop takes the
    ///   values kept, then ends, and ``SignalValues/endReason`` is
    ///   ``SignalValuesEndReason/producerCouldNotWait``. A debug build also prints why. To keep every
    ///   value of such a producer, use `.unbounded`.
    /// - The first value counts toward the bound (with a bound of 0 it is kept all the same, for the
    ///   loop's first `next()`). With one waiting producer, the buffer never holds more than the bound; producers that wait side
    ///   by side may each find room at the same moment, and each such value is kept (up to 64 at once;
    ///   the Flow control article says where that leaves room for a producer that cannot wait). 0 is a rendezvous: a
    ///   waiting producer sends only while the loop waits in `next()`. A negative bound stops the
    ///   program with a message naming it; `Int.max` never makes a producer wait.
    case bounded(Int)
    /// Keep at most this many values (besides the first value, kept for the loop's first `next()` as
    /// under `.bufferingNewest`, so a loop that starts late takes up to one more); when one more
    /// arrives, end this iteration: the loop still takes
    /// the values kept, then `next()` returns nil, and ``SignalValues/endReason`` is
    /// ``SignalValuesEndReason/fellBehind``, telling this end from the source's completion. The
    /// subscription is disposed at once, so the source and its other consumers go on, and the value that
    /// found the buffer full is dropped.
    ///
    /// The policy for one slow client of a shared feed: the client reconnects and resumes from the last
    /// value it took, instead of the server keeping ever more for it. 0 ends the iteration at the first
    /// value that arrives while the loop is not waiting in `next()`; a negative limit stops the program
    /// with a message naming it.
    case endingWhenFull(Int)
}

/// Why an iteration over ``SignalValues`` ended: read it after the loop from the sequence
/// (``SignalValues/endReason``, for its first iteration) or from a hand-driven iterator.
///
/// ```swift
/// let events = feed.values(bufferingPolicy: .endingWhenFull(1_000))
/// for await event in events { try await client.write(event) }
/// if events.endReason == .fellBehind { log("client fell behind; it reconnects and resumes") }
/// ```
public enum SignalValuesEndReason: Sendable, Equatable {
    /// The signal completed, and the loop took every value kept.
    case completed
    /// The signal failed: `next()` threw its error.
    case failed
    /// The task was cancelled, the loop was left (`break`, `return`, a thrown error), or the iterator was
    /// dropped.
    case cancelled
    /// Under ``SignalBufferingPolicy/endingWhenFull(_:)``: a value arrived with the limit's number of
    /// values waiting. The loop took those, then ended.
    case fellBehind
    /// Under ``SignalBufferingPolicy/bounded(_:)``: a producer that cannot wait sent a value with the
    /// bound's number of values waiting. The loop took those, then ended.
    case producerCouldNotWait
}

extension Signal where E: Error, T: Sendable {
    /// The signal's values as an `AsyncSequence`, subscribed when it is made and keeping every value that
    /// arrives until the loop takes it (see ``values(bufferingPolicy:)``).
    ///
    /// ```swift
    /// for await name in userName.values { render(name) }            // a NoError signal
    /// for try await chunk in downloadSignal.values { try await write(chunk) } // throws the signal's error type
    /// ```
    @inlinable public var values: SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: .unbounded)
    }

    /// The signal's values as an `AsyncSequence` with the given buffering policy.
    ///
    /// - **The sequence subscribes when it is made.** No value sent after this call returns is lost,
    ///   whatever operators that pass values on stand between a hot source and the loop, and however
    ///   late the loop starts: values wait for it under `bufferingPolicy`. The exceptions are the
    ///   operators that subscribe to their source later than asked: `runOn(queue)` (on the queue,
    ///   afterwards) and `delay`/`suspendAwareDelay` (after the wait); what the source sends before that
    ///   is not seen. Put them in front of a cold signal, not between a hot source and the loop. Values sent before it are not seen, so make the
    ///   sequence before starting the producer (a debug build says so, once per pipe, when a `ValuePipe`
    ///   had sent values while no sequence was subscribed to it).
    ///
    ///   ```swift
    ///   let trades = feed |> filter { $0.symbol == "ACME" }
    ///   let values = trades.values          // subscribed here
    ///   exchange.connect()                  // sends at once, from its own thread
    ///   for await trade in values { record(trade) }
    ///   ```
    ///
    ///   A sequence made in a task that is already cancelled does not subscribe: its loop ends at once,
    ///   with `SignalValuesEndReason.cancelled`, and a cold signal's generator never runs. The same holds
    ///   for a later iterator (below) made in such a task, wherever it is used afterwards.
    /// - The first iterator takes that subscription, with what it has kept. Each later iterator is a new
    ///   subscription, made when the iterator is made, so it sees only values sent after that: two loops
    ///   over one sequence, or a second loop after the first one broke, miss what was sent before they
    ///   began. Make one sequence per loop, each before the producer starts. A sequence dropped without being iterated disposes
    ///   its subscription; until then it keeps what the policy allows, so make it right before the loop.
    /// - The first value is kept for the first `next()` whatever the buffer's size (even 0), so the value
    ///   a replaying source (`single`, a promise's current value) sends while it starts is not lost.
    /// - Values that arrive while the loop body runs are kept according to `bufferingPolicy`; none is
    ///   dropped silently under `.unbounded`. A limit of 0 keeps nothing but that first value: any
    ///   other value reaches the loop only if it arrives while the loop waits in `next()`. A value leaves the buffer when the loop takes it,
    ///   and is released outside the library's lock.
    /// - The sequence's `Failure` is the signal's error type, so a `NoError` signal is iterated with plain
    ///   `for await`.
    /// - Leaving the loop (`break`, `return`, a thrown error), cancelling the task, or dropping the
    ///   iterator disposes the subscription. Cancellation ends the iteration (`next()` returns nil).
    ///   Leaving works by Swift destroying the loop's iterator, which top-level code (`main.swift`) keeps
    ///   until the program ends: write such a loop in a function.
    ///
    /// - Parameter bufferingPolicy: What to keep while the consumer is busy.
    /// - Returns: The sequence.
    @inlinable public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: bufferingPolicy)
    }
}

extension Signal where E: Error, T: Sendable {
    /// The same as ``values(bufferingPolicy:)``, which now also subscribes when the sequence is made.
    /// Kept for code written when `values` subscribed at the first `next()` and this was the spelling
    /// that did not.
    ///
    /// - Parameter bufferingPolicy: What to keep until the loop takes it; every value by default.
    /// - Returns: The sequence, already subscribed.
    @inlinable public func startValues(bufferingPolicy: SignalBufferingPolicy = .unbounded) -> SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: bufferingPolicy)
    }
}

/// The values of a `Signal` as an `AsyncSequence`, subscribed when the sequence is made; see
/// `Signal.values(bufferingPolicy:)`.
public struct SignalValues<T: Sendable, E: Error>: AsyncSequence, Sendable {
    /// The signal's value type.
    public typealias Element = T
    /// The signal's error type: `Never` for `NoError` signals, so they iterate without `try`.
    public typealias Failure = E

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let bufferingPolicy: SignalBufferingPolicy
    /// The subscription made with the sequence, until its first iterator takes it, and the reason that
    /// first iteration ended.
    @usableFromInline let started: StartedValues<T, E>

    /// Inlinable, so that the subscription made with the sequence is made in code specialised for the
    /// client's types: unspecialised, each value it received looked types up in the runtime's shared
    /// tables.
    @inlinable init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
        // Checked here, where the caller chose the policy, not at the first `for await`.
        switch bufferingPolicy {
        case .bufferingNewest(let limit):
            if limit < 0 { misuse("values(bufferingPolicy: .bufferingNewest(\(limit))): the limit must be at least 0") }
        case .bufferingOldest(let limit):
            if limit < 0 { misuse("values(bufferingPolicy: .bufferingOldest(\(limit))): the limit must be at least 0") }
        case .bounded(let bound):
            if bound < 0 { misuse("values(bufferingPolicy: .bounded(\(bound))): the bound must be at least 0") }
        case .endingWhenFull(let limit):
            if limit < 0 { misuse("values(bufferingPolicy: .endingWhenFull(\(limit))): the limit must be at least 0") }
        case .unbounded:
            break
        }
        self.signal = signal
        self.bufferingPolicy = bufferingPolicy
        let storage = SignalValuesStorage(signal: signal, bufferingPolicy: bufferingPolicy)
        storage.startNow()
        self.started = StartedValues(storage)
    }

    /// Makes an iterator. The first takes the subscription made with the sequence, with what it has kept
    /// since; each later iterator subscribes at once, unless the calling task is already cancelled: that
    /// iterator's `next()` returns nil, from any task.
    ///
    /// - Returns: A new iterator with its own subscription.
    public func makeAsyncIterator() -> Iterator {
        if let storage = self.started.take() {
            return Iterator(storage: storage)
        }
        let storage = SignalValuesStorage(signal: self.signal, bufferingPolicy: self.bufferingPolicy)
        storage.startNow(asLaterIterator: true)
        return Iterator(storage: storage)
    }

    /// Why the sequence's first iteration (the subscription made with the sequence) ended; nil while it
    /// goes on. It is set when the loop takes the end (`next()` returns nil or throws) or leaves, not
    /// when the subscription ends: a signal that completed, failed or overflowed the buffer while values
    /// were still kept for the loop reads nil until the loop has taken them. Read it after a `for await`
    /// loop over the sequence, once the loop has ended by itself (`next()` returned nil or threw):
    ///
    /// ```swift
    /// let events = feed.values(bufferingPolicy: .endingWhenFull(1_000))
    /// for await event in events { try await client.write(event) }
    /// if events.endReason == .fellBehind { log("client fell behind; it reconnects and resumes") }
    /// ```
    ///
    /// A loop left with `break`, `return` or a thrown error reads ``SignalValuesEndReason/cancelled``,
    /// unless `next()` had already returned nil or thrown: also when the subscription had ended
    /// meanwhile (with ``SignalValuesEndReason/fellBehind``, say) and the loop left before taking every
    /// value kept. Later iterators' reasons are on them: ``Iterator/endReason``.
    public var endReason: SignalValuesEndReason? {
        return self.started.storage.endReason
    }

    /// Whether the first iteration ended because the buffer was full: ``endReason`` is
    /// ``SignalValuesEndReason/fellBehind`` or ``SignalValuesEndReason/producerCouldNotWait``.
    public var endedBecauseFull: Bool {
        return self.endReason == .fellBehind || self.endReason == .producerCouldNotWait
    }

    /// Iterates over the values of one subscription.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let lifetime: IteratorLifetime<T, E>

        init(storage: SignalValuesStorage<T, E>) {
            self.lifetime = IteratorLifetime(storage: storage)
        }

        /// The next value; nil after completion or cancellation.
        ///
        /// - Returns: The next value, or nil when the iteration has ended.
        /// - Throws: The signal's error, once; later calls return nil.
        @inlinable public mutating func next() async throws(E) -> T? {
            if let value = self.lifetime.nextBuffered() { return value }
            return try await self.lifetime.storage.next(isolation: nil)
        }

        /// The next value, waiting on the caller's actor without hopping off it.
        ///
        /// - Parameter actor: The caller's isolation.
        /// - Returns: The next value, or nil when the iteration has ended.
        /// - Throws: The signal's error, once; later calls return nil.
        @inlinable public mutating func next(isolation actor: isolated (any Actor)?) async throws(E) -> T? {
            if let value = self.lifetime.nextBuffered() { return value }
            return try await self.lifetime.storage.next(isolation: actor)
        }

        /// Why this iteration ended; nil while it goes on. Meaningful once `next()` has returned nil or
        /// thrown. See ``SignalValuesEndReason``.
        public var endReason: SignalValuesEndReason? {
            return self.lifetime.storage.endReason
        }

        /// Whether the iteration ended because the buffer was full: under
        /// `SignalBufferingPolicy.endingWhenFull(_:)` (the loop fell behind), or under
        /// `SignalBufferingPolicy.bounded(_:)` with a producer that cannot wait. Meaningful once `next()`
        /// has returned nil.
        public var endedBecauseFull: Bool {
            return self.endReason == .fellBehind || self.endReason == .producerCouldNotWait
        }
    }
}

@available(*, unavailable, message: "an iterator belongs to one task; make one per task")
extension SignalValues.Iterator: Sendable {}

/// The subscription a sequence made when it was made, held until its first iterator takes it and
/// disposed when the last copy of the sequence goes away untaken; and, for ``SignalValues/endReason``,
/// that subscription's state for as long as the sequence lives.
@usableFromInline final class StartedValues<T: Sendable, E: Error>: Sendable {
    @usableFromInline let storage: SignalValuesStorage<T, E>

    @inlinable init(_ storage: SignalValuesStorage<T, E>) {
        self.storage = storage
    }

    /// The subscription, for the first caller only.
    func take() -> SignalValuesStorage<T, E>? {
        return self.storage.claimForIterator() ? self.storage : nil
    }

    deinit {
        // No iterator took it: nobody will read what it keeps.
        if self.take() != nil { self.storage.cancel() }
    }
}

/// Disposes the subscription when the last copy of an iterator goes away, and holds the consumer's
/// batch: with the `.unbounded` policy the consumer takes every buffered value under one lock and then
/// hands them out without locking or suspending, so a fast producer costs one lock per batch on the
/// consumer's side, not a lock and a continuation per value.
///
/// Not `Sendable`: it belongs to the iterator, which belongs to one task.
@usableFromInline final class IteratorLifetime<T: Sendable, E: Error> {
    @usableFromInline let storage: SignalValuesStorage<T, E>
    /// Values taken from the storage and not yet handed out, last first: each is moved out as it is
    /// handed out, so the batch keeps no value the loop has already received.
    @usableFromInline var batch: [T] = []

    init(storage: SignalValuesStorage<T, E>) {
        self.storage = storage
    }

    /// The next value already available without waiting, or nil if the caller must ask the storage.
    /// Honours cancellation like the storage does: a cancelled task gets nil (through the storage).
    @inlinable func nextBuffered() -> T? {
        if self.batch.isEmpty {
            guard self.storage.takeBuffered(into: &self.batch) else { return nil }
        }
        if Task.isCancelled {
            // Dropped values are released here; the storage then ends the iteration.
            self.batch = []
            return nil
        }
        return self.batch.popLast()
    }

    deinit {
        self.storage.cancel()
    }
}
