import SwiftSignalKit

/// The actor counterpart of `QueueLocalObject`: a value owned by an actor whose executor
/// is a `Queue`.
///
/// Async code reaches the value through the actor (``withValue(_:)``); legacy code that already runs on
/// the queue (a `queue.async` block, a `QueueLocalObject.with` closure, a callback after
/// `deliverOn(queue)`) reaches the same value synchronously with ``withValueOnQueue(_:)``. Both doors use
/// the queue's one serial executor, so they never race and never deadlock on each other.
///
/// ```swift
/// let queue = Queue(name: "sessions")
/// let sessions = QueueLocalActor(queue: queue, value: [String: Session]())
///
/// // Async code:
/// let count = await sessions.withValue { $0.count }
///
/// // Legacy code on the queue:
/// queue.async {
///     sessions.withValueOnQueue { $0["a"] = Session() }
/// }
/// ```
///
/// The value is released on the queue when the actor is released.
public actor QueueLocalActor<Value> {
    /// The queue this actor runs on.
    public nonisolated let queue: Queue
    private let executor: QueueExecutor
    private var value: Value

    /// The queue's executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        return self.executor.asUnownedSerialExecutor()
    }

    /// Creates the actor with its value.
    ///
    /// - Parameters:
    ///   - queue: A serial queue; the actor's code and the value's release run there.
    ///   - value: The initial value.
    public init(queue: Queue, value: sending Value) {
        self.queue = queue
        self.executor = QueueExecutor(queue: queue)
        self.value = value
    }

    isolated deinit {
        // Isolated: the value is released here, on the queue.
    }

    /// Runs `body` with exclusive access to the value, on the queue.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @discardableResult public func withValue<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        return try body(&self.value)
    }

    /// Runs `body` with exclusive access to the value, from code that is already running on the queue.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns.
    ///
    /// > Important: Traps (with a message naming the queue) when called from anywhere but the queue.
    @discardableResult public nonisolated func withValueOnQueue<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result
    {
        // Safe: `assumeIsolated` runs the closure inline, on this thread, before returning; `body` never
        // leaves the caller's thread or outlives the call.
        nonisolated(unsafe) let body = body
        return try self.assumeIsolated { actor in
            try body(&actor.value)
        }
    }

    /// Subscribes to `signal` and delivers its events isolated to this actor, in order.
    ///
    /// The events are delivered on the queue (`deliverOn(_:)`) and each handler
    /// runs isolated to the actor, so it may use the value directly.
    ///
    /// ```swift
    /// let disposable = sessions.subscribe(logins, next: { actor, login in
    ///     actor.withValueOnQueue { $0[login.id] = Session(login) }
    /// })
    /// ```
    ///
    /// > Note: The handlers are isolated to the actor, so its methods are called without `await`. With
    /// > Swift 6.3, a handler whose single expression has a value (`registry.withValue { $0.insert(x) }`)
    /// > can fail to type-check ("failed to produce diagnostic"); write `_ = registry.withValue { ... }`.
    ///
    /// - Parameters:
    ///   - signal: The source.
    ///   - next: Runs for each value, isolated to the actor.
    ///   - error: Runs for a failure, isolated to the actor.
    ///   - completed: Runs for completion, isolated to the actor.
    /// - Returns: The subscription.
    public nonisolated func subscribe<T: Sendable, E: Sendable>(
        _ signal: Signal<T, E>,
        next: @escaping @Sendable (isolated QueueLocalActor, T) -> Void,
        error: (@Sendable (isolated QueueLocalActor, E) -> Void)? = nil,
        completed: (@Sendable (isolated QueueLocalActor) -> Void)? = nil
    ) -> Disposable {
        return (signal |> deliverOn(self.queue)).start(
            next: { value in
                self.assumeIsolated { next($0, value) }
            },
            error: { failure in
                self.assumeIsolated { actor in error?(actor, failure) }
            },
            completed: {
                self.assumeIsolated { actor in completed?(actor) }
            })
    }
}
