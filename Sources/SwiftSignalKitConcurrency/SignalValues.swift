import SwiftSignalKit

/// How many values an iteration over ``SignalValues`` keeps while the loop body is busy.
public enum SignalBufferingPolicy: Sendable, Equatable {
    /// Keep every value. Memory grows if the producer outpaces the consumer.
    case unbounded
    /// Keep at most this many values, dropping the oldest when full.
    case bufferingNewest(Int)
    /// Keep at most this many values, dropping new ones when full.
    case bufferingOldest(Int)
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
    ///   value) goes straight to it, whatever the buffer's size.
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

/// The values of a `Signal` as an `AsyncSequence`; see
/// `Signal.values(bufferingPolicy:)`.
public struct SignalValues<T: Sendable, E: Error>: AsyncSequence, Sendable {
    /// The signal's value type.
    public typealias Element = T
    /// The signal's error type: `Never` for `NoError` signals, so they iterate without `try`.
    public typealias Failure = E

    private let signal: Signal<T, E>
    private let bufferingPolicy: SignalBufferingPolicy

    init(signal: Signal<T, E>, bufferingPolicy: SignalBufferingPolicy) {
        // Checked here, where the caller chose the policy, not at the first `for await`.
        switch bufferingPolicy {
        case .bufferingNewest(let limit), .bufferingOldest(let limit):
            if limit < 0 { misuse("values(bufferingPolicy:): a buffering limit must be at least 0, got \(limit)") }
        case .unbounded:
            break
        }
        self.signal = signal
        self.bufferingPolicy = bufferingPolicy
    }

    /// Makes an iterator; it subscribes on its first `next()`.
    ///
    /// - Returns: A new iterator with its own subscription.
    public func makeAsyncIterator() -> Iterator {
        return Iterator(storage: SignalValuesStorage(signal: self.signal, bufferingPolicy: self.bufferingPolicy))
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
    }
}

@available(*, unavailable, message: "an iterator belongs to one task; make one per task")
extension SignalValues.Iterator: Sendable {}

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
