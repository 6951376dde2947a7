/// Pairs the values of two signals by position: the first of each, then the second of each, and so on.
///
/// Values are kept until every source has sent one at that position; then a tuple of them is sent. The
/// result completes as soon as a source has completed and every value it sent has been paired (no
/// further tuple can be formed), and fails on the first error of any source, after the tuples formed
/// before it. Either way the sources are disposed.
///
/// ```
/// s1:     -1-2-----3-|
/// s2:     ---a---b---c-d-|
/// result: ---x---y---(z|)     x = (1, a), y = (2, b), z = (3, c)
/// ```
///
/// ```swift
/// let requests = ValuePipe<Int>()
/// let responses = ValuePipe<String>()
/// let exchanges = zip(requests.signal(), responses.signal())
/// ```
///
/// > Note: A source that runs ahead of the others has its values buffered without limit until the others
/// > catch up; zip sources that advance together.
///
/// > Note: Tuples are formed under the operator's lock, in the order their last value arrived, and sent
/// > outside it in that order, one thread at a time: a value that completes a tuple while one is being
/// > sent (by another thread, or from a callback on the sending thread) is queued, and sent by the
/// > sending thread, which after 64 tuples queued by other threads hands the rest to a global Dispatch
/// > queue (see the Threading and disposal article, "Ordering"). The
/// > completion or error comes after every tuple. The value and error types
/// > are `Sendable` for that reason: they may be sent by another thread than the one that sent them.
///
/// > Note: Unlike RxSwift's `zip`, which completes only once every source has completed, the result
/// > completes as soon as no further tuple can be formed (as ReactiveSwift's and Combine's do).
///
/// - Parameters:
///   - s1: The first source.
///   - s2: The second source.
/// - Returns: A signal of tuples.
@inlinable public func zip<T1: Sendable, T2: Sendable, E: Sendable>(_ s1: Signal<T1, E>, _ s2: Signal<T2, E>) -> Signal<(T1, T2), E> {
    return Signal { subscriber in
        let storage = ZipStorage<any Sendable, (T1, T2), E>(arity: 2, subscriber: subscriber) { row in
            // Each position holds a value of its source's type (see `start` below).
            (row[0] as! T1, row[1] as! T2)
        }
        let sources = DisposableSet()
        storage.start(s1, index: 0, into: sources) { $0 }
        storage.start(s2, index: 1, into: sources) { $0 }
        return storage.disposable(disposing: sources)
    }
}

/// Pairs the values of three signals by position; see ``zip(_:_:)``.
///
/// ```
/// s1:     -1---2---|
/// s2:     -a-b-c---|
/// s3:     ---x---y-z-|
/// result: ---p---(q|)     p = (1, a, x), q = (2, b, y)
/// ```
///
/// ```swift
/// let names = ValuePipe<String>()
/// let ages = ValuePipe<Int>()
/// let cities = ValuePipe<String>()
/// let people = zip(names.signal(), ages.signal(), cities.signal())
/// ```
///
/// - Parameters:
///   - s1: The first source.
///   - s2: The second source.
///   - s3: The third source.
/// - Returns: A signal of tuples.
@inlinable public func zip<T1: Sendable, T2: Sendable, T3: Sendable, E: Sendable>(
    _ s1: Signal<T1, E>, _ s2: Signal<T2, E>, _ s3: Signal<T3, E>
) -> Signal<(T1, T2, T3), E> {
    return Signal { subscriber in
        let storage = ZipStorage<any Sendable, (T1, T2, T3), E>(arity: 3, subscriber: subscriber) { row in
            (row[0] as! T1, row[1] as! T2, row[2] as! T3)
        }
        let sources = DisposableSet()
        storage.start(s1, index: 0, into: sources) { $0 }
        storage.start(s2, index: 1, into: sources) { $0 }
        storage.start(s3, index: 2, into: sources) { $0 }
        return storage.disposable(disposing: sources)
    }
}

/// Pairs the values of an array of signals of one type by position; see ``zip(_:_:)``.
///
/// An empty array gives a signal that completes at once, without a value. (``combineLatest(queue:_:)``
/// sends `[]` for an empty array, a single combination of no values; `zip` would have to send `[]` for
/// every position without end, so it sends nothing.)
///
/// ```
/// s[0]:   -1---2-|
/// s[1]:   ---3---4-|
/// result: ---x---(y|)     x = [1, 3], y = [2, 4]
/// ```
///
/// ```swift
/// let shards = (0..<3).map { _ in ValuePipe<Int>() }
/// let rows = zip(shards.map { $0.signal() })
/// ```
///
/// - Parameter signals: The sources, started in order.
/// - Returns: A signal of arrays, in the order of `signals`.
@inlinable public func zip<T: Sendable, E: Sendable>(_ signals: [Signal<T, E>]) -> Signal<[T], E> {
    if signals.isEmpty {
        return Signal<[T], E> { subscriber in
            subscriber.putCompletion()
            return EmptyDisposable
        }
    }
    return Signal { subscriber in
        let storage = ZipStorage<T, [T], E>(arity: signals.count, subscriber: subscriber) { $0 }
        let sources = DisposableSet()
        for (index, signal) in signals.enumerated() {
            storage.start(signal, index: index, into: sources) { $0 }
        }
        return storage.disposable(disposing: sources)
    }
}
