import SwiftSignalKit

/// How many values an iteration over ``SignalValues`` keeps while the loop body is busy.
public enum SignalBufferingPolicy: Sendable, Equatable {
    /// Keep every value. Memory grows if the producer outpaces the consumer.
    case unbounded
    /// Keep at most this many values, dropping the oldest when full.
    case bufferingNewest(Int)
    /// Keep at most this many values, dropping new ones when full.
    case bufferingOldest(Int)
    /// Keep every value, and make producers that can wait do so while this many values wait for the
    /// loop: an async generator's `await send.waitingForRoom(value)`, and `Signal(sequence)`, which then
    /// pulls its next element only when there is room. Nothing is dropped.
    ///
    /// - The bound reaches the producer through the operators that hand each value on synchronously
    ///   (`map`, `filter`, `take`, `skip`, `distinctUntilChanged`, `beforeNext`, ...) and through
    ///   `mapAsync`, which holds its results until there is room. Operators that hold values back, hop
    ///   threads, combine or share (`deliverOn`, `delay`, `debounce`, `combineLatest`, `zip`, `share`,
    ///   the outer signal of `mapToSignal`) are where it stops: the producers above them do not wait.
    ///   The Flow control article lists every operator.
    /// - A producer that cannot wait (a synchronous `putNext`, the generator's `send(value)`) is never
    ///   blocked and loses nothing: its values are kept beyond the bound.
    /// - With one waiting producer, the buffer never holds more than the bound. 0 is a rendezvous: a
    ///   waiting producer sends only while the loop waits in `next()`. A negative bound stops the
    ///   program with a message naming it; `Int.max` never makes a producer wait.
    case bounded(Int)
    /// Keep at most this many values; when one more arrives, end this iteration: the loop still takes
    /// the values kept, then `next()` returns nil, and `SignalValues.Iterator.endedBecauseFull` tells
    /// this end from the source's completion. The subscription is disposed at once, so the source and
    /// its other consumers go on, and the value that found the buffer full is dropped.
    ///
    /// The policy for one slow client of a shared feed: the client reconnects and resumes from the last
    /// value it took, instead of the server keeping ever more for it. 0 ends the iteration at the first
    /// value that arrives while the loop is not waiting in `next()`; a negative limit stops the program
    /// with a message naming it.
    case endingWhenFull(Int)
}

extension Signal where E: Error, T: Sendable {
    /// The signal's values as an `AsyncSequence`, keeping every value that arrives while the loop body
    /// runs (see ``values(bufferingPolicy:)``).
    ///
    /// ```swift
    /// for await user in userSignal.values { render(user) }          // a NoError signal
    /// for try await chunk in downloadSignal.values { write(chunk) } // throws the signal's error type
    /// ```
    public var values: SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: .unbounded)
    }

    /// The signal's values as an `AsyncSequence` with the given buffering policy.
    ///
    /// - Each iterator is its own subscription (the signal is cold), started by the first `next()`, which
    ///   is already waiting by then: a value sent while the signal starts (`single`, a promise's current
    ///   value) goes straight to it, whatever the buffer's size. For a hot source behind operators,
    ///   where values sent before the loop starts matter, use ``startValues(bufferingPolicy:)``.
    /// - Values that arrive while the loop body runs are kept according to `bufferingPolicy`; none is
    ///   dropped silently under `.unbounded`. A limit of 0 keeps nothing: a value reaches the loop only
    ///   if it arrives while the loop waits in `next()`. A value leaves the buffer when the loop takes it,
    ///   and is released outside the library's lock.
    /// - The sequence's `Failure` is the signal's error type, so a `NoError` signal is iterated with plain
    ///   `for await`.
    /// - Leaving the loop (`break`, `return`, a thrown error), cancelling the task, or dropping the
    ///   iterator disposes the subscription. Cancellation ends the iteration (`next()` returns nil).
    ///
    /// - Parameter bufferingPolicy: What to keep while the consumer is busy.
    /// - Returns: The sequence.
    public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: bufferingPolicy)
    }
}

extension Signal where E: Error, T: Sendable {
    /// Starts the signal now and returns its values as an `AsyncSequence`: nothing sent after this call
    /// is lost, however late the loop starts.
    ///
    /// The spelling for a hot source (a pipe, a feed, anything that sends whether or not someone
    /// listens) when something happens between making the sequence and the first `next()`:
    ///
    /// ```swift
    /// let updates = trades.signal() |> filter { $0.symbol == "ACME" }
    /// let values = updates.startValues()   // subscribed here
    /// exchange.connect()                    // sends at once, from its own thread
    /// for await trade in values { record(trade) }
    /// ```
    ///
    /// - The subscription is made by this call. Values sent before the first iterator is made are kept
    ///   for it under `bufferingPolicy`; the first value is always kept for the first `next()`, as a
    ///   value sent while a cold signal starts is.
    /// - The first iterator takes that subscription. Each later iterator subscribes when it is made.
    /// - A sequence dropped without being iterated disposes its subscription. Until then it keeps what
    ///   the policy allows: make it right before the loop, not long before.
    /// - Everything else is as for ``values(bufferingPolicy:)``: leaving the loop, cancelling the task
    ///   or dropping the iterator disposes the subscription.
    ///
    /// `ValuePipe.values`, `Promise.values` and `ValuePromise.values` already work this way.
    ///
    /// - Parameter bufferingPolicy: What to keep until the loop takes it; every value by default.
    /// - Returns: The sequence, already subscribed.
    @inlinable public func startValues(bufferingPolicy: SignalBufferingPolicy = .unbounded) -> SignalValues<T, E> {
        return SignalValues(signal: self, bufferingPolicy: bufferingPolicy, startNow: true)
    }
}

/// The values of a `Signal` as an `AsyncSequence`; see `Signal.values(bufferingPolicy:)` and
/// `Signal.startValues(bufferingPolicy:)`.
public struct SignalValues<T: Sendable, E: Error>: AsyncSequence, Sendable {
    /// The signal's value type.
    public typealias Element = T
    /// The signal's error type: `Never` for `NoError` signals, so they iterate without `try`.
    public typealias Failure = E

    @usableFromInline let signal: Signal<T, E>
    @usableFromInline let bufferingPolicy: SignalBufferingPolicy
    /// For a sequence that subscribes when it is made (`startValues`, a hot source's `values`): the
    /// subscription made with it, until an iterator takes it. Nil for a cold signal's `values`.
    @usableFromInline let started: StartedValues<T, E>?

    /// Inlinable, so that a sequence that subscribes when it is made (`startValues`, a hot source's
    /// `values`) makes its subscription in code specialised for the client's types: unspecialised, each
    /// value it received looked types up in the runtime's shared tables.
    @inlinable init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy, startNow: Bool = false) {
        // Checked here, where the caller chose the policy, not at the first `for await`.
        switch bufferingPolicy {
        case .bufferingNewest(let limit), .bufferingOldest(let limit):
            if limit < 0 { misuse("values(bufferingPolicy:): a buffering limit must be at least 0, got \(limit)") }
        case .bounded(let bound):
            if bound < 0 { misuse("values(bufferingPolicy: .bounded(\(bound))): the bound must be at least 0") }
        case .endingWhenFull(let limit):
            if limit < 0 { misuse("values(bufferingPolicy: .endingWhenFull(\(limit))): the limit must be at least 0") }
        case .unbounded:
            break
        }
        self.signal = signal
        self.bufferingPolicy = bufferingPolicy
        if startNow {
            let storage = SignalValuesStorage(signal: signal, bufferingPolicy: bufferingPolicy)
            storage.startNow()
            self.started = StartedValues(storage)
        } else {
            self.started = nil
        }
    }

    /// Makes an iterator. For a cold signal's `values`, it subscribes on its first `next()`. For a
    /// sequence that subscribed when it was made, the first iterator takes that subscription, with what it
    /// has kept since, and each later iterator subscribes at once.
    ///
    /// - Returns: A new iterator with its own subscription.
    public func makeAsyncIterator() -> Iterator {
        if let storage = self.started?.take() {
            return Iterator(storage: storage)
        }
        let storage = SignalValuesStorage(signal: self.signal, bufferingPolicy: self.bufferingPolicy)
        if self.started != nil {
            storage.startNow()
        }
        return Iterator(storage: storage)
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

        /// Whether the iteration ended because the loop fell behind under
        /// `SignalBufferingPolicy.endingWhenFull(_:)`, rather than by the source's completion or
        /// failure, or cancellation. Meaningful once `next()` has returned nil.
        ///
        /// ```swift
        /// var events = feed.values(bufferingPolicy: .endingWhenFull(1_000)).makeAsyncIterator()
        /// while let event = await events.next() { try await client.write(event) }
        /// if events.endedBecauseFull { log("client fell behind; it reconnects and resumes") }
        /// ```
        public var endedBecauseFull: Bool {
            return self.lifetime.storage.endedBecauseFull
        }
    }
}

@available(*, unavailable, message: "an iterator belongs to one task; make one per task")
extension SignalValues.Iterator: Sendable {}

/// The subscription a sequence made when it was made, held until its first iterator takes it; disposed
/// when the last copy of the sequence goes away untaken.
@usableFromInline final class StartedValues<T: Sendable, E: Error>: Sendable {
    @usableFromInline let storage: LockedState<SignalValuesStorage<T, E>?>

    @inlinable init(_ storage: SignalValuesStorage<T, E>) {
        self.storage = LockedState(storage)
    }

    /// The subscription, for the first caller only.
    func take() -> SignalValuesStorage<T, E>? {
        return self.storage.withLock { $0.take() }
    }

    deinit {
        // No iterator took it: nobody will read what it keeps.
        self.storage.withLock { $0.take() }?.cancel()
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
