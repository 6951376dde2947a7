/// Combines the latest values of two signals.
///
/// Nothing is sent until every source has sent a value; after that, each value from any source sends a
/// tuple of the latest values. The result fails on the first error and completes when every source has
/// completed. Overloads exist for 2 to 26 sources, all with the optional `queue:` argument.
///
/// ```swift
/// let header = combineLatest(userName, unreadCount) |> map { name, count in "\(name) (\(count))" }
/// ```
///
/// > Note: Combined values are built under the operator's lock and sent outside it. When sources send
/// > from several threads at once, two combined values may reach the subscriber in either order.
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - s1: The first source.
///   - s2: The second source.
/// - Returns: A signal of tuples.
@inlinable public func combineLatest<T1: Sendable, T2: Sendable, E>(
    queue: Queue? = nil, _ s1: Signal<T1, E>, _ s2: Signal<T2, E>
) -> Signal<(T1, T2), E> {
    return Signal { subscriber in
        let slot1 = CombineLatestSlot<T1>()
        let slot2 = CombineLatestSlot<T2>()
        let storage = CombineLatestStorage<(T1, T2), E>(arity: 2, subscriber: subscriber) {
            (slot1.value!, slot2.value!)
        }
        let disposable = DisposableSet()
        disposable.add(storage.start(s1, index: 0, queue: queue, slot: slot1))
        disposable.add(storage.start(s2, index: 1, queue: queue, slot: slot2))
        return disposable
    }
}

/// Combines the latest values of two signals, starting from initial values, so a tuple is sent at once.
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - s1: The first source.
///   - v1: The first source's value until it sends one.
///   - s2: The second source.
///   - v2: The second source's value until it sends one.
/// - Returns: A signal of tuples, starting with `(v1, v2)`.
@inlinable public func combineLatest<T1: Sendable, T2: Sendable, E>(
    queue: Queue? = nil, _ s1: Signal<T1, E>, _ v1: T1, _ s2: Signal<T2, E>, _ v2: T2
) -> Signal<(T1, T2), E> {
    return Signal { subscriber in
        let slot1 = CombineLatestSlot<T1>(v1)
        let slot2 = CombineLatestSlot<T2>(v2)
        let storage = CombineLatestStorage<(T1, T2), E>(arity: 2, subscriber: subscriber, initiallyFilled: true) {
            (slot1.value!, slot2.value!)
        }
        storage.sendInitialIfFilled()
        let disposable = DisposableSet()
        disposable.add(storage.start(s1, index: 0, queue: queue, slot: slot1))
        disposable.add(storage.start(s2, index: 1, queue: queue, slot: slot2))
        return disposable
    }
}

/// Combines the latest values of an array of signals of one type.
///
/// An empty array gives a signal that sends `[]` and completes.
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - signals: The sources.
/// - Returns: A signal of arrays, in the order of `signals`.
@inlinable public func combineLatest<T: Sendable, E>(queue: Queue? = nil, _ signals: [Signal<T, E>]) -> Signal<[T], E> {
    if signals.isEmpty {
        return Signal<[T], E>.single([])
    }
    return Signal { subscriber in
        let slots = signals.map { _ in CombineLatestSlot<T>() }
        let storage = CombineLatestStorage<[T], E>(arity: signals.count, subscriber: subscriber) {
            slots.map { $0.value! }
        }
        let disposable = DisposableSet()
        for (index, signal) in signals.enumerated() {
            disposable.add(storage.start(signal, index: index, queue: queue, slot: slots[index]))
        }
        return disposable
    }
}
