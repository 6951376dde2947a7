import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The state of a ``Subscriber`` that does not depend on its value and error types; every event returns
/// what the subscriber must do once unlocked.
///
/// It is deliberately not generic: the subscriber's hot path runs in the library's unspecialised generic
/// code, and a generic state type there costs a runtime metadata lookup on every lock. The callbacks,
/// which are generic, live in the subscriber itself, guarded by the same lock.
@usableFromInline struct SubscriberStateMachine {
    /// What to run, unlocked, after a terminal event or disposal (besides the subscriber's callbacks).
    @usableFromInline struct TerminateAction {
        /// Kept only to be released outside the lock (their deinit may run user code).
        @usableFromInline var released: [AnyObject]
        @usableFromInline var disposable: Disposable?
        @usableFromInline var waitForOtherThreads: DispatchSemaphore?

        @usableFromInline init(released: [AnyObject], disposable: Disposable?) {
            self.released = released
            self.disposable = disposable
            self.waitForOtherThreads = nil
        }

        /// Disposes the generator's disposable.
        @inlinable func finish() {
            self.disposable?.dispose()
        }
    }

    /// Whether events are still delivered, and how.
    @usableFromInline enum Status: UInt8 {
        /// Every event is delivered, each callback counted while it runs.
        case live
        /// Live, but the first event of any kind terminates the subscriber (see ``takeFirstEvent()``).
        case firstEventOnly
        /// Terminated or disposed: events are dropped.
        case terminated
    }

    /// One byte, so that the test on every delivered value (``admitsValues``) is a single compare for
    /// both "terminated" and "first event only".
    @usableFromInline private(set) var status: Status

    @inlinable var isTerminated: Bool {
        return self.status == .terminated
    }
    @usableFromInline var disposable: Disposable?
    /// The callbacks in progress, as a multiset of threads (a thread appears more than once when a callback
    /// re-enters the subscriber). The common case, one thread, needs no array: `firstThread` with its depth.
    @usableFromInline var firstThread: pthread_t?
    @usableFromInline var firstDepth = 0
    /// A second thread delivering at the same time, with its depth: two concurrent emitters, the usual
    /// kind of concurrency, need no array. Invariant: `secondDepth` is 0 when `firstDepth` is, and the
    /// rare state's `otherThreads` (a third thread and beyond) is empty when `secondDepth` is 0.
    @usableFromInline var secondThread: pthread_t?
    @usableFromInline var secondDepth = 0
    /// What most subscribers never need, allocated on first use: a subscriber without it is smaller, and
    /// creating and destroying it costs no array retains and releases.
    @usableFromInline var rare: Rare?

    /// The state of kept-alive objects, concurrent emitters and waiting disposers. Touched only under the
    /// subscriber's lock, like the rest of the state machine; hence `@exclusivity(unchecked)`, since the
    /// dynamic check of a class property costs two runtime calls per access, on every concurrent delivery.
    @usableFromInline final class Rare {
        @exclusivity(unchecked) var keepAliveObjects: [AnyObject] = []
        /// Callbacks in progress on threads other than `firstThread` and `secondThread`.
        @exclusivity(unchecked) @usableFromInline var otherThreads: [pthread_t] = []
        /// Disposers waiting for callbacks on other threads to return.
        @exclusivity(unchecked) @usableFromInline var waiters: [(thread: pthread_t, semaphore: DispatchSemaphore)] = []

        init() {}
    }

    /// - Parameter firstEventOnly: Whether the first event of any kind terminates the subscriber (see
    ///   ``takeFirstEvent()``).
    @usableFromInline init(firstEventOnly: Bool = false) {
        self.status = firstEventOnly ? .firstEventOnly : .live
    }

    /// The rare state, created if needed. Allocating under the lock is fine: it runs no user code.
    @usableFromInline mutating func rareState() -> Rare {
        if let rare = self.rare { return rare }
        let rare = Rare()
        self.rare = rare
        return rare
    }

    /// Whether no callback is in progress on any thread (`secondDepth` and the other threads are empty
    /// whenever `firstDepth` is 0).
    @inlinable var isIdle: Bool {
        return self.firstDepth == 0
    }

    /// Whether disposers are waiting.
    @inlinable var hasWaiters: Bool {
        guard let rare = self.rare else { return false }
        return !rare.waiters.isEmpty
    }

    /// Keeps `object` until the subscriber terminates.
    mutating func keepAlive(_ object: AnyObject) {
        self.rareState().keepAliveObjects.append(object)
    }

    /// Whether a value is delivered, counted with ``countDelivery(on:)``; when false, it is dropped or
    /// (see ``takeFirstEvent()``) ends a first-event-only subscriber. A single compare of one byte, since
    /// it is tested for every value.
    @inlinable var admitsValues: Bool {
        return self.status == .live
    }

    /// When ``admitsValues`` is false: if this is a first-event-only subscriber's first event,
    /// terminates it and returns what to run once unlocked; otherwise (terminated) nil.
    ///
    /// Nothing is counted: the event's handler runs after the subscriber has terminated, and no dispose
    /// waits for it (see ``FirstEventHandlers``).
    @inlinable
    mutating func takeFirstEvent() -> TerminateAction? {
        guard self.status == .firstEventOnly else { return nil }
        return self.takeEverything()
    }

    /// Counts a delivery that is about to run on `thread`.
    @inlinable
    mutating func countDelivery(on thread: pthread_t) {
        if self.firstDepth == 0 {
            self.firstThread = thread
            self.firstDepth = 1
        } else if let first = self.firstThread, pthread_equal(first, thread) != 0 {
            self.firstDepth += 1
        } else if self.secondDepth == 0 {
            self.secondThread = thread
            self.secondDepth = 1
        } else if let second = self.secondThread, pthread_equal(second, thread) != 0 {
            self.secondDepth += 1
        } else {
            self.rareState().otherThreads.append(thread)
        }
    }

    /// A callback returned: returns whether disposers are waiting (then call ``takeReleasedWaiters()``).
    ///
    /// It returns a `Bool`, not the released waiters: a standard-library generic result type such as
    /// an optional array costs a runtime metadata lookup on every call from unspecialised code.
    @inlinable
    mutating func endDelivery(on thread: pthread_t) -> Bool {
        if self.firstDepth > 1, let first = self.firstThread, pthread_equal(first, thread) != 0 {
            self.firstDepth -= 1
            return self.hasWaiters
        }
        if self.firstDepth == 1, self.secondDepth == 0, let first = self.firstThread,
            pthread_equal(first, thread) != 0
        {
            self.firstDepth = 0
            self.firstThread = nil
            return self.hasWaiters
        }
        return self.endDeliveryWithOtherThreads(on: thread)
    }

    /// ``endDelivery(on:)`` when callbacks run on several threads.
    @usableFromInline
    mutating func endDeliveryWithOtherThreads(on thread: pthread_t) -> Bool {
        if self.firstDepth > 0, let first = self.firstThread, pthread_equal(first, thread) != 0 {
            self.firstDepth -= 1
            if self.firstDepth == 0 {
                // The second thread becomes the first, and a third (if any) the second.
                self.firstThread = self.secondThread
                self.firstDepth = self.secondDepth
                self.promoteIntoSecond()
            }
        } else if self.secondDepth > 0, let second = self.secondThread, pthread_equal(second, thread) != 0 {
            self.secondDepth -= 1
            if self.secondDepth == 0 {
                self.promoteIntoSecond()
            }
        } else if let rare = self.rare,
            let index = rare.otherThreads.firstIndex(where: { pthread_equal($0, thread) != 0 })
        {
            rare.otherThreads.remove(at: index)
        } else {
            preconditionFailure("Subscriber callback ended on a thread that did not start it")
        }
        return self.hasWaiters
    }

    /// Fills the second slot from the other threads (all of one thread's entries), or empties it.
    @usableFromInline
    mutating func promoteIntoSecond() {
        self.secondThread = nil
        self.secondDepth = 0
        guard let rare = self.rare, !rare.otherThreads.isEmpty else { return }
        let next = rare.otherThreads.removeLast()
        self.secondThread = next
        self.secondDepth = 1
        while let index = rare.otherThreads.firstIndex(where: { pthread_equal($0, next) != 0 }) {
            rare.otherThreads.remove(at: index)
            self.secondDepth += 1
        }
    }

    /// Removes and returns the disposers that no longer need to wait.
    @usableFromInline
    mutating func takeReleasedWaiters() -> [DispatchSemaphore] {
        guard let rare = self.rare else { return [] }
        var released: [DispatchSemaphore] = []
        var stillWaiting: [(thread: pthread_t, semaphore: DispatchSemaphore)] = []
        for waiter in rare.waiters {
            if self.deliveringOnOtherThreads(than: waiter.thread) {
                stillWaiting.append(waiter)
            } else {
                released.append(waiter.semaphore)
            }
        }
        rare.waiters = stillWaiting
        return released
    }

    /// An error or completion arrives: returns the action to run, or nil when already terminated. When
    /// `delivering` is true, the terminal callback is counted as a delivery on `thread` (end it with
    /// ``endDelivery(on:)``).
    @usableFromInline
    mutating func terminate(on thread: pthread_t, delivering: Bool) -> TerminateAction? {
        switch self.status {
        case .terminated:
            return nil
        case .firstEventOnly:
            // As for a value (see `takeFirstEvent()`): not counted.
            return self.takeEverything()
        case .live:
            let action = self.takeEverything()
            if delivering { self.countDelivery(on: thread) }
            return action
        }
    }

    /// After ``terminate(on:delivering:)`` of an operator's subscriber that passes the terminal event on
    /// to its downstream (which counts its own callbacks): counts the forward as a delivery on `thread`
    /// only while callbacks run on other threads, and returns whether it did (then end it with
    /// ``endDelivery(on:)``).
    ///
    /// Counted then, so that a dispose reached on `thread` from inside the forward (the downstream's own
    /// termination disposes its upstream) does not wait for those callbacks, as it would not from inside
    /// a callback. Otherwise counting is useless: terminated, the subscriber starts no more callbacks, so
    /// no dispose could ever have anything to wait for but the forward itself, which runs no code of the
    /// operator.
    @inlinable
    mutating func countForward(on thread: pthread_t) -> Bool {
        // `firstDepth` is 0 when no callback runs at all (the usual case): no search needed.
        guard self.firstDepth > 0, self.deliveringOnOtherThreads(than: thread) else { return false }
        self.countDelivery(on: thread)
        return true
    }

    /// The subscription is disposed: returns what to release and, when callbacks are running on other
    /// threads, a semaphore to wait on. `wasTerminated` tells whether it had already ended.
    @usableFromInline
    mutating func dispose(on thread: pthread_t) -> (action: TerminateAction, wasTerminated: Bool) {
        let wasTerminated = self.isTerminated
        var action: TerminateAction
        if wasTerminated {
            action = TerminateAction(released: [], disposable: nil)
        } else {
            action = self.takeEverything()
        }
        // A disposer inside one of this subscriber's callbacks does not wait: its own callback is still
        // running anyway, and two such disposers on different threads would wait for each other.
        if self.deliveringOnOtherThreads(than: thread) && !self.isDelivering(on: thread) {
            let semaphore = DispatchSemaphore(value: 0)
            self.rareState().waiters.append((thread, semaphore))
            action.waitForOtherThreads = semaphore
        }
        return (action, wasTerminated)
    }

    @usableFromInline
    mutating func takeEverything() -> TerminateAction {
        self.status = .terminated
        let action = TerminateAction(released: self.rare?.keepAliveObjects ?? [], disposable: self.disposable)
        self.disposable = nil
        self.rare?.keepAliveObjects = []
        return action
    }

    private func isDelivering(on thread: pthread_t) -> Bool {
        if self.firstDepth > 0, let first = self.firstThread, pthread_equal(first, thread) != 0 {
            return true
        }
        if self.secondDepth > 0, let second = self.secondThread, pthread_equal(second, thread) != 0 {
            return true
        }
        return self.rare?.otherThreads.contains { pthread_equal($0, thread) != 0 } ?? false
    }

    @usableFromInline
    func deliveringOnOtherThreads(than thread: pthread_t) -> Bool {
        if self.firstDepth > 0, let first = self.firstThread, pthread_equal(first, thread) == 0 {
            return true
        }
        if self.secondDepth > 0, let second = self.secondThread, pthread_equal(second, thread) == 0 {
            return true
        }
        return self.rare?.otherThreads.contains { pthread_equal($0, thread) == 0 } ?? false
    }
}
