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
/// - Disposing the subscription waits for callbacks of this subscriber that are running on *other*
///   threads to return, so that no event is delivered after `dispose()` returns. A `dispose()` called from
///   inside one of this subscription's own callbacks does not wait (its own callback is still running, and
///   two such calls on different threads would wait for each other).
///
/// > Warning: Because `dispose()` waits for callbacks running on other threads, do not dispose a
/// > subscription while holding a lock that one of its callbacks takes.
///
/// The class is not `final` only so that the library can make the subscriber that ``Signal/start(next:error:completed:)``
/// creates be the subscription's disposable as well; it cannot be subclassed outside the library, and its
/// members are `final`.
public class Subscriber<T, E>: CustomStringConvertible {
    /// The mutex that guards `machine` and the callbacks: shared with other subscribers (see
    /// ``SubscriberLockTable``). Set once in the initialiser, then only read.
    @exclusivity(unchecked) @usableFromInline final var mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Read and written only while `mutex` is locked, through ``withState(_:)``.
    @exclusivity(unchecked) @usableFromInline final var machine = SubscriberStateMachine()
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
    ///
    /// A forward is usually not counted as a delivery of this subscriber (see
    /// ``SubscriberStateMachine/countForward(on:)``), which saves a lock round trip per
    /// stage, so disposing this subscriber from another thread does not wait for a forward in progress.
    /// Nothing is lost: the forward runs no code of the operator, only `downstream.putError` or
    /// `putCompletion`, and the downstream counts its own callbacks, so the subscriber at the end of the
    /// chain, the one a user disposes, still waits for the user's callback.
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

    /// A short description of the subscriber's state, for debugging.
    public final var description: String {
        let terminated = self.withState { $0.isTerminated }
        return "Subscriber { terminated: \(terminated) }"
    }

    /// Sends a value. Dropped if the subscriber has terminated or been disposed.
    ///
    /// - Parameter next: The value.
    @inlinable public final func putNext(_ next: T) {
        let thread = pthread_self()
        var callback: (@Sendable (T) -> Void)? = nil
        self.withState { state in
            if let next = self.next, state.beginDelivery(on: thread) {
                callback = next
            }
        }
        // `consume`: binding the optional would copy the closure, a second retain and release of its
        // context per event.
        guard let callback = consume callback else { return }
        callback(next)
        self.endDelivery(on: thread)
    }

    /// Sends a failure and terminates the subscriber. Dropped if it has already terminated.
    ///
    /// After the error callback returns, the generator's disposable is disposed.
    ///
    /// - Parameter error: The error.
    @inlinable public final func putError(_ error: E) {
        let thread = pthread_self()
        // The callbacks are moved into these locals under the lock and released after it (see
        // `takeCallbacks`). Plain locals, not a generic struct: `dispose()` reached through the
        // `Disposable` existential runs unspecialised, and a generic struct would cost a metadata lookup.
        var next: (@Sendable (T) -> Void)? = nil
        var callback: (@Sendable (E) -> Void)? = nil
        var completed: (@Sendable () -> Void)? = nil
        var countedForward = false
        let action = self.withState { state in
            let action = state.terminate(on: thread, delivering: self.error != nil)
            if action != nil {
                self.takeCallbacks(next: &next, error: &callback, completed: &completed)
                if callback == nil && self.forwardError != nil { countedForward = state.countForward(on: thread) }
            }
            return action
        }
        guard let action else { return }
        if let callback = consume callback {
            callback(error)
            self.endDelivery(on: thread)
        } else if let forward = self.forwardError, let downstream = self.downstream {
            forward(downstream, error)
            if countedForward { self.endDelivery(on: thread) }
        }
        next = nil
        completed = nil
        action.finish()
    }

    /// Completes the subscriber. Dropped if it has already terminated.
    ///
    /// After the completion callback returns, the generator's disposable is disposed.
    @inlinable public final func putCompletion() {
        let thread = pthread_self()
        var next: (@Sendable (T) -> Void)? = nil
        var error: (@Sendable (E) -> Void)? = nil
        var callback: (@Sendable () -> Void)? = nil
        var countedForward = false
        let action = self.withState { state in
            let action = state.terminate(on: thread, delivering: self.completed != nil)
            if action != nil {
                self.takeCallbacks(next: &next, error: &error, completed: &callback)
                if callback == nil && self.forwardCompletion != nil { countedForward = state.countForward(on: thread) }
            }
            return action
        }
        guard let action else { return }
        if let callback = consume callback {
            callback()
            self.endDelivery(on: thread)
        } else if let forward = self.forwardCompletion, let downstream = self.downstream {
            forward(downstream)
            if countedForward { self.endDelivery(on: thread) }
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
    /// returns whether the subscriber has finished for good: terminated, with no callback in progress on
    /// any thread. No callback can start after termination, so disposing such a subscriber could never do
    /// anything. Unlike ``assignDisposable(_:)``, it locks even for the empty disposable, to find that out.
    @inlinable final func assignDisposableReportingFinished(_ disposable: Disposable) -> Bool {
        let isEmpty = type(of: disposable) == _EmptyDisposable.self
        let (alreadyTerminated, finished) = self.withState { state -> (Bool, Bool) in
            if state.isTerminated { return (true, state.isIdle) }
            if !isEmpty { state.disposable = disposable }
            return (false, false)
        }
        if alreadyTerminated && !isEmpty {
            disposable.dispose()
        }
        return finished
    }

    /// Ends the subscription from outside: drops further events, waits for callbacks running on other
    /// threads, then disposes the generator's disposable.
    @inlinable final func disposeSubscription() {
        self.disposeSubscription(if: { true })
    }

    /// ``disposeSubscription()`` if `decide`, run with the mutex held, returns true: an owner whose own
    /// state lives under this mutex (``StatefulSubscriber``) changes it and disposes in one lock round
    /// trip. `decide` must only read and write state guarded by the mutex, as the body of
    /// ``withState(_:)``.
    @inlinable final func disposeSubscription(if decide: () -> Bool) {
        let thread = pthread_self()
        var next: (@Sendable (T) -> Void)? = nil
        var error: (@Sendable (E) -> Void)? = nil
        var completed: (@Sendable () -> Void)? = nil
        let decided = self.withState { state -> SubscriberStateMachine.TerminateAction? in
            guard decide() else { return nil }
            let (action, wasTerminated) = state.dispose(on: thread)
            if !wasTerminated { self.takeCallbacks(next: &next, error: &error, completed: &completed) }
            return action
        }
        guard let action = decided else { return }
        action.waitForOtherThreads?.wait()
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

    /// Runs `body` with `mutex` locked. `body` must only read and write the state machine and the
    /// callbacks: the mutex is shared, so calling out (or taking another lock) could deadlock.
    @inlinable @inline(__always)
    final func withState<Result>(_ body: (inout SubscriberStateMachine) -> Result) -> Result {
        let locked = pthread_mutex_lock(self.mutex)
        if _slowPath(locked != 0) { SubscriberLockTable.failed("lock", locked) }
        defer {
            let unlocked = pthread_mutex_unlock(self.mutex)
            if _slowPath(unlocked != 0) { SubscriberLockTable.failed("unlock", unlocked) }
        }
        return body(&self.machine)
    }

    @inlinable final func endDelivery(on thread: pthread_t) {
        guard self.withState({ $0.endDelivery(on: thread) }) else { return }
        // Rare: a disposer waits. Which waiters may go is decided afresh under the lock.
        for semaphore in self.withState({ $0.takeReleasedWaiters() }) {
            semaphore.signal()
        }
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

/// A subscriber that carries state of its owner's choosing, guarded by the subscriber's own mutex, and
/// that is its own disposable: a subscription and the state that goes with it in one object.
///
/// `package`: a building block for the concurrency bridges (`get()`), not API. The owner sets the
/// callbacks with ``setCallbacks(next:error:completed:)`` before starting the signal; they may capture
/// the subscriber itself, since a subscriber releases its callbacks when it terminates or is disposed.
/// ``withExtra(_:)`` holds the subscriber's mutex, which is shared (see ``SubscriberLockTable``): its
/// body must only read and write `extra`, never call out or release an object that could deinitialise.
///
/// `@unchecked Sendable`: as ``Subscriber``; `extra` is written only under the mutex, and read without it
/// only as ``extraIfChangedByCreator()`` allows; `changedByCreator` is written only by the creating
/// thread, under the mutex, and read only by that thread; `creator` is immutable.
@usableFromInline package final class StatefulSubscriber<T, E, Extra>: Subscriber<T, E>, Disposable, @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var extra: Extra
    /// The thread that created the subscriber, which is the one that starts the signal.
    @usableFromInline let creator: pthread_t
    /// Set by ``noteChangeByCreator()``.
    @exclusivity(unchecked) @usableFromInline var changedByCreator = false

    @inlinable package init(extra: Extra) {
        self.extra = extra
        self.creator = pthread_self()
        super.init(next: nil, error: nil, completed: nil)
    }

    /// Sets the callbacks; call once, before the subscriber is started. Not locked: until the subscriber
    /// is handed to a generator no other thread can see it, and handing it over publishes these stores
    /// as the initialiser's are.
    @inlinable package func setCallbacks(
        next: (@Sendable (T) -> Void)?,
        error: (@Sendable (E) -> Void)?,
        completed: (@Sendable () -> Void)?
    ) {
        self.next = next
        self.error = error
        self.completed = completed
    }

    /// Runs `body` with the subscriber's mutex held.
    @inlinable @inline(__always)
    package func withExtra<Result>(_ body: (inout Extra) -> Result) -> Result {
        return self.withState { _ in body(&self.extra) }
    }

    /// Runs `change` with the subscriber's mutex held and, if it returns true, disposes the subscription
    /// in the same lock round trip (see ``dispose()``). `change` must only read and write `extra`.
    @inlinable @inline(__always)
    package func dispose(if change: (inout Extra) -> Bool) {
        self.disposeSubscription(if: { change(&self.extra) })
    }

    /// Inside a `withExtra` body: remembers that `extra` was just changed by the creating thread, if the
    /// caller is that thread (otherwise does nothing).
    @inlinable package func noteChangeByCreator() {
        if pthread_equal(pthread_self(), self.creator) != 0 {
            self.changedByCreator = true
        }
    }

    /// On the creating thread only, and without locking: `extra`, if this thread noted a change to it
    /// (see ``noteChangeByCreator()``); otherwise nil, and the caller locks (``withExtra(_:)``).
    ///
    /// This saves a lock round trip when the signal answers on the creating thread while it starts. It is
    /// safe only for an owner whose noted change is final: no thread changes `extra` after it (the first
    /// outcome of `get()`). Other threads may still read `extra` under the mutex meanwhile, which does not
    /// race with this read; and the flag is written and read by the creating thread alone.
    @inlinable package func extraIfChangedByCreator() -> Extra? {
        assert(pthread_equal(pthread_self(), self.creator) != 0, "extraIfChangedByCreator() off the creating thread")
        return self.changedByCreator ? self.extra : nil
    }

    @inlinable package func dispose() {
        self.disposeSubscription()
    }
}
