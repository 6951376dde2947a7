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
    /// The lock that guards `machine` and the callbacks: the subscriber's own, stored inline (a 32-bit
    /// word on Linux), so that subscribers that share nothing share no lock.
    @usableFromInline final let mutex: Mutex<Void>
    /// Whether the process runs under ThreadSanitizer, which must be told of each lock and unlock (see
    /// ``threadSanitizerHooks``). A copy of the global's answer in the padding after `mutex`: reading it
    /// costs no global access and no byte of memory.
    @usableFromInline final let underThreadSanitizer: Bool
    /// Read and written only while `mutex` is locked: through ``withState(_:)``, or in `putNext`
    /// between ``lockState()`` and ``unlockState()``.
    @exclusivity(unchecked) @usableFromInline final var machine: SubscriberStateMachine
    /// The value callback: read and written only while `mutex` is locked. It is stored here, not in the
    /// state machine, so that the state machine is not generic (see ``SubscriberStateMachine``).
    /// `@exclusivity(unchecked)`: every access is already serialised by the lock, and the dynamic check
    /// cost two runtime calls per event.
    @exclusivity(unchecked) @usableFromInline final var next: (@Sendable (T) -> Void)?
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
        self.underThreadSanitizer = threadSanitizerHooks != nil
        self.machine = SubscriberStateMachine()
        self.next = next
        self.extras = error == nil && completed == nil ? nil : SubscriberExtras(error: error, completed: completed)
    }

    /// Creates an operator's subscriber with only a value callback: its subclass forwards the terminal
    /// events by overriding ``forwardError(_:)`` and ``forwardCompletion()``.
    @inlinable init(operatorNext next: (@Sendable (T) -> Void)?) {
        self.mutex = Mutex(())
        self.underThreadSanitizer = threadSanitizerHooks != nil
        self.machine = SubscriberStateMachine()
        self.next = next
        self.extras = nil
    }

    /// Creates a subscriber that takes only its first event, and hands it to the handlers of
    /// ``FirstEventHandlers`` (the only subclass that calls this), not to callbacks.
    @inlinable init(firstEventOnly: Void) {
        self.mutex = Mutex(())
        self.underThreadSanitizer = threadSanitizerHooks != nil
        self.machine = SubscriberStateMachine(firstEventOnly: true)
        self.next = nil
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
        // A first-event-only subscriber has no callbacks, but its generator may have kept objects alive
        // on it: they go with the first event, released after it is handled, outside the lock.
        let extras = firstEvent == nil ? nil : self.extras.take()
        self.unlockState()
        guard let firstEvent else { return }
        // The subscription ends before the event is handled (see `FirstEventHandlers`).
        firstEvent.finish()
        self.firstEventHandlers.handle(value)
        withExtendedLifetime(extras) {}
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
        var extras: SubscriberExtras<E>? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, extras: &extras)
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
        if let callback = extras?.error {
            callback(error)
        } else {
            self.forwardError(error)
        }
        Self.release(next: &next, extras: &extras, then: action)
    }

    /// Completes the subscriber. Dropped if it has already terminated.
    ///
    /// After the completion callback returns, the generator's disposable is disposed.
    @inlinable public final func putCompletion() {
        var next: (@Sendable (T) -> Void)? = nil
        var extras: SubscriberExtras<E>? = nil
        var firstEvent = false
        let action = self.withState { state in
            firstEvent = state.status == .firstEventOnly
            let action = state.terminate()
            if action != nil {
                self.takeCallbacks(next: &next, extras: &extras)
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
        if let callback = extras?.completed {
            callback()
        } else {
            self.forwardCompletion()
        }
        Self.release(next: &next, extras: &extras, then: action)
    }

    /// How an operator's subscriber sends an error on to its downstream when it has no error callback:
    /// called once, outside the lock, for the first terminal event. A plain subscriber drops it.
    ///
    /// An overridable method rather than a stored closure, so that it costs the subscriber no bytes.
    @usableFromInline func forwardError(_ error: E) {}

    /// How an operator's subscriber sends completion on to its downstream when it has no completion
    /// callback (see ``forwardError(_:)``).
    @usableFromInline func forwardCompletion() {}

    /// Whether the subscriber this one forwards to has terminated: `false` for a subscriber that forwards
    /// to none (see ``isTerminated``).
    @usableFromInline var downstreamIsTerminated: Bool { false }

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
    /// still inside its generator would otherwise not learn that nobody listens any more.
    @usableFromInline final var isTerminated: Bool {
        if self.withState({ $0.isTerminated }) {
            return true
        }
        return self.downstreamIsTerminated
    }

    /// Whether a value sent now would be delivered: neither terminated nor disposed. An operator that
    /// runs two closures for one value asks between them (see `MapFilterSubscriber`).
    @inlinable final var admitsValues: Bool {
        return self.withState { $0.admitsValues }
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
        var extras: SubscriberExtras<E>? = nil
        let decided = self.withState { state -> SubscriberStateMachine.TerminateAction? in
            guard decide(), let action = state.dispose() else { return nil }
            self.takeCallbacks(next: &next, extras: &extras)
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
        next = self.next
        extras = self.extras
        self.next = nil
        self.extras = nil
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

    /// This subscriber as the ``FirstEventHandlers`` it is when its state machine is first-event-only.
    @inlinable final var firstEventHandlers: FirstEventHandlers<T, E> {
        return unsafeDowncast(self, to: FirstEventHandlers<T, E>.self)
    }

    /// Runs `body` with `mutex` locked. `body` must only read and write the state machine and the
    /// callbacks: calling out (or taking another lock) under it could deadlock or re-enter it.
    @inlinable @inline(__always)
    final func withState<Result>(_ body: (inout SubscriberStateMachine) -> Result) -> Result {
        self.lockState()
        defer { self.unlockState() }
        return body(&self.machine)
    }

    /// Locks `mutex`. Prefer ``withState(_:)``; only `putNext` pairs these by hand.
    @inlinable @inline(__always)
    final func lockState() {
        self.mutex._unsafeLock()
        if _slowPath(self.underThreadSanitizer) { self.tellThreadSanitizer(locked: true) }
    }

    /// Tells ThreadSanitizer that this thread has just locked `mutex`, or is about to unlock it. Out of
    /// line, so that the lock and unlock of a process without it stay a few instructions.
    @usableFromInline @inline(never)
    final func tellThreadSanitizer(locked: Bool) {
        guard let hooks = threadSanitizerHooks else { return }
        let object = Unmanaged.passUnretained(self).toOpaque()
        if locked { hooks.acquire(object) } else { hooks.release(object) }
    }

    /// Unlocks `mutex`, locked by ``lockState()``.
    @inlinable @inline(__always)
    final func unlockState() {
        if _slowPath(self.underThreadSanitizer) { self.tellThreadSanitizer(locked: false) }
        self.mutex._unsafeUnlock()
    }
}

/// ThreadSanitizer's `__tsan_acquire` and `__tsan_release`, when the process runs under it; nil otherwise.
///
/// A subscriber's `Mutex` hands a contended lock to a waiter inside the standard library's
/// Synchronization module (on Linux, in the kernel, through a priority-inheriting futex), which
/// ThreadSanitizer does not instrument: it would report races on the state the lock guards. So a
/// subscriber tells it of each lock and unlock itself, with its own address as the synchronisation
/// object. Looked up once; each subscriber keeps the answer (``Subscriber/underThreadSanitizer``), so
/// without ThreadSanitizer a lock only reads a byte of the subscriber it already reads.
@usableFromInline let threadSanitizerHooks: ThreadSanitizerHooks? = ThreadSanitizerHooks.lookUp()

/// The two ThreadSanitizer entry points a subscriber calls, found in the running process.
@usableFromInline struct ThreadSanitizerHooks: Sendable {
    @usableFromInline let acquire: @convention(c) (UnsafeMutableRawPointer?) -> Void
    @usableFromInline let release: @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// The hooks, if the process's global symbols include them (a ThreadSanitizer build exports them).
    static func lookUp() -> ThreadSanitizerHooks? {
        guard let process = dlopen(nil, RTLD_LAZY),
            let acquire = dlsym(process, "__tsan_acquire"),
            let release = dlsym(process, "__tsan_release")
        else { return nil }
        typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
        return ThreadSanitizerHooks(
            acquire: unsafeBitCast(acquire, to: Hook.self), release: unsafeBitCast(release, to: Hook.self))
    }
}

/// A subscriber seen only as "has it ended?", so an operator's subscriber can ask its downstream.
@usableFromInline
protocol DownstreamLink: AnyObject, Sendable {
    var isTerminated: Bool { get }
}

extension Subscriber: DownstreamLink {}

// Safe: all mutable state is `machine`, `next` or `extras`, which are read and written only while
// `mutex` is held; `mutex` itself is a `let`, the subscriber's own. The
// subscriber never stores a value of `T` or `E`; it hands each one from the sending thread to the
// callback on that same thread. Objects given to `keepAlive` are only retained and released.
extension Subscriber: @unchecked Sendable {}

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

    @inlinable final func dispose() {
        self.disposeSubscription()
    }
}

/// The subscriber of `start(linkedTo:)`: callbacks of its own, and a downstream it only asks whether it
/// has ended (see ``Subscriber/isTerminated``).
///
/// `@unchecked Sendable`: restated from ``Subscriber``; `downstream` is immutable and `Sendable`.
@usableFromInline final class LinkedSubscriber<T, E>: SubscriptionSubscriber<T, E>, @unchecked Sendable {
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

    @inlinable override var downstreamIsTerminated: Bool {
        return self.downstream.isTerminated
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
}

/// What few subscribers need: error and completion callbacks (an operator's subscriber forwards its
/// terminal events instead), and objects given to ``Subscriber/keepAlive(_:)``. Read and written only
/// under the owning subscriber's mutex, or by the one thread that took it out of the subscriber.
@usableFromInline final class SubscriberExtras<E> {
    @usableFromInline let error: (@Sendable (E) -> Void)?
    @usableFromInline let completed: (@Sendable () -> Void)?
    @usableFromInline var keptAlive: [AnyObject] = []

    @inlinable init(error: (@Sendable (E) -> Void)?, completed: (@Sendable () -> Void)?) {
        self.error = error
        self.completed = completed
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
/// - ``withExtra(_:)`` holds the subscriber's mutex: its body must only read and write `extra`, never
///   call out or release an object that could deinitialise.
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
