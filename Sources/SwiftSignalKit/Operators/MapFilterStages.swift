// The stages behind `map` and `filter`: one value path for each, whoever receives its results.
//
// A step (``MapStep``, ``FilterStep``, ``MapFilterStep``) is what one stateless stage does to a value,
// written once. Both subscribers a stage makes run it the same way: the one under another operator
// sends each result to the next subscriber (``StatelessStage/subscribe(forwardingTo:)``), and the one
// that `start(next:error:completed:)` of the stage's signal makes calls the caller's value callback.
//
// A stage object (``StatelessStage``) holds what its signal was built from: the upstream signal and the
// step. The signal's closures capture only the stage (a closure capturing one object needs no context).
// A subscriber's value callback holds the step (or the stage), so ending the subscription releases the
// step's closures and what they captured, with the callbacks, even when a source keeps its subscriber
// after the end, as the original library did. (Until 2026-11-29 the subscriber under another operator
// held the stage itself, 8 bytes and no allocation, and released it only when its source let go of it.)
//
// Two fusions save a subscriber per subscription, and neither can be seen from outside: the closures
// run on the delivering thread, one after the other, as they did in separate stages, and between any
// two the subscription asks again whether it is still live (the next stage did so on receiving the
// value), so a closure that ends the subscription keeps the later ones from running.
//
// - `map { ... } |> filter { ... }` is one stage (``MapFilterStep``).
// - `start(next:error:completed:)` of a stage's signal makes one subscriber that runs the step and then
//   the caller's callback. That subscriber holds the step's closures, not the stage: a chain built for
//   one subscription (`never() |> map |> filter` made per call, as server code does) is freed, with its
//   upstream signal, once it has started.
//
// The closures a signal offers for fusion (``SignalFusion``) are made where `map` and `filter` are
// specialised for the client's types, so the subscriber they make is specialised too: made in generic
// code reached through a class method, its value path ran unspecialised, and looked types up per value.

/// What one stateless stage does to a value: the result to send on, or nil to drop it.
@usableFromInline protocol ValueStep<Input, Output>: Sendable {
    associatedtype Input
    associatedtype Output

    /// The value to send on for `value`. `subscriber` is the one receiving `value`: a step that runs two
    /// closures asks it between them whether it still admits values.
    func apply<Failure>(_ value: Input, by subscriber: Subscriber<Input, Failure>) -> Output?
}

/// A `map`.
@usableFromInline struct MapStep<Input, Output>: ValueStep {
    @usableFromInline let transform: @Sendable (Input) -> Output

    @inlinable init(_ transform: @escaping @Sendable (Input) -> Output) {
        self.transform = transform
    }

    @inlinable func apply<Failure>(_ value: Input, by subscriber: Subscriber<Input, Failure>) -> Output? {
        return self.transform(value)
    }
}

/// A `filter`.
@usableFromInline struct FilterStep<Input>: ValueStep {
    @usableFromInline typealias Output = Input

    @usableFromInline let predicate: @Sendable (Input) -> Bool

    @inlinable init(_ predicate: @escaping @Sendable (Input) -> Bool) {
        self.predicate = predicate
    }

    @inlinable func apply<Failure>(_ value: Input, by subscriber: Subscriber<Input, Failure>) -> Input? {
        return self.predicate(value) ? value : nil
    }
}

/// A `map` followed by a `filter`, as one step.
@usableFromInline struct MapFilterStep<Input, Output>: ValueStep {
    @usableFromInline let transform: @Sendable (Input) -> Output
    @usableFromInline let predicate: @Sendable (Output) -> Bool

    @inlinable init(_ map: MapStep<Input, Output>, _ filter: FilterStep<Output>) {
        self.transform = map.transform
        self.predicate = filter.predicate
    }

    @inlinable func apply<Failure>(_ value: Input, by subscriber: Subscriber<Input, Failure>) -> Output? {
        let mapped = self.transform(value)
        // The map closure may have ended the subscription (disposed it, or made the source send a
        // terminal event). A filter stage of its own would then not be called: ask again before
        // calling this one.
        guard subscriber.admitsValues, self.predicate(mapped) else { return nil }
        return mapped
    }
}

/// A `map` or `filter` stage (or both, fused): its upstream and its step. Its signal's closures capture
/// only it (see the top of this file).
///
/// `Sendable`: both stored properties are immutable and `Sendable`.
@usableFromInline final class StatelessStage<Step: ValueStep, E>: Sendable {
    @usableFromInline let upstream: Signal<Step.Input, E>
    @usableFromInline let step: Step

    @inlinable init(upstream: Signal<Step.Input, E>, step: Step) {
        self.upstream = upstream
        self.step = step
    }

    /// The stage's signal. `fusedWithFilter` makes the signal of a `filter` applied to it, as one stage;
    /// nil where the stage does not join a `filter` (only a `map` does).
    @inlinable func signal(
        fusedWithFilter: (@Sendable (@escaping @Sendable (Step.Output) -> Bool) -> Signal<Step.Output, E>)?
    ) -> Signal<Step.Output, E> {
        return Signal<Step.Output, E>(
            generator: { [self] subscriber in
                return self.subscribe(forwardingTo: subscriber)
            },
            fusion: SignalFusion(
                filter: fusedWithFilter,
                start: { [self] next, error, completed, demand in
                    return self.start(next: next, error: error, completed: completed, demand: demand)
                }))
    }

    /// The stage's generator: subscribes upstream with a subscriber that runs the step and sends each
    /// result on to `target`, which takes the terminal events too. The step is held by the subscriber's
    /// value callback, with the subscriber (to ask whether it still admits values), not by the
    /// subscriber itself: ending the subscription releases the callback, and with it the stage and
    /// what its closures captured, even when a source keeps its subscriber after the end (one
    /// allocation, for the callback's context, where holding the stage in the subscriber cost none).
    @inlinable func subscribe(forwardingTo target: Subscriber<Step.Output, E>) -> Disposable {
        let subscriber = OperatorSubscriber(
            ForwardingTerminals<Step.Input, Step.Output, E>(to: target), next: nil, error: nil, completed: nil)
        // Set before the subscriber is shared, like an initialiser's stores. It holds the subscriber
        // until the subscription ends, which releases it and the cycle with it.
        subscriber.next = ValueCallback { [self] value in
            if let result = self.step.apply(value, by: subscriber) {
                subscriber.stage.target.putNext(result)
            }
        }
        return self.upstream.run(subscriber)
    }

    /// `start(next:error:completed:)` of the stage's signal: one subscriber runs the step, then `next`.
    /// Its value callback holds the step's closures and `next`, not the stage, so the subscription does
    /// not keep the upstream signal alive (see the top of this file), and all of them are released when
    /// the subscription ends, as every callback is.
    @inlinable func start(
        next: (@Sendable (Step.Output) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?
    ) -> Disposable {
        let step = self.step
        let subscriber = OperatorSubscriber(
            CallbacksOnly<Step.Input, E>(), next: nil, error: error, completed: completed, demand: demand)
        // Set before the subscriber is shared, like an initialiser's stores. It holds the subscriber
        // until the subscription ends, which releases it and the cycle with it.
        subscriber.next = ValueCallback { value in
            // The next stage would have asked whether the subscription is still live on receiving the
            // result: so does this one.
            guard let result = step.apply(value, by: subscriber), let next, subscriber.admitsValues else { return }
            next(result)
        }
        return self.upstream.run(subscriber)
    }
}

extension StatelessStage {
    /// The signal of `filter(predicate)` applied to this `map` stage: one stage that maps, then filters.
    @inlinable func filtered<T, R>(by predicate: @escaping @Sendable (R) -> Bool) -> Signal<R, E>
    where Step == MapStep<T, R> {
        let fused = StatelessStage<MapFilterStep<T, R>, E>(
            upstream: self.upstream, step: MapFilterStep(self.step, FilterStep(predicate)))
        return fused.signal(fusedWithFilter: nil)
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
