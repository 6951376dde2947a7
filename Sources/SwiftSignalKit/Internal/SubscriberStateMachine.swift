import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The state of a ``Subscriber``. Every event returns what the subscriber must do once unlocked.
struct SubscriberStateMachine<T, E> {
    enum Terminal {
        case error
        case completion
    }

    /// What to run, unlocked, after a terminal event or disposal.
    struct TerminateAction {
        var error: (@Sendable (E) -> Void)?
        var completed: (@Sendable () -> Void)?
        /// Kept only to be released outside the lock (their deinit may run user code).
        var released: [Any]
        var disposable: Disposable?
        var waitForOtherThreads: DispatchSemaphore?

        /// Disposes the generator's disposable and releases captured objects.
        func finish() {
            self.disposable?.dispose()
        }
    }

    private var next: (@Sendable (T) -> Void)?
    private var error: (@Sendable (E) -> Void)?
    private var completed: (@Sendable () -> Void)?
    private(set) var isTerminated = false
    var disposable: Disposable?
    var keepAliveObjects: [AnyObject] = []
    /// One entry per callback in progress, with the thread that runs it (a thread may appear twice when a
    /// callback re-enters the subscriber).
    private var deliveringThreads: ContiguousArray<pthread_t> = []
    /// Disposers waiting for callbacks on other threads to return.
    private var waiters: [(thread: pthread_t, semaphore: DispatchSemaphore)] = []

    init(next: (@Sendable (T) -> Void)?, error: (@Sendable (E) -> Void)?, completed: (@Sendable () -> Void)?) {
        self.next = next
        self.error = error
        self.completed = completed
    }

    /// The value callback, wrapped in a struct: a bare function value returned through the generic
    /// result of `withLock` would be re-abstracted, which allocates a thunk on every value.
    struct NextCallback {
        let call: @Sendable (T) -> Void
    }

    /// A value arrives: returns the callback to run, or nil to drop the value.
    mutating func beginNext(on thread: pthread_t) -> NextCallback? {
        guard !self.isTerminated, let next = self.next else { return nil }
        self.deliveringThreads.append(thread)
        return NextCallback(call: next)
    }

    /// A callback returned: returns the disposers that no longer need to wait.
    mutating func endDelivery(on thread: pthread_t) -> [DispatchSemaphore] {
        if let index = self.deliveringThreads.firstIndex(where: { pthread_equal($0, thread) != 0 }) {
            self.deliveringThreads.remove(at: index)
        } else {
            preconditionFailure("Subscriber callback ended on a thread that did not start it")
        }
        if self.waiters.isEmpty { return [] }
        var released: [DispatchSemaphore] = []
        var stillWaiting: [(thread: pthread_t, semaphore: DispatchSemaphore)] = []
        for waiter in self.waiters {
            if self.deliveringOnOtherThreads(than: waiter.thread) {
                stillWaiting.append(waiter)
            } else {
                released.append(waiter.semaphore)
            }
        }
        self.waiters = stillWaiting
        return released
    }

    /// An error or completion arrives: returns the action to run, or nil when already terminated.
    mutating func terminate(on thread: pthread_t, taking terminal: Terminal) -> TerminateAction? {
        guard !self.isTerminated else { return nil }
        var action = self.takeEverything()
        switch terminal {
        case .error:
            action.completed = nil
            if action.error != nil { self.deliveringThreads.append(thread) }
        case .completion:
            action.error = nil
            if action.completed != nil { self.deliveringThreads.append(thread) }
        }
        return action
    }

    /// The subscription is disposed: returns what to release and, when callbacks are running on other
    /// threads, a semaphore to wait on.
    mutating func dispose(on thread: pthread_t) -> TerminateAction {
        var action: TerminateAction
        if self.isTerminated {
            action = TerminateAction(error: nil, completed: nil, released: [], disposable: nil)
        } else {
            action = self.takeEverything()
            action.error = nil
            action.completed = nil
        }
        // A disposer inside one of this subscriber's callbacks does not wait: its own callback is still
        // running anyway, and two such disposers on different threads would wait for each other.
        if self.deliveringOnOtherThreads(than: thread) && !self.isDelivering(on: thread) {
            let semaphore = DispatchSemaphore(value: 0)
            self.waiters.append((thread, semaphore))
            action.waitForOtherThreads = semaphore
        }
        return action
    }

    private mutating func takeEverything() -> TerminateAction {
        self.isTerminated = true
        var released: [Any] = self.keepAliveObjects
        // Every callback is also kept here, so that dropping one from the action below never releases
        // a closure (and whatever it captured) while the lock is held.
        if let next = self.next { released.append(next) }
        if let error = self.error { released.append(error) }
        if let completed = self.completed { released.append(completed) }
        let action = TerminateAction(
            error: self.error,
            completed: self.completed,
            released: released,
            disposable: self.disposable
        )
        self.next = nil
        self.error = nil
        self.completed = nil
        self.disposable = nil
        self.keepAliveObjects = []
        return action
    }

    private func isDelivering(on thread: pthread_t) -> Bool {
        return self.deliveringThreads.contains { pthread_equal($0, thread) != 0 }
    }

    private func deliveringOnOtherThreads(than thread: pthread_t) -> Bool {
        return self.deliveringThreads.contains { pthread_equal($0, thread) == 0 }
    }
}
