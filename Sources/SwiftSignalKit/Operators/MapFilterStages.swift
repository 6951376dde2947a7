// The stages behind `map` and `filter`, and their subscribers.
//
// A stage object holds what its signal was built from (the upstream signal and the closure). The
// signal's closures capture only the stage, and each subscriber holds the stage rather than the
// closure: a closure capturing one object needs no context, and an object reference is 8 bytes where a
// closure is 16. A server that keeps hundreds of thousands of subscriptions pays for every byte.
//
// Two fusions save a subscriber per subscription, and neither can be seen from outside: the closures
// run on the delivering thread, one after the other, as they did in separate stages, and between any
// two the subscription asks again whether it is still live (the next stage did so on receiving the
// value), so a closure that ends the subscription keeps the later ones from running.
//
// - `map { ... } |> filter { ... }` is one stage (``MapFilterStage``).
// - `start(next:error:completed:)` of a stage's signal makes one subscriber that runs the stage's
//   closures and then the caller's (each stage's `start`). That subscriber holds the closures, not the
//   stage: a chain built for one subscription (`never() |> map |> filter` made per call, as server code
//   does) is freed, with its upstream signal, once it has started. What those closures capture is released
//   when the subscription ends, with the callbacks (the stage's first), where a stage subscriber kept
//   it until its source let go of it; that is the one difference a deinit could see.
//
// The closures a signal offers for fusion (``SignalFusion``) are made where `map` and `filter` are
// specialised for the client's types, so the subscriber's value callback they build is specialised too:
// made in generic code reached through a class method, it ran unspecialised and its context carried
// the type metadata (16 bytes more per subscription).
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
        return Signal<R, E>(
            generator: { [fused] subscriber in
                return fused.upstream.subscribe(MappingAndFiltering(to: subscriber, stage: fused))
            },
            fusion: SignalFusion(
                filter: nil,
                start: { [fused] next, error, completed, demand in
                    return fused.start(next: next, error: error, completed: completed, demand: demand)
                }))
    }

    /// `start(next:error:completed:)` of this stage's signal: one subscriber maps and calls `next`, with
    /// the room of the consumer that made it when it paces its producers.
    @inlinable func start(
        next: (@Sendable (R) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?
    ) -> Disposable {
        let transform = self.transform
        return self.upstream.start(error: error, completed: completed, demand: demand) { subscriber in
            return { value in
                let mapped = transform(value)
                guard let next, subscriber.admitsValues else { return }
                next(mapped)
            }
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

    /// `start(next:error:completed:)` of this stage's signal (see ``MapStage/start(next:error:completed:)``).
    @inlinable func start(
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?
    ) -> Disposable {
        let predicate = self.predicate
        return self.upstream.start(error: error, completed: completed, demand: demand) { subscriber in
            return { value in
                guard predicate(value), let next, subscriber.admitsValues else { return }
                next(value)
            }
        }
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

    /// `start(next:error:completed:)` of this stage's signal (see ``MapStage/start(next:error:completed:)``).
    @inlinable func start(
        next: (@Sendable (R) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?
    ) -> Disposable {
        let transform = self.transform
        let predicate = self.predicate
        return self.upstream.start(error: error, completed: completed, demand: demand) { subscriber in
            return { value in
                let mapped = transform(value)
                guard subscriber.admitsValues, predicate(mapped), let next, subscriber.admitsValues else { return }
                next(mapped)
            }
        }
    }
}

/// What the subscriber of a `map` stage does (see ``ValueStage``): maps each value and hands it to the
/// target; its error or completion goes on to the target.
@usableFromInline struct Mapping<T, R, E>: ValueStage {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = E

    @usableFromInline let target: Subscriber<R, E>
    @usableFromInline let stage: MapStage<T, R, E>

    @inlinable init(to target: Subscriber<R, E>, stage: MapStage<T, R, E>) {
        self.target = target
        self.stage = stage
    }

    @inlinable func receive(_ value: T, by subscriber: Subscriber<T, E>) {
        self.target.putNext(self.stage.transform(value))
    }
}

/// What the subscriber of a `filter` stage does (see ``Mapping``).
@usableFromInline struct Filtering<T, E>: ValueStage {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = E

    @usableFromInline let target: Subscriber<T, E>
    @usableFromInline let stage: FilterStage<T, E>

    @inlinable init(to target: Subscriber<T, E>, stage: FilterStage<T, E>) {
        self.target = target
        self.stage = stage
    }

    @inlinable func receive(_ value: T, by subscriber: Subscriber<T, E>) {
        if self.stage.predicate(value) {
            self.target.putNext(value)
        }
    }
}

/// What the subscriber of a fused `map` and `filter` does (see ``Mapping``).
@usableFromInline struct MappingAndFiltering<T, R, E>: ValueStage {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = E

    @usableFromInline let target: Subscriber<R, E>
    @usableFromInline let stage: MapFilterStage<T, R, E>

    @inlinable init(to target: Subscriber<R, E>, stage: MapFilterStage<T, R, E>) {
        self.target = target
        self.stage = stage
    }

    @inlinable func receive(_ value: T, by subscriber: Subscriber<T, E>) {
        let mapped = self.stage.transform(value)
        // The map closure may have ended the subscription (disposed it, or made the source send a
        // terminal event). A filter stage of its own would then not be called: ask again before
        // calling this one.
        guard subscriber.admitsValues else { return }
        if self.stage.predicate(mapped) {
            self.target.putNext(mapped)
        }
    }
}

/// The terminal events and the downstream questions of the `map` and `filter` stages' subscribers: all
/// go to the target.
@usableFromInline protocol ForwardsTerminalsToTarget: SubscriberStage {
    associatedtype Output
    var target: Subscriber<Output, Failure> { get }
}

extension ForwardsTerminalsToTarget {
    @inlinable func receive(error: Failure) { self.target.putError(error) }

    @inlinable func receiveCompletion() { self.target.putCompletion() }

    @inlinable var downstreamIsTerminated: Bool { self.target.isTerminated }

    @inlinable var downstreamDemand: (any SignalDemand)? { self.target.demand }
}

extension Mapping: ForwardsTerminalsToTarget {}
extension Filtering: ForwardsTerminalsToTarget {}
extension MappingAndFiltering: ForwardsTerminalsToTarget {}

extension Signal {
    /// Starts the signal with one subscriber whose value callback `makeNext` builds from the subscriber
    /// itself (to ask, between the stage's closures and the caller's, whether it is still live): the
    /// `start(next:error:completed:)` of a `map` or `filter` signal. The callback holds the subscriber
    /// until the subscription ends, which releases the callback and the cycle with it.
    @inlinable func start(
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?,
        next makeNext: (OperatorSubscriber<CallbacksOnly<T, E>>) -> @Sendable (T) -> Void
    ) -> Disposable {
        let subscriber = OperatorSubscriber(CallbacksOnly<T, E>(), next: nil, error: error, completed: completed, demand: demand)
        // Set before the subscriber is shared, like an initialiser's stores.
        subscriber.next = ValueCallback(makeNext(subscriber))
        return self.run(subscriber)
    }
}

/// What a signal made by `map` or `filter` offers whoever uses it next, so that two stages become one
/// subscriber per subscription instead of two: a `filter` applied to a `map` signal, and
/// `start(next:error:completed:)` of any of them (see the top of this file). The core type stores this
/// and knows nothing of what it holds.
@usableFromInline struct SignalFusion<T, E>: Sendable {
    /// Makes the signal of `filter(predicate)` applied to this signal, as one stage; nil when the stage
    /// does not join a `filter` (only a `map` stage does).
    @usableFromInline let filter: (@Sendable (@escaping @Sendable (T) -> Bool) -> Signal<T, E>)?
    /// Starts the signal with one subscriber that runs the stage's closures, then the given callbacks;
    /// the last argument is the room of a consumer that paces its producers (see ``SignalDemand``).
    @usableFromInline let start: Start

    @usableFromInline typealias Start =
        @Sendable (
            (@Sendable (T) -> Void)?, (@Sendable (E) -> Void)?, (@Sendable () -> Void)?, (any SignalDemand)?
        ) -> Disposable

    @inlinable init(filter: (@Sendable (@escaping @Sendable (T) -> Bool) -> Signal<T, E>)?, start: @escaping Start) {
        self.filter = filter
        self.start = start
    }
}
