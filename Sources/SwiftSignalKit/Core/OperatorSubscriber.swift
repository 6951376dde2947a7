// The library's own subscribers: one generic class, ``OperatorSubscriber``, customised by a stage value.
//
//     Subscriber                    Core/Subscriber.swift: the locking, the delivery gate, the lifecycle
//     |- FirstEventHandlers         Core/FirstEventSubscriber.swift: get(), first()
//     |  `- FirstEventSubscriber
//     `- OperatorSubscriber<Stage>  this file: every other subscriber, `start(next:error:completed:)`'s too
//
// An operator says what its subscriber does with a struct conforming to ``SubscriberStage`` (its stored
// properties are the subscriber's, inline) and subscribes upstream one way, with
// `Signal.subscribe(_:next:error:completed:)` or, for a stage that handles values itself,
// `Signal.subscribe(_:error:completed:)`. `CONTRIBUTING.md` ("Adding an operator") shows one written
// this way. The stages every operator can use are at the end of this file; an operator with a stage of
// its own keeps it beside the operator (`MapFilterStages.swift`, `CombineLatestStorage.swift`,
// `SwitchToLatest.swift`, `Promise.swift`).

/// A subscriber seen only as "has it ended?", so an operator's subscriber can ask its downstream.
@usableFromInline
protocol DownstreamLink: AnyObject, Sendable {
    var isTerminated: Bool { get }
    var demand: (any SignalDemand)? { get }
}

extension DownstreamLink {
    /// No room to report: a link that is not one subscriber (`share`'s listeners) is where a consumer's
    /// pacing stops.
    @inlinable var demand: (any SignalDemand)? { nil }
}

/// What an operator's subscriber does with its events: where its error and completion go when it has no
/// callbacks for them, and what it asks its downstream. Stored inline in the ``OperatorSubscriber``, so a
/// stage's stored properties cost the subscriber exactly their bytes.
///
/// Each requirement runs outside every lock of the library, on the thread that sent the event, at most
/// once for a terminal event. The defaults drop terminal events and report no downstream, as a
/// subscription made by `start(next:error:completed:)` does.
@usableFromInline protocol SubscriberStage<Input, Failure>: Sendable {
    associatedtype Input
    associatedtype Failure

    /// The subscriber's error, when no error callback was given.
    func receive(error: Failure)

    /// The subscriber's completion, when no completion callback was given.
    func receiveCompletion()

    /// Whether the subscriber this one's events go on to has ended (see ``Subscriber/isTerminated``).
    var downstreamIsTerminated: Bool { get }

    /// The room of the consumer this subscriber's values reach on the sending thread, for a producer that
    /// can wait for it (see ``SignalDemand``); nil unless every value goes on synchronously.
    var downstreamDemand: (any SignalDemand)? { get }
}

extension SubscriberStage {
    @inlinable func receive(error: Failure) {}

    @inlinable func receiveCompletion() {}

    @inlinable var downstreamIsTerminated: Bool { false }

    @inlinable var downstreamDemand: (any SignalDemand)? { nil }
}

/// A stage that handles the values too: `Signal.subscribe(_:error:completed:)` makes the subscriber's
/// value callback call ``receive(_:by:)``. The callback captures only the subscriber (a closure capturing
/// one object needs no context allocation), and is released, ending the cycle, when the subscriber
/// terminates or is disposed.
@usableFromInline protocol ValueStage<Input, Failure>: SubscriberStage {
    /// A value the subscriber admitted. `subscriber` is the one receiving it, for a stage that runs two
    /// closures and asks between them whether it still admits values (``Subscriber/admitsValues``).
    func receive(_ value: Input, by subscriber: Subscriber<Input, Failure>)
}

/// The one subscriber class of the library's operators, and of `start(next:error:completed:)`: the
/// ``Subscriber`` it extends holds all the locking and lifecycle, and `stage` says where the events go.
/// It is the subscription's disposable too, so a subscription is one object.
@usableFromInline
final class OperatorSubscriber<Stage: SubscriberStage>: Subscriber<Stage.Input, Stage.Failure>, Disposable {
    @usableFromInline let stage: Stage

    /// A subscriber with callbacks: the ones given replace the stage's handling of their events.
    ///
    /// - Parameter demand: The room of the consumer that made the subscriber, when it paces its producers.
    @inlinable init(
        _ stage: Stage,
        next: (@Sendable (Stage.Input) -> Void)?,
        error: (@Sendable (Stage.Failure) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)? = nil
    ) {
        self.stage = stage
        super.init(next: next, error: error, completed: completed)
        if let demand {
            // Set before the subscriber is shared, like an initialiser's stores.
            self.extras = PacedSubscriberExtras(error: error, completed: completed, demand: demand)
        }
    }

    /// A subscriber whose values go to the stage, and whose terminal events go to the callbacks given, or
    /// else to the stage.
    @inlinable init(
        _ stage: Stage,
        error: (@Sendable (Stage.Failure) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) where Stage: ValueStage {
        self.stage = stage
        super.init(next: nil, error: error, completed: completed)
        // Set before the subscriber is shared, like an initialiser's stores.
        self.next = ValueCallback { value in
            self.stage.receive(value, by: self)
        }
    }

    @inlinable override func forwardError(_ error: Stage.Failure) {
        self.stage.receive(error: error)
    }

    @inlinable override func forwardCompletion() {
        self.stage.receiveCompletion()
    }

    @inlinable override var downstreamIsTerminated: Bool {
        return self.stage.downstreamIsTerminated
    }

    @inlinable override var downstreamDemand: (any SignalDemand)? {
        return self.stage.downstreamDemand
    }

    @inlinable func dispose() {
        self.disposeSubscription()
    }
}

// Safe: restated from `Subscriber`, whose state is behind its mutex and delivery gate; the one stored
// property added here, `stage`, is immutable and `Sendable` (every stage is a `Sendable` struct).
extension OperatorSubscriber: @unchecked Sendable {}

extension Signal {
    /// Subscribes an operator to this signal: the one way an operator starts its upstream. The callbacks
    /// given replace the stage's handling of their events.
    @inlinable @inline(__always)
    func subscribe<Stage: SubscriberStage<T, E>>(
        _ stage: Stage,
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        return self.run(OperatorSubscriber(stage, next: next, error: error, completed: completed))
    }

    /// Subscribes an operator whose stage handles the values (see ``ValueStage``); the callbacks given
    /// replace the stage's handling of the terminal events.
    @inlinable @inline(__always)
    func subscribe<Stage: ValueStage<T, E>>(
        _ stage: Stage,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        return self.run(OperatorSubscriber(stage, error: error, completed: completed))
    }
}

// The stages every operator can use.

/// The stage of a subscription whose events go only to its callbacks: what `start(next:error:completed:)`
/// makes.
@usableFromInline struct CallbacksOnly<Input, Failure>: SubscriberStage {
    @inlinable init() {}
}

/// An operator's subscriber with callbacks of its own, and a downstream it asks only whether it has
/// ended (see ``Subscriber/isTerminated``) and, when its value callback hands each value to that
/// downstream on the same thread, for its room.
@usableFromInline struct Linked<Input, Failure, Downstream: DownstreamLink>: SubscriberStage {
    @usableFromInline let downstream: Downstream
    /// Whether the value callback hands each value to `downstream` on the sending thread, so that a
    /// producer upstream may wait for the room of the consumer below (see ``SignalDemand``). Never for an
    /// operator that buffers, hops threads or combines.
    @usableFromInline let passesDemand: Bool

    @inlinable init(to downstream: Downstream, passingDemand: Bool = false) {
        self.downstream = downstream
        self.passesDemand = passingDemand
    }

    @inlinable var downstreamIsTerminated: Bool { self.downstream.isTerminated }

    @inlinable var downstreamDemand: (any SignalDemand)? { self.passesDemand ? self.downstream.demand : nil }
}

/// A stage whose events go on to one subscriber, `target`, on the sending thread: its completion, and
/// its answers about the downstream, are the target's. A stage says itself what it does with values and
/// errors, since the types may differ.
@usableFromInline protocol ForwardingToTarget: SubscriberStage {
    associatedtype TargetValue
    associatedtype TargetFailure
    var target: Subscriber<TargetValue, TargetFailure> { get }
}

extension ForwardingToTarget {
    @inlinable func receiveCompletion() { self.target.putCompletion() }

    @inlinable var downstreamIsTerminated: Bool { self.target.isTerminated }

    @inlinable var downstreamDemand: (any SignalDemand)? { self.target.demand }
}

/// Sends every event on to `target`.
@usableFromInline struct Forwarding<Input, Failure>: ValueStage, ForwardingToTarget {
    @usableFromInline let target: Subscriber<Input, Failure>

    @inlinable init(to target: Subscriber<Input, Failure>) {
        self.target = target
    }

    @inlinable func receive(_ value: Input, by subscriber: Subscriber<Input, Failure>) {
        self.target.putNext(value)
    }

    @inlinable func receive(error: Failure) { self.target.putError(error) }
}

/// Sends values and completion on to `target`, whose error type differs: subscribe with an error
/// callback, which the stage cannot replace.
@usableFromInline struct ForwardingValues<Input, Failure, TargetFailure>: ValueStage, ForwardingToTarget {
    @usableFromInline let target: Subscriber<Input, TargetFailure>

    @inlinable init(to target: Subscriber<Input, TargetFailure>) {
        self.target = target
    }

    @inlinable func receive(_ value: Input, by subscriber: Subscriber<Input, Failure>) {
        self.target.putNext(value)
    }
}

/// Sends the terminal events on to `target`; the values go to the subscriber's value callback, which
/// hands each one on (or drops it) on the sending thread.
@usableFromInline struct ForwardingTerminals<Input, Output, Failure>: ForwardingToTarget {
    @usableFromInline let target: Subscriber<Output, Failure>

    @inlinable init(to target: Subscriber<Output, Failure>) {
        self.target = target
    }

    @inlinable func receive(error: Failure) { self.target.putError(error) }
}
