import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A subscriber that takes only its first event and hands it to its owner in two steps rather than to
/// callbacks: the base of ``FirstEventSubscriber``, generic only over the event types, so that
/// ``Subscriber``'s event methods can reach it.
///
/// The first event of any kind terminates the subscriber in the lock round trip that admits it, and
/// ``admit(_:)`` records it in that same round trip: from then on it is the outcome, whatever a deadline
/// or a cancellation does while the subscription is being disposed. The subscription is then disposed
/// (outside the lock; the source's disposable may take its time), and then ``subscriptionEnded()`` runs,
/// outside the lock. Later events are dropped, so each step runs at most once.
///
/// `@unchecked Sendable`: as ``Subscriber``; this class adds no stored state.
@usableFromInline package class FirstEventHandlers<T, E>: Subscriber<T, E>, @unchecked Sendable {
    @inlinable init() {
        super.init(firstEventOnly: ())
    }

    /// Records the first event. Called with the subscriber's mutex held, in the round trip that admits
    /// the event: it must only store it, never call out or release an object that could deinitialise.
    @usableFromInline func admit(_ event: SignalEvent<T, E>) {
        preconditionFailure("FirstEventHandlers.admit(_:) is overridden by FirstEventSubscriber")
    }

    /// Called once the subscription that the first event ended has been disposed, outside the lock.
    @usableFromInline func subscriptionEnded() {
        preconditionFailure("FirstEventHandlers.subscriptionEnded() is overridden by FirstEventSubscriber")
    }
}

/// A subscriber that takes only its first event (see ``FirstEventHandlers``), carries state of its
/// owner's choosing guarded by the subscriber's own mutex, and is its own disposable: a one-shot
/// subscription and the state that goes with it in one object.
///
/// `package`: a building block for the concurrency bridges (`get()`), not API.
///
/// - The owner gives the initialiser `onEvent`, which records the first event in `extra` with the
///   mutex held (see ``FirstEventHandlers/admit(_:)``), and `onEnded`, which runs outside the lock once
///   that event's subscription has been disposed; then it starts the signal with ``subscribe(to:)``.
/// - ``withExtra(_:)`` holds the subscriber's mutex: its body must only read and write `extra`, never
///   call out or release an object that could deinitialise.
///
/// `@unchecked Sendable`: as ``Subscriber``. `extra` is written under the mutex, except by `onEnded` on
/// the creating thread while ``subscribe(to:)`` runs, when no other thread can touch it (see
/// ``withExtraForFirstEvent(_:)``); `creatorPhase` is read and written by the creating thread only;
/// `creator` and the two closures are immutable.
@usableFromInline package final class FirstEventSubscriber<T, E, Extra>: FirstEventHandlers<T, E>, Disposable, @unchecked Sendable {
    @usableFromInline enum CreatorPhase {
        case notStarted
        /// Inside ``subscribe(to:)``.
        case starting
        /// The first event's `onEnded` ran on the creating thread inside ``subscribe(to:)``.
        case answeredWhileStarting
        case started
    }

    @exclusivity(unchecked) @usableFromInline var extra: Extra
    /// The thread that created the subscriber, which is the one that starts the signal.
    @usableFromInline let creator: pthread_t
    @exclusivity(unchecked) @usableFromInline var creatorPhase = CreatorPhase.notStarted
    /// Records the first event in `extra`, with the mutex held.
    @usableFromInline let onEvent: @Sendable (inout Extra, SignalEvent<T, E>) -> Void
    /// Runs outside the lock once the first event's subscription has been disposed.
    @usableFromInline let onEnded: @Sendable (FirstEventSubscriber<T, E, Extra>) -> Void

    /// - Parameters:
    ///   - extra: The owner's state.
    ///   - onEvent: Records the first event in `extra`; called with the mutex held, so it must only
    ///     store (see ``FirstEventHandlers/admit(_:)``).
    ///   - onEnded: Called outside the lock once the first event's subscription has been disposed.
    @inlinable package init(
        extra: Extra,
        onEvent: @escaping @Sendable (inout Extra, SignalEvent<T, E>) -> Void,
        onEnded: @escaping @Sendable (FirstEventSubscriber<T, E, Extra>) -> Void
    ) {
        self.extra = extra
        self.creator = pthread_self()
        self.onEvent = onEvent
        self.onEnded = onEnded
        super.init()
    }

    @inlinable override final func admit(_ event: SignalEvent<T, E>) {
        self.onEvent(&self.extra, event)
    }

    @inlinable override final func subscriptionEnded() {
        self.onEnded(self)
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

    /// For `onEnded`: runs `body` on `extra`, without locking when `onEnded` runs on the creating thread
    /// inside ``subscribe(to:)`` (a signal that answers while it starts: a cached value, `single`), and
    /// with the mutex held otherwise.
    ///
    /// Unlocked is safe there because nothing else can touch `extra` meanwhile: the event was admitted
    /// and no other will be, the owner's other code runs on this very thread after ``subscribe(to:)``
    /// returns, and the owner must not give the subscriber to another thread before then (`get()`
    /// installs its cancellation handler afterwards).
    @inlinable @inline(__always)
    package func withExtraForFirstEvent<Result>(_ body: (inout Extra) -> Result) -> Result {
        if pthread_equal(pthread_self(), self.creator) != 0 && self.creatorPhase == .starting {
            self.creatorPhase = .answeredWhileStarting
            return body(&self.extra)
        }
        return self.withExtra(body)
    }

    /// On the creating thread, after ``subscribe(to:)``: `extra`, read without locking, if the first
    /// event's `onEnded` changed it on this thread while starting; otherwise nil, and the caller locks
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
