import Dispatch

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
/// - The first terminal event disposes the disposable the generator returned, after its callback ran.
/// - Disposing the subscription never waits for another thread: `dispose()` may be called from any
///   thread, under any lock, inside any callback and inside a task cancellation handler. Once it
///   returns, no event sent afterwards reaches a callback. An event that another thread had already
///   admitted (it was past the subscriber's check when `dispose()` ran) may still be running its
///   callback, or about to enter it, on that thread.
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
    /// The mutex that guards `machine` and the callbacks: shared with other subscribers (see
    /// ``SubscriberLockTable``). Set once in the initialiser, then only read.
    @exclusivity(unchecked) @usableFromInline final var mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Read and written only while `mutex` is locked: through ``withState(_:)``, or in `putNext`
    /// between ``lockState()`` and ``unlockState()``.
    @exclusivity(unchecked) @usableFromInline final var machine: SubscriberStateMachine
    /// The callbacks: read and written only while `mutex` is locked. They are stored here, not in the
    /// state machine, so that the state machine is not generic (see ``SubscriberStateMachine``).
    /// `@exclusivity(unchecked)`: every access is already serialised by the lock, and the dynamic check
    /// cost two runtime calls per event.
    @exclusivity(unchecked) @usableFromInline final var next: (@Sendable (T) -> Void)?
    @exclusivity(unchecked) @usableFromInline final var error: (@Sendable (E) -> Void)?
    @exclusivity(unchecked) @usableFromInline final var completed: (@Sendable () -> Void)?
    /// The subscriber this one forwards to, when an operator made it (see ``isTerminated``).
    @usableFromInline let downstream: (any DownstreamLink)?
    /// For an operator that only transforms values: how an error or completion goes on to `downstream`.
    /// They capture nothing (the downstream is passed in), so in specialised code they allocate nothing,
    /// where two forwarding closures would each allocate a context per subscription.
    @usableFromInline let forwardError: (@Sendable (AnyObject, E) -> Void)?
    @usableFromInline let forwardCompletion: (@Sendable (AnyObject) -> Void)?

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
        self.mutex = SubscriberLockTable.placeholder
        self.machine = SubscriberStateMachine()
        self.next = next
        self.error = error
        self.completed = completed
        self.downstream = nil
        self.forwardError = nil
        self.forwardCompletion = nil
        self.mutex = SubscriberLockTable.mutex(for: ObjectIdentifier(self))
    }

    /// Creates an operator's subscriber that forwards to `downstream`.
    @inlinable init(
        downstream: any DownstreamLink,
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?
    ) {
        self.mutex = SubscriberLockTable.placeholder
        self.machine = SubscriberStateMachine()
        self.next = next
        self.error = error
        self.completed = completed
        self.downstream = downstream
        self.forwardError = nil
        self.forwardCompletion = nil
        self.mutex = SubscriberLockTable.mutex(for: ObjectIdentifier(self))
    }

    /// Creates an operator's subscriber that handles values with `next` and sends its error or
    /// completion on to `downstream`, which must have the same error type.
    @inlinable init<R>(forwardingTerminalsTo downstream: Subscriber<R, E>, next: (@Sendable (T) -> Void)?) {
        self.mutex = SubscriberLockTable.placeholder
        self.machine = SubscriberStateMachine()
        self.next = next
        self.error = nil
        self.completed = nil
        self.downstream = downstream
        self.forwardError = { target, error in
            unsafeDowncast(target, to: Subscriber<R, E>.self).putError(error)
        }
        self.forwardCompletion = { target in
            unsafeDowncast(target, to: Subscriber<R, E>.self).putCompletion()
        }
        self.mutex = SubscriberLockTable.mutex(for: ObjectIdentifier(self))
    }

    /// Creates a subscriber that takes only its first event, and hands it to the handlers of
    /// ``FirstEventHandlers`` (the only subclass that calls this), not to callbacks.
    @inlinable init(firstEventOnly: Void) {
        self.mutex = SubscriberLockTable.placeholder
        self.machine = SubscriberStateMachine(firstEventOnly: true)
        self.next = nil
        self.error = nil
        self.completed = nil
        self.downstream = nil
        self.forwardError = nil
        self.forwardCompletion = nil
        self.mutex = SubscriberLockTable.mutex(for: ObjectIdentifier(self))
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
        // Locked by hand rather than with `withState`: the not-admitted branch ends the lock itself, so
        // that the path of a delivered value carries nothing of it (with a closure, its result had to
        // be destroyed on every delivery).
        self.lockState()
        guard self.machine.admitsValues else {
            self.putNextNotAdmitted(value)
            return
        }
        // Copied under the lock, so that the callback's context stays alive while it runs even if
        // another thread disposes meanwhile (which releases the stored one).
        guard let callback = self.next else {
            self.unlockState()
            return
        }
        self.unlockState()
        callback(value)
    }

    /// ``putNext(_:)`` of a value the state machine does not admit: dropped, or the first event of a
    /// first-event-only subscriber. Called with the mutex locked; unlocks it.
    ///
    /// Not inlined: it keeps the code of a delivered value short.
    @inlinable @inline(never)
    final func putNextNotAdmitted(_ value: T) {
        let firstEvent = self.machine.takeFirstEvent()
        self.unlockState()
        guard let firstEvent else { return }
        // The subscription ends before the event is handled (see `FirstEventHandlers`).
        firstEvent.finish()
        self.firstEventHandlers.handle(value)
    }

    /// Sends a failure and terminates the subscriber. Dropped if it has already terminated.
    ///
    /// After the error callback returns, the generator's disposable is disposed.
    ///
    /// - Parameter error: The error.
    @inlinable public final func putError(_ error: E) {
        // The callbacks are moved into these locals under the lock and released after it (see
        // `takeCallbacks`). Plain locals, not a generic struct: `dispose()` reached through the
        // `Disposable` existential runs unspecialised, and a generic struct would cost a metadata lookup.
        var next: (@Sendable (T) -> Void)? = nil
        var callback: (@Sendable (E) -> Void)? = nil
        var completed: (@Sendable () -> Void)? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, error: &callback, completed: &completed)
            }
            return action
        }
        guard let action else { return }
        if firstEvent {
            // The subscription ends before the event is handled (see `FirstEventHandlers`).
            action.finish()
            self.firstEventHandlers.handle(error: error)
            return
        }
        if let callback = consume callback {
            callback(error)
        } else if let forward = self.forwardError, let downstream = self.downstream {
            forward(downstream, error)
        }
        next = nil
        completed = nil
        action.finish()
    }

    /// Completes the subscriber. Dropped if it has already terminated.
    ///
    /// After the completion callback returns, the generator's disposable is disposed.
    @inlinable public final func putCompletion() {
        var next: (@Sendable (T) -> Void)? = nil
        var error: (@Sendable (E) -> Void)? = nil
        var callback: (@Sendable () -> Void)? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, error: &error, completed: &callback)
            }
            return action
        }
        guard let action else { return }
        if firstEvent {
            // The subscription ends before the event is handled (see `FirstEventHandlers`).
            action.finish()
            self.firstEventHandlers.handleCompletion()
            return
        }
        if let callback = consume callback {
            callback()
        } else if let forward = self.forwardCompletion, let downstream = self.downstream {
            forward(downstream)
        }
        next = nil
        error = nil
        action.finish()
    }

    /// Keeps `object` alive until the subscriber terminates or is disposed.
    ///
    /// - Parameter object: Any object; released (outside the lock) when the subscription ends, or at once
    ///   if it has already ended.
    public final func keepAlive(_ object: AnyObject) {
        let rejected: AnyObject? = self.withState { state in
            if state.isTerminated { return object }
            state.keepAlive(object)
            return nil
        }
        withExtendedLifetime(rejected) {}
    }

    /// Whether this subscriber, or any subscriber it forwards to, has terminated or been disposed.
    ///
    /// Loops that run inside a generator (``restart(_:)``, ``queue(_:)``) check it: a terminal event
    /// downstream disposes upstream subscriptions only once their generators have returned, so a loop
    /// still inside its generator would otherwise not learn that nobody listens any more.
    @usableFromInline final var isTerminated: Bool {
        if self.withState({ $0.isTerminated }) {
            return true
        }
        return self.downstream?.isTerminated ?? false
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
    /// disposing such a subscriber could never do anything. Unlike ``assignDisposable(_:)``, it locks even
    /// for the empty disposable, to find that out.
    @inlinable final func assignDisposableReportingFinished(_ disposable: Disposable) -> Bool {
        let isEmpty = type(of: disposable) == _EmptyDisposable.self
        let alreadyTerminated = self.withState { state -> Bool in
            if state.isTerminated { return true }
            if !isEmpty { state.disposable = disposable }
            return false
        }
        if alreadyTerminated && !isEmpty {
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
        var error: (@Sendable (E) -> Void)? = nil
        var completed: (@Sendable () -> Void)? = nil
        let decided = self.withState { state -> SubscriberStateMachine.TerminateAction? in
            guard decide(), let action = state.dispose() else { return nil }
            self.takeCallbacks(next: &next, error: &error, completed: &completed)
            return action
        }
        guard let action = decided else { return }
        // The callbacks (and what they captured) are released here, outside the lock.
        next = nil
        error = nil
        completed = nil
        action.finish()
    }

    /// Moves the callbacks into the caller's locals; call only with `mutex` locked. The locals keep each
    /// closure alive, so clearing the stored ones never releases a closure under the lock; the caller
    /// releases them after unlocking.
    @inlinable final func takeCallbacks(
        next: inout (@Sendable (T) -> Void)?,
        error: inout (@Sendable (E) -> Void)?,
        completed: inout (@Sendable () -> Void)?
    ) {
        next = self.next
        error = self.error
        completed = self.completed
        self.next = nil
        self.error = nil
        self.completed = nil
    }

    /// This subscriber as the ``FirstEventHandlers`` it is when its state machine is first-event-only.
    @inlinable final var firstEventHandlers: FirstEventHandlers<T, E> {
        return unsafeDowncast(self, to: FirstEventHandlers<T, E>.self)
    }

    /// Runs `body` with `mutex` locked. `body` must only read and write the state machine and the
    /// callbacks: the mutex is shared, so calling out (or taking another lock) could deadlock.
    @inlinable @inline(__always)
    final func withState<Result>(_ body: (inout SubscriberStateMachine) -> Result) -> Result {
        self.lockState()
        defer { self.unlockState() }
        return body(&self.machine)
    }

    /// Locks `mutex`. Prefer ``withState(_:)``; only `putNext` pairs these by hand.
    @inlinable @inline(__always)
    final func lockState() {
        let locked = pthread_mutex_lock(self.mutex)
        if _slowPath(locked != 0) { SubscriberLockTable.failed("lock", locked) }
    }

    /// Unlocks `mutex`, locked by ``lockState()``.
    @inlinable @inline(__always)
    final func unlockState() {
        let unlocked = pthread_mutex_unlock(self.mutex)
        if _slowPath(unlocked != 0) { SubscriberLockTable.failed("unlock", unlocked) }
    }
}

/// A subscriber seen only as "has it ended?", so an operator's subscriber can ask its downstream.
@usableFromInline
protocol DownstreamLink: AnyObject, Sendable {
    var isTerminated: Bool { get }
}

extension Subscriber: DownstreamLink {}

// Safe: all mutable state is `machine` or one of the callbacks, which are read and written only while
// `mutex` is held; `mutex` is written only in the initialiser, before the subscriber is shared;
// `downstream` is immutable and itself Sendable. The
// subscriber never stores a value of `T` or `E`; it hands each one from the sending thread to the
// callback on that same thread. Objects given to `keepAlive` are only retained and released.
extension Subscriber: @unchecked Sendable {}

/// The subscriber that `Signal.start` creates, which is also the disposable it returns: a subscription
/// is then one object fewer than with a separate disposable that points to the subscriber.
///
/// `dispose()` ends the subscription as described on ``Subscriber``. The library's other subscribers that
/// are their own disposable (`MapSubscriber`, `FilterSubscriber`, `SwitchInnerSubscriber`,
/// `PromiseSource`) subclass this one.
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

    @inlinable override init(
        downstream: any DownstreamLink,
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?
    ) {
        super.init(downstream: downstream, next: next, error: error, completed: completed)
    }

    @inlinable override init<R>(forwardingTerminalsTo downstream: Subscriber<R, E>, next: (@Sendable (T) -> Void)?) {
        super.init(forwardingTerminalsTo: downstream, next: next)
    }

    @inlinable final func dispose() {
        self.disposeSubscription()
    }
}

/// A subscriber that takes only its first event and hands it to handlers rather than callbacks: the base
/// of ``FirstEventSubscriber``, generic only over the event types, so that ``Subscriber``'s event
/// methods can reach the handlers.
///
/// The first event of any kind terminates the subscriber in the lock round trip that admits it; the
/// subscription is then disposed (outside the lock), and then the event's handler runs. Later events are
/// dropped. So at most one handler ever runs.
///
/// The handlers are given the subscriber, so that they need capture nothing: a subscription then
/// allocates no closure context, and costs no reference counting of one per event.
///
/// `@unchecked Sendable`: as ``Subscriber``; the handlers are immutable and `Sendable`.
@usableFromInline package class FirstEventHandlers<T, E>: Subscriber<T, E>, @unchecked Sendable {
    /// The handlers of the first event, given this subscriber (see the type's documentation).
    @usableFromInline let onValue: @Sendable (FirstEventHandlers<T, E>, T) -> Void
    @usableFromInline let onError: @Sendable (FirstEventHandlers<T, E>, E) -> Void
    @usableFromInline let onCompletion: @Sendable (FirstEventHandlers<T, E>) -> Void

    @inlinable init(
        onValue: @escaping @Sendable (FirstEventHandlers<T, E>, T) -> Void,
        onError: @escaping @Sendable (FirstEventHandlers<T, E>, E) -> Void,
        onCompletion: @escaping @Sendable (FirstEventHandlers<T, E>) -> Void
    ) {
        self.onValue = onValue
        self.onError = onError
        self.onCompletion = onCompletion
        super.init(firstEventOnly: ())
    }

    /// Hands the first event to its handler; called by ``Subscriber`` once the subscription has ended.
    @inlinable final func handle(_ value: T) {
        self.onValue(self, value)
    }

    /// As ``handle(_:)``, for an error.
    @inlinable final func handle(error: E) {
        self.onError(self, error)
    }

    /// As ``handle(_:)``, for completion.
    @inlinable final func handleCompletion() {
        self.onCompletion(self)
    }
}

/// A subscriber that takes only its first event (see ``FirstEventHandlers``), carries state of its
/// owner's choosing guarded by the subscriber's own mutex, and is its own disposable: a one-shot
/// subscription and the state that goes with it in one object.
///
/// `package`: a building block for the concurrency bridges (`get()`), not API.
///
/// - The owner gives the handlers to the initialiser, then starts the signal with
///   ``subscribe(to:)``. A handler receives the subscriber as ``FirstEventHandlers``; it is this class.
/// - ``withExtra(_:)`` holds the subscriber's mutex, which is shared (see ``SubscriberLockTable``): its
///   body must only read and write `extra`, never call out or release an object that could deinitialise.
///
/// `@unchecked Sendable`: as ``Subscriber``. `extra` is written under the mutex, except by the first
/// event's handler on the creating thread while ``subscribe(to:)`` runs, when no other thread can
/// touch it (see ``withExtraForFirstEvent(_:)``); `creatorPhase` is read and written by the creating
/// thread only; `creator` is immutable.
@usableFromInline package final class FirstEventSubscriber<T, E, Extra>: FirstEventHandlers<T, E>, Disposable, @unchecked Sendable {
    @usableFromInline enum CreatorPhase {
        case notStarted
        /// Inside ``subscribe(to:)``.
        case starting
        /// The first event's handler ran on the creating thread inside ``subscribe(to:)``.
        case answeredWhileStarting
        case started
    }

    @exclusivity(unchecked) @usableFromInline var extra: Extra
    /// The thread that created the subscriber, which is the one that starts the signal.
    @usableFromInline let creator: pthread_t
    @exclusivity(unchecked) @usableFromInline var creatorPhase = CreatorPhase.notStarted

    /// - Parameters:
    ///   - extra: The owner's state.
    ///   - onValue, onError, onCompletion: The first event's handlers (see ``FirstEventHandlers``).
    @inlinable package init(
        extra: Extra,
        onValue: @escaping @Sendable (FirstEventHandlers<T, E>, T) -> Void,
        onError: @escaping @Sendable (FirstEventHandlers<T, E>, E) -> Void,
        onCompletion: @escaping @Sendable (FirstEventHandlers<T, E>) -> Void
    ) {
        self.extra = extra
        self.creator = pthread_self()
        super.init(onValue: onValue, onError: onError, onCompletion: onCompletion)
    }

    /// Starts `signal` with this subscriber; call once, on the creating thread.
    @inlinable package func subscribe(to signal: Signal<T, E>) {
        precondition(pthread_equal(pthread_self(), self.creator) != 0, "FirstEventSubscriber started off its creating thread")
        precondition(self.creatorPhase == .notStarted, "FirstEventSubscriber started twice")
        self.creatorPhase = .starting
        signal.start(self)
        if self.creatorPhase == .starting {
            self.creatorPhase = .started
        }
    }

    /// Runs `body` with the subscriber's mutex held.
    @inlinable @inline(__always)
    package func withExtra<Result>(_ body: (inout Extra) -> Result) -> Result {
        return self.withState { _ in body(&self.extra) }
    }

    /// For the first event's handler: runs `body` on `extra`, without locking when the handler runs on
    /// the creating thread inside ``subscribe(to:)`` (a signal that answers while it starts: a cached
    /// value, `single`), and with the mutex held otherwise.
    ///
    /// Unlocked is safe there because nothing else can touch `extra` meanwhile: that handler is the only
    /// one that runs, the owner's other code runs on this very thread after ``subscribe(to:)`` returns,
    /// and the owner must not give the subscriber to another thread before then (`get()` installs its
    /// cancellation handler afterwards).
    @inlinable @inline(__always)
    package func withExtraForFirstEvent<Result>(_ body: (inout Extra) -> Result) -> Result {
        if pthread_equal(pthread_self(), self.creator) != 0 && self.creatorPhase == .starting {
            self.creatorPhase = .answeredWhileStarting
            return body(&self.extra)
        }
        return self.withExtra(body)
    }

    /// On the creating thread, after ``subscribe(to:)``: `extra`, read without locking, if the first
    /// event's handler changed it on this thread while starting; otherwise nil, and the caller locks
    /// (``withExtra(_:)``). The owner must not change `extra` from another thread after such an answer
    /// (for `get()` the answer is final).
    @inlinable package func extraIfAnsweredWhileStarting() -> Extra? {
        assert(pthread_equal(pthread_self(), self.creator) != 0, "extraIfAnsweredWhileStarting() off the creating thread")
        return self.creatorPhase == .answeredWhileStarting ? self.extra : nil
    }

    /// Runs `change` with the subscriber's mutex held and, if it returns true, disposes the subscription
    /// in the same lock round trip (see ``dispose()``). `change` must only read and write `extra`.
    @inlinable @inline(__always)
    package func dispose(if change: (inout Extra) -> Bool) {
        self.disposeSubscription(if: { change(&self.extra) })
    }

    /// Ends the subscription, if no event did (see ``Subscriber``); like every dispose, it never waits.
    @inlinable package func dispose() {
        self.disposeSubscription()
    }
}
