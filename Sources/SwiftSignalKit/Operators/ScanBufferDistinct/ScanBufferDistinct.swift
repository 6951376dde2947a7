/// Sends the running result of folding each value into an accumulator.
///
/// Each value is combined with the previous result (`initial` for the first value) and the new result
/// is sent; `initial` itself is not sent. Errors and completion pass through.
///
/// ```
/// source: -1--2--3--|
/// scan(0, +)
/// result: -1--3--6--|
/// ```
///
/// ```swift
/// let amounts = ValuePipe<Int>()
/// let runningTotal = amounts.signal() |> scan(0, +)
/// ```
///
/// > Note: `f` runs outside the operator's lock, on one thread at a time, each value exactly once, in the
/// > order the values arrived; the results are sent in the same order. A value sent while a fold is under
/// > way (by another thread, or from a callback of this operator on the folding thread) is queued and
/// > folded (and its result sent) by the folding thread, which after 64 values queued by *other* threads
/// > hands the rest to a global Dispatch queue, so no sender is kept working for others without end.
/// > Values a callback feeds back on the folding thread do not count: a loop alone stays on that thread.
/// > See the Threading and disposal article, "Ordering".
/// > The value and error types are `Sendable` for that reason: a value or an error may be handled by
/// > another thread than the one that sent it.
///
/// - Parameters:
///   - initial: The accumulator before the first value.
///   - f: Combines the accumulator with a value into the next accumulator.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func scan<T: Sendable, R: Sendable, E: Sendable>(
    _ initial: R, _ f: @escaping @Sendable (R, T) -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        return Signal { subscriber in
            let storage = SerialFoldStorage<R, T, R, E>(
                initialState: initial,
                subscriber: subscriber,
                step: { accumulator, value in
                    accumulator = f(accumulator, value)
                    return accumulator
                },
                finish: { _ in nil })
            return storage.start(signal)
        }
    }
}

/// Groups values into arrays of `count`, sending each array when it is full.
///
/// When the source completes, the values of a partly filled array are sent as a last, shorter array
/// (nothing is sent for an empty one). When the source fails, they are dropped and the error is sent.
///
/// ```
/// source: -a-b-c-d-e-|
/// buffer(count: 2)
/// result: ---x---y---(z|)     x = [a, b], y = [c, d], z = [e]
/// ```
///
/// ```swift
/// let events = ValuePipe<String>()
/// let batches = events.signal() |> buffer(count: 50)
/// ```
///
/// > Note: Values sent from several threads at once are grouped in the order they arrived, and the
/// > arrays are sent in that order, one thread at a time (as for ``scan(_:_:)``).
///
/// - Parameter count: The size of a full array; at least 1.
/// - Returns: An operator for `|>`.
@inlinable public func buffer<T: Sendable, E: Sendable>(count: Int) -> (Signal<T, E>) -> Signal<[T], E> {
    if count < 1 { misuse("buffer(count:) needs a count of at least 1, got \(count)") }
    return { signal in
        return Signal { subscriber in
            let storage = SerialFoldStorage<[T], T, [T], E>(
                initialState: [],
                subscriber: subscriber,
                step: { buffered, value in
                    if buffered.isEmpty {
                        // Bounded: a huge count must not reserve memory that will never be filled.
                        buffered.reserveCapacity(min(count, 1_024))
                    }
                    buffered.append(value)
                    guard buffered.count == count else { return nil }
                    defer { buffered = [] }
                    return buffered
                },
                finish: { buffered in
                    buffered.isEmpty ? nil : buffered
                })
            return storage.start(signal)
        }
    }
}

/// Sends each value whose key has not been seen before in the subscription.
///
/// Unlike ``distinctUntilChanged(isEqual:)``, which drops only a repeat of the value just before, this
/// drops any value whose key an earlier value already had (RxSwiftExt's and RxJS's `distinct`).
///
/// ```
/// source: -a1-b1-a2-c1-b2-|
/// distinct(by: \.letter)
/// result: -a1-b1----c1----|
/// ```
///
/// ```swift
/// struct Message: Sendable {
///     let id: Int
///     let text: String
/// }
/// let messages = ValuePipe<Message>()
/// let firstDeliveries = messages.signal() |> distinct(by: { $0.id })
/// ```
///
/// > Note: Every key seen is kept until the subscription ends, so memory grows with the number of
/// > different keys; for an endless source with endless different keys, key by something bounded.
///
/// > Note: `key`, and the key's `hash(into:)` and `==`, run outside the operator's lock, on one thread at
/// > a time, in the order the values arrived (as for ``scan(_:_:)``); values are sent in that order.
///
/// - Parameter key: The key of a value; values with equal keys are duplicates.
/// - Returns: An operator for `|>`.
@inlinable @preconcurrency public func distinct<T: Sendable, K: Hashable & Sendable, E: Sendable>(
    by key: @escaping @Sendable (T) -> K
) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let storage = SerialFoldStorage<Set<K>, T, T, E>(
                initialState: [],
                subscriber: subscriber,
                step: { seen, value in
                    seen.insert(key(value)).inserted ? value : nil
                },
                finish: { _ in nil })
            return storage.start(signal)
        }
    }
}

/// Sends each value that has not been sent before in the subscription.
///
/// ```
/// source: -1-2-1-3-2-|
/// distinct
/// result: -1-2---3---|
/// ```
///
/// ```swift
/// let tags = ValuePipe<String>()
/// let newTags = tags.signal() |> distinct
/// ```
///
/// > Note: As for ``distinct(by:)``: every value sent is kept until the subscription ends, and hashing
/// > and comparing run outside the operator's lock, one value at a time.
///
/// - Parameter signal: The source.
/// - Returns: The source without values sent before.
@inlinable public func distinct<T: Hashable & Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return signal |> distinct(by: { $0 })
}
