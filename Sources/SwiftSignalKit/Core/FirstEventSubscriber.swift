import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
