// The stages behind `map` and `filter`, and their subscribers.
//
// A stage object holds what its signal was built from (the upstream signal and the closure). The
// signal's closures capture only the stage, and each subscriber holds the stage rather than the
// closure: a closure capturing one object needs no context, and an object reference is 8 bytes where a
// closure is 16. A server that keeps hundreds of thousands of subscriptions pays for every byte.
//
// `map { ... } |> filter { ... }` is one stage (``MapFilterStage``): one subscriber per subscription
// instead of two. The fusion cannot be seen from outside: both closures run on the delivering thread,
// one after the other, as they did in two stages, and between them the stage asks again whether it is
// still live (a second stage did so on receiving the mapped value), so a `map` closure that ends the
// subscription keeps the `filter` closure from running.

/// A `map` stage: its upstream and transform.
///
/// `Sendable`: both stored properties are immutable and `Sendable`.
@usableFromInline final class MapStage<T, R, E>: Sendable {
    @usableFromInline let upstream: Signal<T, E>
    @usableFromInline let transform: @Sendable (T) -> R

    @inlinable init(upstream: Signal<T, E>, transform: @escaping @Sendable (T) -> R) {
        self.upstream = upstream
        self.transform = transform
    }

    /// The signal of `filter(predicate)` applied to this stage: one stage that maps, then filters.
    @inlinable func filtered(by predicate: @escaping @Sendable (R) -> Bool) -> Signal<R, E> {
        let fused = MapFilterStage(upstream: self.upstream, transform: self.transform, predicate: predicate)
        return Signal<R, E> { [fused] subscriber in
            return fused.upstream.run(MapFilterSubscriber(target: subscriber, stage: fused))
        }
    }
}

/// A `filter` stage: its upstream and predicate.
///
/// `Sendable`: both stored properties are immutable and `Sendable`.
@usableFromInline final class FilterStage<T, E>: Sendable {
    @usableFromInline let upstream: Signal<T, E>
    @usableFromInline let predicate: @Sendable (T) -> Bool

    @inlinable init(upstream: Signal<T, E>, predicate: @escaping @Sendable (T) -> Bool) {
        self.upstream = upstream
        self.predicate = predicate
    }
}

/// `map` followed by `filter`, as one stage.
///
/// `Sendable`: the stored properties are immutable and `Sendable`.
@usableFromInline final class MapFilterStage<T, R, E>: Sendable {
    @usableFromInline let upstream: Signal<T, E>
    @usableFromInline let transform: @Sendable (T) -> R
    @usableFromInline let predicate: @Sendable (R) -> Bool

    @inlinable init(
        upstream: Signal<T, E>,
        transform: @escaping @Sendable (T) -> R,
        predicate: @escaping @Sendable (R) -> Bool
    ) {
        self.upstream = upstream
        self.transform = transform
        self.predicate = predicate
    }
}

/// The subscriber of a `map` stage: its value callback captures only the subscriber itself, and is
/// released, ending the cycle, when the subscriber terminates or is disposed. Its error or completion
/// goes on to the target through ``TerminalForwardingSubscriber``.
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `stage` is immutable and `Sendable`.
@usableFromInline final class MapSubscriber<T, R, E>: TerminalForwardingSubscriber<T, R, E>, @unchecked Sendable {
    @usableFromInline let stage: MapStage<T, R, E>

    @inlinable init(target: Subscriber<R, E>, stage: MapStage<T, R, E>) {
        self.stage = stage
        super.init(target: target, next: nil)
        // Set before the subscriber is shared, like an initialiser's stores.
        self.next = { value in
            self.target.putNext(self.stage.transform(value))
        }
    }
}

/// The subscriber of a `filter` stage (see ``MapSubscriber``).
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `stage` is immutable and `Sendable`.
@usableFromInline final class FilterSubscriber<T, E>: TerminalForwardingSubscriber<T, T, E>, @unchecked Sendable {
    @usableFromInline let stage: FilterStage<T, E>

    @inlinable init(target: Subscriber<T, E>, stage: FilterStage<T, E>) {
        self.stage = stage
        super.init(target: target, next: nil)
        self.next = { value in
            if self.stage.predicate(value) {
                self.target.putNext(value)
            }
        }
    }
}

/// The subscriber of a fused `map` and `filter` (see ``MapSubscriber``).
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `stage` is immutable and `Sendable`.
@usableFromInline final class MapFilterSubscriber<T, R, E>: TerminalForwardingSubscriber<T, R, E>, @unchecked Sendable {
    @usableFromInline let stage: MapFilterStage<T, R, E>

    @inlinable init(target: Subscriber<R, E>, stage: MapFilterStage<T, R, E>) {
        self.stage = stage
        super.init(target: target, next: nil)
        self.next = { value in
            let mapped = self.stage.transform(value)
            // The map closure may have ended the subscription (disposed it, or made the source send a
            // terminal event). A filter stage of its own would then not be called: ask again before
            // calling this one.
            guard self.admitsValues else { return }
            if self.stage.predicate(mapped) {
                self.target.putNext(mapped)
            }
        }
    }
}

/// How a signal's next operator may join it as one stage (one subscriber per subscription instead of
/// two). Only a `map` stage offers one today: a `filter` applied to it makes a ``MapStage`` that maps
/// and filters. The core type stores this and knows nothing of what it holds.
@usableFromInline struct SignalFusion<T, E>: Sendable {
    /// Makes the signal of `filter(predicate)` applied to this signal, as one stage.
    @usableFromInline let filter: @Sendable (@escaping @Sendable (T) -> Bool) -> Signal<T, E>

    @inlinable init(filter: @escaping @Sendable (@escaping @Sendable (T) -> Bool) -> Signal<T, E>) {
        self.filter = filter
    }
}
