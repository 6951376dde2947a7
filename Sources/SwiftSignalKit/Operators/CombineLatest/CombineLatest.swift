/// Combines the latest values of two signals.
///
/// Nothing is sent until every source has sent a value; after that, each value from any source sends a
/// tuple of the latest values. The result fails on the first error and completes when every source has
/// completed. Overloads exist for 2 to 26 sources, all with the optional `queue:` argument.
///
/// A source that completes without a value means that no tuple can come, but the result still waits for
/// the other sources to complete, keeping them subscribed, as the original library does (RxJava's
/// completes at once). Give such a source a value with `startWith`, or use a form with initial values.
///
/// ```swift
/// let header = combineLatest(userName, unreadCount) |> map { name, count in "\(name) (\(count))" }
/// ```
///
/// > Note: Combined values are built under the operator's lock and sent outside it, one at a time, in
/// > the order they were built, also when sources send from several threads at once: the last tuple
/// > delivered holds the latest value of each source. See the Threading and disposal article, "Ordering".
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
        storage.start(s1, index: 0, queue: queue, slot: slot1)
        storage.start(s2, index: 1, queue: queue, slot: slot2)
        return storage
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
        storage.start(s1, index: 0, queue: queue, slot: slot1)
        storage.start(s2, index: 1, queue: queue, slot: slot2)
        return storage
    }
}

/// Combines the latest values of three signals, starting from initial values, so a tuple is sent at
/// once; see ``combineLatest(queue:_:_:_:_:)-(_,_,T1,_,T2)``.
///
/// ```
/// s1:     ---a-----|
/// s2:     -----b---|
/// s3:     -------c-|
/// result: x--y-z-w-|     x = (v1, v2, v3), y = (a, v2, v3), z = (a, b, v3), w = (a, b, c)
/// ```
///
/// ```swift
/// let name = ValuePipe<String>()
/// let unread = ValuePipe<Int>()
/// let online = ValuePipe<Bool>()
/// let header = combineLatest(name.signal(), "", unread.signal(), 0, online.signal(), false)
/// ```
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - s1: The first source.
///   - v1: The first source's value until it sends one.
///   - s2: The second source.
///   - v2: The second source's value until it sends one.
///   - s3: The third source.
///   - v3: The third source's value until it sends one.
/// - Returns: A signal of tuples, starting with `(v1, v2, v3)`.
@inlinable public func combineLatest<T1: Sendable, T2: Sendable, T3: Sendable, E>(
    queue: Queue? = nil, _ s1: Signal<T1, E>, _ v1: T1, _ s2: Signal<T2, E>, _ v2: T2, _ s3: Signal<T3, E>, _ v3: T3
) -> Signal<(T1, T2, T3), E> {
    return Signal { subscriber in
        let slot1 = CombineLatestSlot<T1>(v1)
        let slot2 = CombineLatestSlot<T2>(v2)
        let slot3 = CombineLatestSlot<T3>(v3)
        let storage = CombineLatestStorage<(T1, T2, T3), E>(arity: 3, subscriber: subscriber, initiallyFilled: true) {
            (slot1.value!, slot2.value!, slot3.value!)
        }
        storage.sendInitialIfFilled()
        storage.start(s1, index: 0, queue: queue, slot: slot1)
        storage.start(s2, index: 1, queue: queue, slot: slot2)
        storage.start(s3, index: 2, queue: queue, slot: slot3)
        return storage
    }
}

/// Combines the latest values of four signals, starting from initial values, so a tuple is sent at
/// once; see ``combineLatest(queue:_:_:_:_:)-(_,_,T1,_,T2)``.
///
/// ```
/// s1:     ---a---|
/// s2..s4: -------|
/// result: x--y---|     x = (v1, v2, v3, v4), y = (a, v2, v3, v4)
/// ```
///
/// ```swift
/// let a = ValuePipe<Int>()
/// let b = ValuePipe<Int>()
/// let c = ValuePipe<Int>()
/// let d = ValuePipe<Int>()
/// let sum = combineLatest(a.signal(), 0, b.signal(), 0, c.signal(), 0, d.signal(), 0) |> map { $0 + $1 + $2 + $3 }
/// ```
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - s1: The first source.
///   - v1: The first source's value until it sends one.
///   - s2: The second source.
///   - v2: The second source's value until it sends one.
///   - s3: The third source.
///   - v3: The third source's value until it sends one.
///   - s4: The fourth source.
///   - v4: The fourth source's value until it sends one.
/// - Returns: A signal of tuples, starting with `(v1, v2, v3, v4)`.
@inlinable public func combineLatest<T1: Sendable, T2: Sendable, T3: Sendable, T4: Sendable, E>(
    queue: Queue? = nil, _ s1: Signal<T1, E>, _ v1: T1, _ s2: Signal<T2, E>, _ v2: T2, _ s3: Signal<T3, E>, _ v3: T3,
    _ s4: Signal<T4, E>, _ v4: T4
) -> Signal<(T1, T2, T3, T4), E> {
    return Signal { subscriber in
        let slot1 = CombineLatestSlot<T1>(v1)
        let slot2 = CombineLatestSlot<T2>(v2)
        let slot3 = CombineLatestSlot<T3>(v3)
        let slot4 = CombineLatestSlot<T4>(v4)
        let storage = CombineLatestStorage<(T1, T2, T3, T4), E>(arity: 4, subscriber: subscriber, initiallyFilled: true) {
            (slot1.value!, slot2.value!, slot3.value!, slot4.value!)
        }
        storage.sendInitialIfFilled()
        storage.start(s1, index: 0, queue: queue, slot: slot1)
        storage.start(s2, index: 1, queue: queue, slot: slot2)
        storage.start(s3, index: 2, queue: queue, slot: slot3)
        storage.start(s4, index: 3, queue: queue, slot: slot4)
        return storage
    }
}

/// Combines the latest values of an array of signals of one type.
///
/// An empty array gives a signal that sends `[]` and completes. As with two sources, a source that
/// completes without a value leaves the result waiting for the others to complete.
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
        for (index, signal) in signals.enumerated() {
            storage.start(signal, index: index, queue: queue, slot: slots[index])
        }
        return storage
    }
}

/// Combines the latest values of an array of signals of one type, starting from initial values, so an
/// array is sent at once.
///
/// Empty arrays give a signal that sends `[]` and completes, as ``combineLatest(queue:_:)`` does.
///
/// ```
/// s[0]:   ---a---|
/// s[1]:   -----b-|
/// result: x--y-z-|     x = [v0, v1], y = [a, v1], z = [a, b]
/// ```
///
/// ```swift
/// let toggles = (0..<3).map { _ in ValuePipe<Bool>() }
/// let states = combineLatest(toggles.map { $0.signal() }, initialValues: [false, false, false])
/// ```
///
/// - Parameters:
///   - queue: If given, each source delivers on this queue first.
///   - signals: The sources.
///   - initialValues: Each source's value until it sends one: as many as there are sources (anything
///     else stops the program with a message naming both counts).
/// - Returns: A signal of arrays, in the order of `signals`, starting with `initialValues`.
@inlinable public func combineLatest<T: Sendable, E>(
    queue: Queue? = nil, _ signals: [Signal<T, E>], initialValues: [T]
) -> Signal<[T], E> {
    if signals.count != initialValues.count {
        misuse(
            "combineLatest(queue:_:initialValues:) needs one initial value per signal, got \(signals.count) signals and "
                + "\(initialValues.count) initial values")
    }
    if signals.isEmpty {
        return Signal<[T], E>.single([])
    }
    return Signal { subscriber in
        let slots = initialValues.map { CombineLatestSlot<T>($0) }
        let storage = CombineLatestStorage<[T], E>(arity: signals.count, subscriber: subscriber, initiallyFilled: true) {
            slots.map { $0.value! }
        }
        storage.sendInitialIfFilled()
        for (index, signal) in signals.enumerated() {
            storage.start(signal, index: index, queue: queue, slot: slots[index])
        }
        return storage
    }
}
