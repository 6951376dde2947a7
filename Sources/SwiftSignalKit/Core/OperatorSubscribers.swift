// The library's own subscribers, in one tree under ``Subscriber`` (Core/Subscriber.swift), which holds
// all the locking and lifecycle (``SubscriberStateMachine``). A subclass customises it in one of three
// ways, and only these:
//
// 1. its value callback: the `next` closure, or `operatorNext` for an operator's stage;
// 2. where its terminal event goes: `forwardError(_:)` / `forwardCompletion()` overrides send it to a
//    target subscriber instead of calling closures;
// 3. whether the downstream has ended: `downstreamIsTerminated`, asked by loops inside generators;
// 4. whether a producer may wait for the downstream consumer's room: `downstreamDemand` (only where
//    each value goes on synchronously; see Core/SignalDemand.swift).
//
// The tree:
//
//     Subscriber                              Core/Subscriber.swift
//     |- FirstEventHandlers                   Core/FirstEventSubscriber.swift (get(), first())
//     |  `- FirstEventSubscriber
//     `- SubscriptionSubscriber               this file: its own disposable
//        |- LinkedSubscriber                  this file: start(linkedTo:)      (1, 3)
//        |  `- DemandPassingLinkedSubscriber  this file: start(forwardingTo:)  (1, 3, 4)
//        |- TerminalForwardingSubscriber      this file                        (1, 2, 3, 4)
//        |  `- MapSubscriber, FilterSubscriber, MapFilterSubscriber   Operators/MapFilterStages.swift
//        |- CombineLatestSourceSubscriber     Operators/CombineLatest/          (1, 2, 3)
//        |- SwitchInnerSubscriber             Operators/SwitchToLatest/         (1, 2, 3)
//        `- PromiseSource                     HotSources/Promise.swift          (1)
//
// `start(next:error:completed:)` of a `map` or `filter` signal makes a plain `SubscriptionSubscriber`
// whose value callback runs the stage's closures before the caller's (Operators/MapFilterStages.swift):
// a customisation of kind 1, made where the stage is specialised, not a subclass.

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

/// The subscriber that `Signal.start` creates, which is also the disposable it returns: a subscription
/// is then one object fewer than with a separate disposable that points to the subscriber.
///
/// `dispose()` ends the subscription as described on ``Subscriber``. The library's other subscribers that
/// are their own disposable (`MapSubscriber`, `FilterSubscriber`, `MapFilterSubscriber`,
/// `SwitchInnerSubscriber`, `PromiseSource`) subclass this one.
///
/// `@unchecked Sendable`: restated from ``Subscriber``; this subclass adds no stored state.
@usableFromInline class SubscriptionSubscriber<T, E>: Subscriber<T, E>, Disposable, @unchecked Sendable {
    @inlinable @preconcurrency override init(
        next: (@Sendable (T) -> Void)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) {
        super.init(next: next, error: error, completed: completed)
    }

    @inlinable override init(operatorNext next: (@Sendable (T) -> Void)?) {
        super.init(operatorNext: next)
    }

    /// A subscriber with the consumer's callbacks and its room, for a consumer that paces its producers.
    @inlinable init(
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?,
        demand: (any SignalDemand)?
    ) {
        super.init(next: next, error: error, completed: completed)
        if let demand {
            // Set before the subscriber is shared, like an initialiser's stores.
            self.extras = PacedSubscriberExtras(error: error, completed: completed, demand: demand)
        }
    }

    @inlinable final func dispose() {
        self.disposeSubscription()
    }
}

/// The subscriber of `start(linkedTo:)`: callbacks of its own, and a downstream it only asks whether it
/// has ended (see ``Subscriber/isTerminated``), and, when its values go on to that downstream
/// synchronously (``DemandPassingLinkedSubscriber``), for its room.
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `downstream` is immutable and `Sendable`.
@usableFromInline class LinkedSubscriber<T, E>: SubscriptionSubscriber<T, E>, @unchecked Sendable {
    @usableFromInline let downstream: any DownstreamLink

    @inlinable init(
        downstream: any DownstreamLink,
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?
    ) {
        self.downstream = downstream
        super.init(next: next, error: error, completed: completed)
    }

    @inlinable override final var downstreamIsTerminated: Bool {
        return self.downstream.isTerminated
    }
}

/// A ``LinkedSubscriber`` whose value callback hands each value to its downstream on the same thread
/// (`start(forwardingTo:)`, `start(forwardingValuesTo:)`): a producer upstream may wait for the
/// downstream consumer's room (see ``SignalDemand``).
///
/// `@unchecked Sendable`: restated from ``Subscriber``; it adds no stored state.
@usableFromInline final class DemandPassingLinkedSubscriber<T, E>: LinkedSubscriber<T, E>, @unchecked Sendable {
    @inlinable override var downstreamDemand: (any SignalDemand)? {
        return self.downstream.demand
    }
}

/// An operator's subscriber that handles values itself and sends its error or completion on to
/// `target`, which has the same error type: `start(forwardingTerminalsTo:next:)`, and the base of the
/// `map` and `filter` stages.
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `target` is immutable and `Sendable`.
@usableFromInline class TerminalForwardingSubscriber<T, R, E>: SubscriptionSubscriber<T, E>, @unchecked Sendable {
    @usableFromInline let target: Subscriber<R, E>

    @inlinable init(target: Subscriber<R, E>, next: (@Sendable (T) -> Void)?) {
        self.target = target
        super.init(operatorNext: next)
    }

    @inlinable override final func forwardError(_ error: E) {
        self.target.putError(error)
    }

    @inlinable override final func forwardCompletion() {
        self.target.putCompletion()
    }

    @inlinable override final var downstreamIsTerminated: Bool {
        return self.target.isTerminated
    }

    /// Every user hands values on to `target` on the sending thread (or drops them): `map`, `filter`,
    /// `take`, `skip`, `beforeNext`, `afterNext`, `flatMap`, `distinctUntilChanged`.
    @inlinable override final var downstreamDemand: (any SignalDemand)? {
        return self.target.demand
    }
}
