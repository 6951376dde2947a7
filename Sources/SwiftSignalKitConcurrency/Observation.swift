import Foundation
import Observation
import SwiftSignalKit

extension Signal where T: Sendable, E == NoError {
    /// A signal of what `read` returns from `@Observable` models: the value at the first read, which
    /// runs in an action of `scheduler` just after the subscription starts (so a change made before
    /// that action runs, in the same main-actor turn as `start`, is already in it), then the new value
    /// after each change to a property that `read` used.
    ///
    /// ```swift
    /// import Observation
    /// import SwiftSignalKit
    /// import SwiftSignalKitConcurrency
    ///
    /// @MainActor @Observable final class Cart { var items: [Item] = [] }
    ///
    /// @MainActor func logTotals(of cart: Cart) -> Disposable {
    ///     let totals = Signal.observing { cart.items.reduce(0) { $0 + $1.price } }
    ///     return totals.start(next: { total in log(total) })
    /// }
    /// ```
    ///
    /// - `read` runs on the main actor, in actions of `scheduler`: once when the subscription starts,
    ///   and again after each change. It is tracked with `withObservationTracking`, so every
    ///   observable property it reads, of any number of models, is watched.
    /// - Changes are coalesced: a change schedules one read, and the changes made before that read runs
    ///   (in the same main-actor turn, say) give one value, the latest. Values in between are skipped.
    ///   A change whose read gives an equal result sends that result again; add `distinctUntilChanged`
    ///   if that matters. (An `@Observable` property set to an equal value does not count as a change.)
    /// - The signal never completes; disposing stops the reads. A change that comes after `dispose()`
    ///   schedules nothing. A `dispose()` called off the main actor does not wait for a read that is
    ///   running there, so that read's value may still be sent after it returns; dispose on the main
    ///   actor for a hard stop.
    /// - Change the models on the main actor, as their `@MainActor` asks. Observation reports a change
    ///   before the new value is stored, so a read scheduled by a change made on another thread can run
    ///   before the store lands, and that change's value is then never sent.
    ///
    /// - Parameters:
    ///   - scheduler: Runs the reads, and must run them on the main actor: the main queue by default, or
    ///     a `VirtualTimeScheduler` moved by a test that runs on the main actor.
    ///   - read: Reads the models, on the main actor.
    /// - Returns: A cold signal; each subscription tracks on its own.
    ///
    /// > Important: A scheduler that runs an action off the main actor (neither on the main queue nor
    /// > on the main thread) stops the process, with a message naming this function.
    public static func observing(
        on scheduler: some SignalScheduler = Queue.mainQueue(), _ read: @escaping @MainActor @Sendable () -> T
    ) -> Signal<T, NoError> {
        return Signal { subscriber in
            let tracking = ObservationTracking(subscriber: subscriber, scheduler: scheduler, read: read)
            tracking.scheduleRead()
            return ActionDisposable { tracking.stop() }
        }
    }

    /// Keeps `object[keyPath: keyPath]` equal to the signal's latest value, setting it on the main actor,
    /// until the returned disposable is disposed, the object is released or the signal ends.
    ///
    /// ```swift
    /// import Observation
    /// import SwiftSignalKit
    /// import SwiftSignalKitConcurrency
    ///
    /// @MainActor @Observable final class StatusModel {
    ///     var text = ""
    ///     var subscription: Disposable?
    /// }
    ///
    /// @MainActor func show(_ statusSignal: Signal<String, NoError>, in model: StatusModel) {
    ///     model.subscription = statusSignal.assign(to: \.text, on: model)
    /// }
    /// ```
    ///
    /// - Values are set in actions of `scheduler`, on the main actor, in order. Values that arrive faster
    ///   than the main actor takes them are coalesced: one action sets the latest, so intermediate values
    ///   may never be set, and the last one always is.
    /// - The object is held weakly, so storing the disposable in the object makes no cycle. Once the
    ///   object is gone, the signal's next value ends the subscription; until then it stays (on a quiet
    ///   feed, for as long as the feed is quiet), so dispose it in the object's `deinit`. After
    ///   `dispose()` on the main actor, no value is set, not even one that was waiting for its action. A
    ///   `dispose()` on another thread does not wait for an action that has already taken its value, so
    ///   that one value may be set after it returns.
    /// - Call it on the main actor: a key path to a main-actor property is formed there (from a
    ///   nonisolated async function, `await MainActor.run { signal.assign(to: \.text, on: model) }`).
    ///
    /// - Parameters:
    ///   - keyPath: The property to keep up to date.
    ///   - object: The model.
    ///   - scheduler: Runs the updates on the main actor: the main queue by default, or a
    ///     `VirtualTimeScheduler` moved by a test that runs on the main actor.
    /// - Returns: The subscription.
    @MainActor public func assign<Root: AnyObject>(
        to keyPath: ReferenceWritableKeyPath<Root, T>, on object: Root,
        scheduler: some SignalScheduler = Queue.mainQueue()
    ) -> Disposable {
        let target = MainActorAssignment(object: object, keyPath: keyPath)
        let coalescer = LatestValueCoalescer<T>()
        let source = MetaDisposable()
        // Disposing closes the coalescer first: a value still waiting for its action is then never set.
        let subscription = ActionDisposable {
            coalescer.close()
            source.dispose()
        }
        source.set(
            self.start(next: { value in
                guard coalescer.offer(value) else { return }
                scheduler.schedule {
                    onMainActor("assign(to:on:scheduler:)") {
                        guard let value = coalescer.take() else { return }
                        if !target.set(value) {
                            subscription.dispose()
                        }
                    }
                }
            }))
        return subscription
    }
}

/// Runs `body` isolated to the main actor, or stops the process with a message naming `api` when called
/// off it (neither on the main queue nor on the main thread).
private func onMainActor(_ api: String, _ body: @MainActor () -> Void) {
    guard Queue.mainQueue().isCurrent() || Thread.isMainThread else {
        misuse("\(api): the scheduler ran an action off the main actor; pass Queue.mainQueue(), or move virtual time from the main actor")
    }
    MainActor.assumeIsolated(body)
}

/// One subscription of `Signal.observing(on:_:)`: reads on the scheduler, tracked, until stopped.
///
/// The model's observation registry keeps the last `onChange` closure, and with it this object, until
/// the next change, which may never come: so stopping drops `read` (and the models it captures) and the
/// subscriber here, and what the registry keeps is this small object alone.
private final class ObservationTracking<T: Sendable>: Sendable {
    private struct State: Sendable {
        /// What a read needs; nil once stopped.
        var active: (read: @MainActor @Sendable () -> T, subscriber: Subscriber<T, NoError>)?
        /// A read is scheduled and has not run yet: a change now needs no other.
        var readScheduled = false
    }

    private let scheduler: any SignalScheduler
    private let state: LockedState<State>

    init(subscriber: Subscriber<T, NoError>, scheduler: some SignalScheduler, read: @escaping @MainActor @Sendable () -> T) {
        self.scheduler = scheduler
        self.state = LockedState(State(active: (read, subscriber)))
    }

    /// Schedules a read unless one is scheduled already or the subscription stopped.
    func scheduleRead() {
        let schedule = self.state.withLock { state -> Bool in
            if state.active == nil || state.readScheduled { return false }
            state.readScheduled = true
            return true
        }
        if schedule {
            self.scheduler.schedule { self.readAndTrack() }
        }
    }

    private func readAndTrack() {
        let active = self.state.withLock { state in
            state.readScheduled = false
            return state.active
        }
        guard let (read, subscriber) = active else { return }
        onMainActor("Signal.observing(on:_:)") {
            // `onChange` runs once, in the first change's `willSet`, on the changing thread: the new
            // value is read by the action it schedules, after the change.
            let value = withObservationTracking({ read() }, onChange: { self.scheduleRead() })
            subscriber.putNext(value)
        }
    }

    func stop() {
        let released = self.state.withLock { $0.active.take() }
        // The models `read` captured are released here, after unlocking.
        withExtendedLifetime(released) {}
    }
}

/// The model and property of `assign(to:on:scheduler:)`, reached only on the main actor.
@MainActor private final class MainActorAssignment<Root: AnyObject, T> {
    private weak var object: Root?
    private let keyPath: ReferenceWritableKeyPath<Root, T>

    init(object: Root, keyPath: ReferenceWritableKeyPath<Root, T>) {
        self.object = object
        self.keyPath = keyPath
    }

    /// Sets the value; false once the object is gone.
    func set(_ value: T) -> Bool {
        guard let object = self.object else { return false }
        object[keyPath: self.keyPath] = value
        return true
    }
}

/// The latest value not yet taken, and whether an action to take it is already scheduled; closed when
/// the subscription is disposed.
private final class LatestValueCoalescer<T: Sendable>: Sendable {
    private struct State: Sendable {
        var latest: T?
        var closed = false
    }

    private let state = LockedState(State())

    /// Stores `value`; true when nothing was waiting, so the caller schedules the action that takes it.
    /// After ``close()``, keeps nothing and returns false.
    func offer(_ value: T) -> Bool {
        let (wasEmpty, replaced) = self.state.withLock { state -> (Bool, T?) in
            if state.closed { return (false, value) }
            let old = state.latest
            state.latest = value
            return (old == nil, old)
        }
        // The value it replaced (or refused) is released here, after unlocking.
        withExtendedLifetime(replaced) {}
        return wasEmpty
    }

    func take() -> T? {
        return self.state.withLock { $0.latest.take() }
    }

    func close() {
        let dropped = self.state.withLock { state -> T? in
            state.closed = true
            return state.latest.take()
        }
        withExtendedLifetime(dropped) {}
    }
}
