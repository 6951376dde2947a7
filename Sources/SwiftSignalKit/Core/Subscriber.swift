import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The receiving end of a subscription: a generator sends events to it.
///
/// Send values with ``putNext(_:)`` and end the stream with ``putError(_:)`` or ``putCompletion()``.
/// Any method may be called from any thread. Callbacks run on the thread that sends the event, outside
/// every lock of the library.
///
/// - Events after the first terminal event, or after the subscription is disposed, are dropped.
/// - The first terminal event disposes the disposable the generator returned, after its callback ran;
///   or during the callback, when the subscription is disposed there (by the callback, or by an operator
///   below that the event reached), as in the original library: so whatever tears down below a chain
///   finds every source above it already disposed.
/// - Disposing the subscription never waits for another thread: `dispose()` may be called from any
///   thread, under any lock, inside any callback and inside a task cancellation handler. Once it
///   returns, no event sent afterwards reaches a callback. An event that another thread had already
///   admitted (it was past the subscriber's check when `dispose()` ran) may still be running its
///   callback, or about to enter it, on that thread; the value callback, and what it captured, is then
///   released by the last such delivery as it returns.
/// - A delivered value takes no lock and does not copy the value callback, so it writes nothing that
///   the callback shares with other threads.
///
/// > Important: When teardown must know that no callback is still running (for example before
/// > freeing state the callback uses), do not rely on `dispose()` for it: deliver the events on a
/// > serial ``Queue`` with ``deliverOn(_:)-(Queue)`` and tear down on that queue, or guard the state with
/// > your own lock and a "stopped" flag that the callback checks. See the Threading and disposal article.
///
/// The class is not `final` only so that the library can make subscribers of its own: the one that
/// ``Signal/start(next:error:completed:)`` creates is the subscription's disposable as well, and the one
/// behind `get()` takes only its first event. It cannot be subclassed outside the library, and its members
/// are `final`.
public class Subscriber<T, E>: CustomStringConvertible {
    /// The lock that guards `machine`, `extras` and the release of `next`: the subscriber's own, stored
    /// inline (a 32-bit word on Linux), so that subscribers that share nothing share no lock. A
    /// delivered value does not take it (see `gate`).
    @usableFromInline final let mutex: Mutex<Void>
    /// The deliveries in progress, and whether the subscriber still admits values (see
    /// ``DeliveryGate``): a delivered value enters and leaves it, two atomic operations on the
    /// subscriber's own word, and calls `next` in place in between. Stored in the padding after
    /// `mutex`.
    @usableFromInline final let gate: Synchronization.Atomic<UInt32>
    /// Read and written only while `mutex` is locked, through ``withState(_:)``.
    @exclusivity(unchecked) @usableFromInline final var machine: SubscriberStateMachine
    /// The value callback, called in place by each delivery: it is not copied, since a copy writes the
    /// reference count of the closure's context, which is often an object the user's other threads
    /// use. Written only at initialisation, before the subscriber is shared, and once by whoever
    /// releases it: the thread that closes the gate while no delivery is in progress, under `mutex`, or
    /// else the last delivery to leave the gate (see ``DeliveryGate``). No delivery reads it after that.
    /// It is stored here, not in the state machine, so that the state machine is not generic (see
    /// ``SubscriberStateMachine``). `@exclusivity(unchecked)`: the gate orders every access, and the
    /// dynamic check cost two runtime calls per event.
    @exclusivity(unchecked) @usableFromInline final var next: ValueCallback<T>
    /// The error and completion callbacks and the objects given to ``keepAlive(_:)``, in an object made
    /// only when there are any: an operator's subscriber forwards its terminal events through
    /// ``forwardError(_:)`` and ``forwardCompletion()`` instead, and most subscriptions made with
    /// `start(next:)` keep nothing alive, so such a subscriber is 72 bytes where it was 152 (a server keeps
    /// hundreds of thousands). Read and written only while `mutex` is locked.
    @exclusivity(unchecked) @usableFromInline final var extras: SubscriberExtras<E>?

    /// Creates a subscriber with optional callbacks.
    ///
    /// - Parameters:
    ///   - next: Called for each value.
    ///   - error: Called once for a failure.
    ///   - completed: Called once for completion.
    @inlinable @preconcurrency public init(
        next: (@Sendable (T) -> Void)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) {
        self.mutex = Mutex(())
        self.gate = Synchronization.Atomic(DeliveryGate.open)
        self.machine = SubscriberStateMachine()
        self.next = ValueCallback(next)
        self.extras = error == nil && completed == nil ? nil : SubscriberExtras(error: error, completed: completed)
    }

    /// Creates a subscriber that takes only its first event, and hands it to ``FirstEventHandlers`` (the
    /// only subclass that calls this), not to callbacks.
    @inlinable init(firstEventOnly: Void) {
        self.mutex = Mutex(())
        // Closed, with nothing to release: every value goes to `putNextNotAdmitted`, where the first
        // event of any kind ends the subscriber.
        self.gate = Synchronization.Atomic(DeliveryGate.closed | DeliveryGate.released)
        self.machine = SubscriberStateMachine(firstEventOnly: true)
        self.next = ValueCallback(nil)
        self.extras = nil
    }

    /// A short description of the subscriber's state, for debugging.
    public final var description: String {
        let terminated = self.withState { $0.isTerminated }
        return "Subscriber { terminated: \(terminated) }"
    }

    /// Sends a value. Dropped if the subscriber has terminated or been disposed.
    ///
    /// - Parameter value: The value.
    @inlinable public final func putNext(_ value: T) {
        // Admitted when the gate was open as this delivery entered it. Closing it is what a terminal
        // event or `dispose()` does first, so no value sent after those return is delivered; one that
        // entered before runs its callback, which stays alive until the last such delivery leaves.
        let entered = self.gate.wrappingAdd(1, ordering: .acquiring).oldValue
        if _fastPath(entered & DeliveryGate.closed == 0) {
            self.next(value)
            self.leaveGate()
            return
        }
        self.leaveGate()
        self.putNextNotAdmitted(value)
    }

    /// Ends a delivery's stay in the gate; the last one to leave a closed gate releases the value
    /// callback (see ``DeliveryGate``).
    @inlinable @inline(__always)
    final func leaveGate() {
        let left = self.gate.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue
        if _slowPath(left == DeliveryGate.closedAndEnded) { self.releaseValueCallbackAfterDeliveries() }
    }

    /// The gate is closed and no delivery is in it: releases the value callback unless another thread
    /// already did (a delivery that left at the same moment, or the thread that closed the gate).
    /// Outside every lock: nothing else reads or writes `next` once the gate is closed and empty.
    @usableFromInline @inline(never)
    final func releaseValueCallbackAfterDeliveries() {
        guard self.claimValueCallbackRelease() else { return }
        self.next.closure = nil
    }

    /// Whether this thread, finding the gate closed and empty, is the one that releases `next`: one
    /// claim succeeds, whoever makes it.
    @inlinable final func claimValueCallbackRelease() -> Bool {
        return self.gate.compareExchange(
            expected: DeliveryGate.closedAndEnded,
            desired: DeliveryGate.closedAndEnded | DeliveryGate.released,
            ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// ``putNext(_:)`` of a value the gate did not admit: dropped, or the first event of a first-event-only
    /// subscriber.
    ///
    /// Not inlined: it keeps the code of a delivered value short.
    @inlinable @inline(never)
    final func putNextNotAdmitted(_ value: T) {
        // Ended (terminated or disposed): dropped without the lock. Otherwise the gate is closed because
        // this is a first-event-only subscriber, and the value may be its first event.
        if self.hasEnded { return }
        // A first-event-only subscriber has no callbacks, but its generator may have kept objects alive
        // on it: they go with the first event, released after it is handled, outside the lock.
        var extras: SubscriberExtras<E>? = nil
        let firstEvent = self.withState { machine in
            let firstEvent = machine.takeFirstEvent()
            if firstEvent != nil {
                // Its gate is closed from the start; now it has ended too.
                self.gate.bitwiseOr(DeliveryGate.ended, ordering: .releasing)
                extras = self.extras.take()
                // Recorded in the round trip that admits it (see `FirstEventHandlers`).
                self.firstEventHandlers.admit(.Next(value))
            }
            return firstEvent
        }
        guard let firstEvent else { return }
        firstEvent.finish()
        self.firstEventHandlers.subscriptionEnded()
        withExtendedLifetime(extras) {}
    }

    /// Sends a failure and terminates the subscriber. Dropped if it has already terminated.
    ///
    /// After the error callback returns, the generator's disposable is disposed, unless disposing the
    /// subscription during the callback already did.
    ///
    /// - Parameter error: The error.
    @inlinable public final func putError(_ error: E) {
        // Ended already: dropped without the lock (see ``DeliveryGate/ended``).
        if self.hasEnded { return }
        // The callbacks are moved into these locals under the lock and released after it (see
        // `takeCallbacks`). Plain locals, not a generic struct: `dispose()` reached through the
        // `Disposable` existential runs unspecialised, and a generic struct would cost a metadata lookup.
        var next: (@Sendable (T) -> Void)? = nil
        var extras: SubscriberExtras<E>? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, extras: &extras)
                if firstEvent {
                    // Recorded in the round trip that admits it (see `FirstEventHandlers`).
                    self.firstEventHandlers.admit(.Error(error))
                }
            }
            return action
        }
        guard let action else { return }
        if firstEvent {
            action.finish()
            self.firstEventHandlers.subscriptionEnded()
            return
        }
        if let callback = extras?.error {
            callback(error)
        } else {
            self.forwardError(error)
        }
        self.release(afterTerminalEvent: &next, extras: &extras, then: action)
    }

    /// Completes the subscriber. Dropped if it has already terminated.
    ///
    /// After the completion callback returns, the generator's disposable is disposed, unless disposing
    /// the subscription during the callback already did.
    @inlinable public final func putCompletion() {
        // Ended already: dropped without the lock (a synchronous source's completion after the first
        // value ended a `get()`, or after `take(1)`).
        if self.hasEnded { return }
        var next: (@Sendable (T) -> Void)? = nil
        var extras: SubscriberExtras<E>? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, extras: &extras)
                if firstEvent {
                    // Recorded in the round trip that admits it (see `FirstEventHandlers`).
                    self.firstEventHandlers.admit(.Completion)
                }
            }
            return action
        }
        guard let action else { return }
        if firstEvent {
            action.finish()
            self.firstEventHandlers.subscriptionEnded()
            return
        }
        if let callback = extras?.completed {
            callback()
        } else {
            self.forwardCompletion()
        }
        self.release(afterTerminalEvent: &next, extras: &extras, then: action)
    }

    /// How an operator's subscriber sends an error on to its downstream when it has no error callback:
    /// called once, outside the lock, for the first terminal event. A plain subscriber drops it.
    ///
    /// An overridable method rather than a stored closure, so that it costs the subscriber no bytes. The
    /// hooks here (this one, ``forwardCompletion()``, ``downstreamIsTerminated``, ``downstreamDemand``)
    /// are overridden once, by ``OperatorSubscriber``, which asks its stage (Core/OperatorSubscriber.swift).
    @usableFromInline func forwardError(_ error: E) {}

    /// How an operator's subscriber sends completion on to its downstream when it has no completion
    /// callback (see ``forwardError(_:)``).
    @usableFromInline func forwardCompletion() {}

    /// Whether the subscriber this one forwards to has terminated: `false` for a subscriber that forwards
    /// to none (see ``isTerminated``).
    @usableFromInline var downstreamIsTerminated: Bool { false }

    /// The room of the consumer this subscriber's values reach synchronously, for a producer that can
    /// wait for it (see ``SignalDemand``): the consumer's own, or what the subscriber it hands its values
    /// to reports. Nil when no consumer paces this chain (a consumer attached only to be asked whether it
    /// has gone does not), or once the subscription has ended.
    @usableFromInline package final var demand: (any SignalDemand)? {
        if let own = self.withState({ _ in self.extras?.demand }) {
            return own.pacesProducers ? own : nil
        }
        return self.downstreamDemand
    }

    /// What ``demand`` reports beyond the subscriber's own: nil, unless a subclass hands each value on
    /// synchronously to a downstream subscriber, whose demand it then reports.
    @usableFromInline var downstreamDemand: (any SignalDemand)? { nil }

    /// Keeps `object` alive until the subscriber terminates or is disposed.
    ///
    /// - Parameter object: Any object; released (outside the lock) when the subscription ends, or at once
    ///   if it has already ended.
    public final func keepAlive(_ object: AnyObject) {
        let rejected: AnyObject? = self.withState { state in
            if state.isTerminated { return object }
            if self.extras == nil {
                self.extras = SubscriberExtras(error: nil, completed: nil)
            }
            self.extras!.keptAlive.append(object)
            return nil
        }
        withExtendedLifetime(rejected) {}
    }

    /// Whether this subscriber, or any subscriber it forwards to, has terminated or been disposed.
    ///
    /// Loops that run inside a generator (``restart(_:)``, ``queue(_:)``) check it: a terminal event
    /// downstream disposes upstream subscriptions only once their generators have returned, so a loop
    /// still inside its generator would otherwise not learn that nobody listens any more. The consumer
    /// at the end of the chain, when one is attached (see ``SignalDemand``), is asked too: a `for await`
    /// loop can end before the subscription it would dispose exists.
    @usableFromInline package final var isTerminated: Bool {
        var consumer: (any SignalDemand)?
        let terminated = self.withState { state -> Bool in
            if state.isTerminated { return true }
            consumer = self.extras?.demand
            return false
        }
        if terminated {
            return true
        }
        if let consumer, consumer.consumerHasGone {
            return true
        }
        return self.downstreamIsTerminated
    }

    /// Whether a value sent now would be delivered: neither terminated nor disposed. An operator that
    /// runs two closures for one value asks between them (see `MappingAndFiltering`). One load of the
    /// gate, not a lock round trip: the gate is closed in the same lock round trip that terminates the
    /// state machine, and a first-event-only subscriber's is closed from the start.
    @inlinable final var admitsValues: Bool {
        return self.gate.load(ordering: .acquiring) & DeliveryGate.closed == 0
    }

    /// Whether the subscriber has terminated or been disposed, in one load of the gate: its `ended`
    /// bit is set in the lock round trip that terminates the state machine. False may be out of date
    /// by the time the caller acts on it, so a terminal event that finds false still asks the state
    /// machine under the lock; true never changes again.
    @inlinable final var hasEnded: Bool {
        return self.gate.load(ordering: .acquiring) & DeliveryGate.ended != 0
    }

    /// Stores the generator's disposable, or disposes it at once if the subscriber already terminated.
    @inlinable final func assignDisposable(_ disposable: Disposable) {
        // Synchronous generators (`single`, `complete`, ...) return the shared empty disposable; storing it
        // would only cost a lock round trip, since disposing it does nothing.
        if type(of: disposable) == _EmptyDisposable.self { return }
        _ = self.assignDisposableReportingFinished(disposable)
    }

    /// Stores the generator's disposable (or disposes it at once if the subscriber already terminated) and
    /// returns whether the subscriber has terminated. No callback can start after termination, so
    /// disposing such a subscriber could never do anything. Never given the empty disposable: both
    /// callers, ``assignDisposable(_:)`` and `Signal.run`, answer for it without the lock.
    @inlinable final func assignDisposableReportingFinished(_ disposable: Disposable) -> Bool {
        let alreadyTerminated = self.withState { state -> Bool in
            if state.isTerminated { return true }
            state.disposable = disposable
            return false
        }
        if alreadyTerminated {
            disposable.dispose()
        }
        return alreadyTerminated
    }

    /// Ends the subscription from outside: drops further events, releases the callbacks and disposes the
    /// generator's disposable. It never waits for another thread.
    @inlinable final func disposeSubscription() {
        self.disposeSubscription(if: { true })
    }

    /// ``disposeSubscription()`` if `decide`, run with the mutex held, returns true: an owner whose own
    /// state lives under this mutex (``FirstEventSubscriber``) changes it and disposes in one lock round
    /// trip. `decide` must only read and write state guarded by the mutex, as the body of
    /// ``withState(_:)``.
    @inlinable final func disposeSubscription(if decide: () -> Bool) {
        var next: (@Sendable (T) -> Void)? = nil
        var extras: SubscriberExtras<E>? = nil
        let decided = self.withState { state -> SubscriberStateMachine.TerminateAction? in
            guard decide() else { return nil }
            // Terminated: its terminal callback may still run, and the source may wait to be disposed
            // after it (see `SubscriberStateMachine.terminate()`); the callbacks are already taken.
            let terminated = state.isTerminated
            guard let action = state.dispose() else { return nil }
            if !terminated {
                self.takeCallbacks(next: &next, extras: &extras)
            }
            return action
        }
        guard let action = decided else { return }
        Self.release(next: &next, extras: &extras, then: action)
    }

    /// Moves the callbacks (and the extras holding the terminal ones) into the caller's locals; call only
    /// with `mutex` locked. The locals keep each closure alive, so clearing the stored ones never releases
    /// a closure under the lock; the caller releases them after unlocking, with
    /// ``release(next:extras:then:)``.
    @inlinable final func takeCallbacks(next: inout (@Sendable (T) -> Void)?, extras: inout SubscriberExtras<E>?) {
        extras = self.extras
        self.extras = nil
        // The value callback only when no delivery is running it; otherwise the last one to leave the
        // gate releases it.
        if self.closeGate() {
            // Copied and cleared, not `take()`n: the generic `Optional.take()` reabstracts a closure, an
            // allocation each way.
            next = self.next.closure
            self.next.closure = nil
        }
    }

    /// Closes the gate and marks the subscriber ended, so that no value is admitted any more; call only
    /// with `mutex` locked, as the state machine terminates. Returns whether this thread releases the
    /// value callback: true when no delivery is in the gate (and none left it at the same moment to
    /// claim it).
    @inlinable final func closeGate() -> Bool {
        let before = self.gate.bitwiseOr(DeliveryGate.closedAndEnded, ordering: .acquiringAndReleasing).oldValue
        guard before & DeliveryGate.deliveries == 0 else { return false }
        return self.claimValueCallbackRelease()
    }

    /// After a terminal event or a disposal, outside the lock: releases the callbacks taken by
    /// ``takeCallbacks(next:extras:)``, then disposes what the generator returned, then releases the
    /// objects given to ``keepAlive(_:)``, in that order.
    @inlinable static func release(
        next: inout (@Sendable (T) -> Void)?,
        extras: inout SubscriberExtras<E>?,
        then action: SubscriberStateMachine.TerminateAction
    ) {
        next = nil
        let keptAlive = extras?.keptAlive
        extras = nil
        action.finish()
        withExtendedLifetime(keptAlive) {}
    }

    /// After a terminal event's callback, outside the lock: ``release(next:extras:then:)``, where the
    /// generator's disposable, when one was stored, is taken from the state machine now, unless a
    /// `dispose()` during the callback took it and disposed it (see `SubscriberStateMachine.terminate()`).
    @inlinable @inline(__always) final func release(
        afterTerminalEvent next: inout (@Sendable (T) -> Void)?,
        extras: inout SubscriberExtras<E>?,
        then action: SubscriberStateMachine.TerminateAction
    ) {
        guard _slowPath(action.disposalPending) else {
            Self.release(next: &next, extras: &extras, then: action)
            return
        }
        next = nil
        let keptAlive = extras?.keptAlive
        extras = nil
        self.disposePendingSource()
        withExtendedLifetime(keptAlive) {}
    }

    /// Takes the generator's disposable that a terminal event left, and disposes it (see
    /// ``release(afterTerminalEvent:extras:then:)``). Out of line: a synchronous signal's subscriber,
    /// which ends before its generator returns, never comes here, and its terminal path stays short.
    @usableFromInline @inline(never) final func disposePendingSource() {
        self.withState { $0.takePendingDisposable() }?.dispose()
    }

    /// This subscriber as the ``FirstEventHandlers`` it is when its state machine is first-event-only.
    @inlinable final var firstEventHandlers: FirstEventHandlers<T, E> {
        return unsafeDowncast(self, to: FirstEventHandlers<T, E>.self)
    }

    /// Runs `body` with `mutex` locked (see ``withLock(_:tracedAt:_:)``). `body` must only read and write
    /// the state machine and the callbacks: calling out (or taking another lock) under it could deadlock
    /// or re-enter it.
    @inlinable @inline(__always)
    final func withState<Result>(_ body: (inout SubscriberStateMachine) -> Result) -> Result {
        return withLock(self.mutex, tracedAt: Unmanaged.passUnretained(self).toOpaque()) {
            body(&self.machine)
        }
    }
}

extension Subscriber: DownstreamLink {}

// Safe: all mutable state is `machine` and `extras`, read and written only while `mutex` is held, the
// atomic `gate`, and `next`, which is written only before the subscriber is shared and by the one
// thread that releases it once the gate is closed and empty (see `DeliveryGate`). The
// subscriber never stores a value of `T` or `E`; it hands each one from the sending thread to the
// callback on that same thread. Objects given to `keepAlive` are only retained and released.
extension Subscriber: @unchecked Sendable {}

/// What few subscribers need: error and completion callbacks (an operator's subscriber forwards its
/// terminal events instead), the room of a consumer that paces its producers, and objects given to
/// ``Subscriber/keepAlive(_:)``. Read and written only
/// under the owning subscriber's mutex, or by the one thread that took it out of the subscriber.
@usableFromInline class SubscriberExtras<E> {
    @usableFromInline final let error: (@Sendable (E) -> Void)?
    @usableFromInline final let completed: (@Sendable () -> Void)?
    @usableFromInline final var keptAlive: [AnyObject] = []

    @inlinable init(error: (@Sendable (E) -> Void)?, completed: (@Sendable () -> Void)?) {
        self.error = error
        self.completed = completed
    }

    /// The room of the consumer that made this subscriber, when it paces its producers (see
    /// ``PacedSubscriberExtras``).
    @usableFromInline var demand: (any SignalDemand)? { nil }
}

/// The extras of a subscriber made by a consumer that paces its producers: a subclass, so that the
/// extras of every other subscriber stay 16 bytes smaller (64 with malloc's header, not 80).
@usableFromInline final class PacedSubscriberExtras<E>: SubscriberExtras<E> {
    @usableFromInline let pacing: any SignalDemand

    @inlinable init(error: (@Sendable (E) -> Void)?, completed: (@Sendable () -> Void)?, demand: any SignalDemand) {
        self.pacing = demand
        super.init(error: error, completed: completed)
    }

    @inlinable override var demand: (any SignalDemand)? { self.pacing }
}

/// The value callback of a ``Subscriber``, in a type that cannot be copied: a delivery calls the closure
/// where it is stored, borrowed, so that the call writes nothing to the closure's context (a stored
/// optional closure read into a local, or called through the property, is copied, and the copy retains
/// and releases its context on every value).
@usableFromInline struct ValueCallback<T>: ~Copyable {
    @usableFromInline var closure: (@Sendable (T) -> Void)?

    @inlinable init(_ closure: (@Sendable (T) -> Void)?) {
        self.closure = closure
    }

    /// Calls the closure, if any, in place.
    @inlinable @inline(__always)
    borrowing func callAsFunction(_ value: T) {
        // This spelling calls it borrowed; binding it first (`if let`, `switch`) copies it.
        self.closure?(value)
    }
}

/// The word of a ``Subscriber`` that admits values and counts the deliveries in progress, so that a
/// delivery takes no lock and does not copy the value callback, yet the callback is released only when
/// no delivery runs it.
///
/// - A delivery adds one, and is admitted if `closed` was clear; it calls the callback, then subtracts
///   one.
/// - A terminal event or `dispose()` sets `closed` under the subscriber's lock, as the state machine
///   terminates. Values that enter afterwards are dropped; so a value sent after `dispose()` returns is
///   never delivered.
/// - Whoever finds the word `closed` with no delivery in it (the closing thread, or the last delivery to
///   leave) claims the release by setting `released`, and releases the callback. One claim succeeds.
/// - `ended` is set in the same lock round trip as the state machine terminates (with `closed`, for a
///   subscriber with callbacks; alone, for a first-event-only one, whose gate is closed from the
///   start). Events that find it set are dropped without taking the lock: terminal events, and values
///   sent after the end (a synchronous source's completion after the value that ended a `get()`).
@usableFromInline enum DeliveryGate {
    /// Open, with no delivery in it.
    @inlinable static var open: UInt32 { 0 }
    /// No value is admitted any more.
    @inlinable static var closed: UInt32 { 1 << 31 }
    /// The value callback has been released (or there was none to release).
    @inlinable static var released: UInt32 { 1 << 30 }
    /// The subscriber has terminated or been disposed.
    @inlinable static var ended: UInt32 { 1 << 29 }
    /// A subscriber with callbacks, once it has ended: closed and ended are set together.
    @inlinable static var closedAndEnded: UInt32 { Self.closed | Self.ended }
    /// The bits that count deliveries in the gate (admitted or being turned away).
    @inlinable static var deliveries: UInt32 { (1 << 29) - 1 }
}
