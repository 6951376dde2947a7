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
/// The value is released on the queue when the actor is released, wherever the last reference goes.
public actor QueueLocalActor<Value> {
    /// The queue this actor runs on.
    public nonisolated let queue: Queue
    /// The box holding the value, retained by hand: the actor's one strong reference, which `deinit`
    /// hands to the queue so that the value is released there.
    ///
    /// Safe to mark `nonisolated(unsafe)`: the reference never changes, and the box is used only through
    /// `access(_:_:)`, which is isolated to the actor, and by `deinit`, when nothing else can reach the
    /// actor.
    private nonisolated(unsafe) let storage: Unmanaged<QueueLocalActorStorage<Value>>
    /// Whether a `withValue` or `withValueOnQueue` body is running. A byte more in the actor or in the
    /// value's box moves the object to the next allocation size, 16 bytes more per actor; so the actor
    /// keeps the queue and asks it for its executor rather than storing that too.
    private var isBeingAccessed = false

    /// The queue's executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        return QueueJobs.of(self.queue).asUnownedSerialExecutor()
    }

    /// Creates the actor with its value.
    ///
    /// A global concurrent queue (`Queue.concurrentDefaultQueue()`, a wrapped `DispatchQueue.global`),
    /// which would run the actor's jobs in parallel, stops the process with a message. A concurrent
    /// queue made elsewhere and wrapped (`Queue(queue:)` of a `DispatchQueue` made with `.concurrent`)
    /// cannot be told from a serial one here: two accesses that overlap on it stop the process with the
    /// message for a nested access, which names this cause too.
    ///
    /// - Parameters:
    ///   - queue: A serial queue; the actor's code and the value's release run there.
    ///   - value: The initial value.
    public init(queue: Queue, value: sending Value) {
        if queue.isGlobalConcurrentQueue {
            misuse(
                "QueueLocalActor(queue:value:): the queue must be serial, and \(queue.queue.label) is a global "
                    + "concurrent queue, which would run the actor's jobs in parallel. Give it a serial queue: Queue(name:)")
        }
        self.queue = queue
        self.storage = Unmanaged.passRetained(QueueLocalActorStorage(value))
    }

    deinit {
        // Not an `isolated deinit`, which makes release builds with testing enabled fail ("circular
        // reference"). The box's one strong reference moves to a block on the queue, which releases it
        // there: inline when the actor dies on a queue that `Queue.async` runs inline (one made by
        // `Queue(name:)`, `Queue.mainQueue()`), otherwise after the work queued before it.
        //
        // Safe: the actor is being destroyed, so nothing else can reach the box, and the block is its only
        // owner from here on; the block runs on the queue, where the value belongs, and only releases it.
        nonisolated(unsafe) let storage = self.storage
        self.queue.async {
            storage.release()
        }
    }

    /// Runs `body` on the value, isolated to the actor, unless another access is already running (then
    /// stops the process with a message naming `api`: the two would modify the value at once).
    private func access<Result>(_ api: String, _ body: (inout Value) throws -> Result) rethrows -> Result {
        let box = self.storage.takeUnretainedValue()
        if self.isBeingAccessed {
            misuse(
                "QueueLocalActor.\(api) called inside another withValue or withValueOnQueue of the same actor, "
                    + "whose body is changing the value. Pass the value (inout) to the inner code instead of "
                    + "reaching the actor again. The nesting may be hidden: a deinit that reaches this actor, run "
                    + "inside a body that releases the last reference to an object (another QueueLocalActor on this "
                    + "queue releases its value at once), or a callback the body triggers synchronously. If nothing "
                    + "was nested, the actor's queue is concurrent (a DispatchQueue "
                    + "made with .concurrent and wrapped in Queue(queue:)), which runs two accesses at once: give the "
                    + "actor a serial queue, Queue(name:).")
        }
        self.isBeingAccessed = true
        let depth = Int(bitPattern: queueLocalActorAccesses.value)
        queueLocalActorAccesses.set(UnsafeRawPointer(bitPattern: depth + 1))
        defer {
            queueLocalActorAccesses.set(UnsafeRawPointer(bitPattern: depth))
            self.isBeingAccessed = false
        }
        return try body(&box.value)
    }

    /// Runs `body` with exclusive access to the value, on the queue.
    ///
    /// `body` is `sending`: a closure made in another isolation (a `@MainActor` function, a module whose
    /// default isolation is the main actor) may be passed, as long as it does not capture state of that
    /// isolation that is not `Sendable`. Code isolated to this actor whose body captures a non-`Sendable`
    /// local it uses again afterwards calls ``withValueOnQueue(_:)`` instead, which it may (it runs on
    /// the queue) and which takes any body.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    ///
    /// > Important: Calling ``withValueOnQueue(_:)`` of the same actor from `body` stops the process with
    /// > a message saying so: the inner call would change the value while `body` is changing it. Pass
    /// > the value down instead.
    @discardableResult public func withValue<Result: Sendable>(_ body: sending (inout Value) throws -> Result) rethrows -> Result {
        return try self.access("withValue(_:)", body)
    }

    /// Runs `body` with exclusive access to the value, from code that is already running on the queue.
    ///
    /// "On the queue" is what `Queue.isCurrent()` answers: in work the queue runs, and in `Queue.sync`
    /// blocks on other queues nested in such work (`queue.sync { other.sync { ... } }`), where the
    /// waiting caller owns the queue.
    ///
    /// - Parameter body: Reads or changes the value; runs inline, on the calling thread.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    ///
    /// > Important: Traps (with a message naming the queue) when called from anywhere but the queue, and
    /// > (with a message saying so) when called from the body of another ``withValue(_:)`` or
    /// > `withValueOnQueue` of the same actor, which is changing the value: pass the value down instead.
    @discardableResult public nonisolated func withValueOnQueue<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result
    {
        // Safe: `assumeIsolated` runs the closure inline, on this thread, before returning; `body` never
        // leaves the caller's thread or outlives the call.
        nonisolated(unsafe) let body = body
        // Checked here, before `assumeIsolated`, whose own check (the executor's `checkIsolated()`)
        // would name the queue but not the call the user made.
        if !self.queue.isCurrent() {
            misuse(
                "QueueLocalActor.withValueOnQueue(_:) called off the actor's queue (\(self.queue.queue.label)): call it "
                    + "from work that queue runs (a deliverOn(queue) callback, queue.async), or await withValue(_:) instead")
        }
        return try self.assumeIsolated { actor in
            try actor.access("withValueOnQueue(_:)", body)
        }
    }

    /// Subscribes to `signal` and delivers its events isolated to this actor, in order.
    ///
    /// The events are delivered on the queue (`deliverOn(_:)`) and each handler
    /// runs isolated to the actor, so it may use the value directly.
    ///
    /// A handler never runs in the middle of an access: an event sent while the body of a
    /// ``withValue(_:)`` or ``withValueOnQueue(_:)`` runs on the thread (of this actor or any other, on
    /// any queue; a `putNext` on a pipe this actor subscribes to) is enqueued and handled after that
    /// body has returned, as an actor handles a message sent to it from another actor's code; the
    /// subscription's events stay in the order they were sent. An event sent on the queue outside any access runs inline where `deliverOn(_:)` would
    /// run it inline (a queue made by `Queue(name:)`; on a wrapped queue every event is enqueued).
    ///
    /// ```swift
    /// let disposable = sessions.subscribe(logins, next: { actor, login in
    ///     actor.withValueOnQueue { $0[login.id] = Session(login) }
    /// })
    /// ```
    ///
    /// `next` may return a value, which is ignored, so a one-expression handler whose expression has a
    /// value (`{ actor, id in actor.withValue { $0.insert(id) } }`) compiles as it is. `error` and
    /// `completed` return nothing: in those, write `_ = actor.withValue { ... }` when the body has a value.
    ///
    /// The subscription holds the actor, and with it the value, until it ends: dispose of it when the
    /// actor should go (keeping the disposable in the value would make a cycle).
    ///
    /// - Parameters:
    ///   - signal: The source.
    ///   - next: Runs for each value, isolated to the actor; what it returns is ignored.
    ///   - error: Runs for a failure, isolated to the actor.
    ///   - completed: Runs for completion, isolated to the actor.
    /// - Returns: The subscription.
    public nonisolated func subscribe<T: Sendable, E: Sendable, Ignored>(
        _ signal: Signal<T, E>,
        next: @escaping @Sendable (isolated QueueLocalActor, T) -> Ignored,
        error: (@Sendable (isolated QueueLocalActor, E) -> Void)? = nil,
        completed: (@Sendable (isolated QueueLocalActor) -> Void)? = nil
    ) -> Disposable {
        // `next` returns a generic value rather than `Void`: with `Void`, Swift 6.3 fails to type-check
        // a one-expression closure whose expression has a value ("failed to produce diagnostic").
        // Not plain `deliverOn`: an event sent on the queue from an access's body would run there, and
        // its handler's access would find the value being changed.
        return (signal |> deliverOnQueue(self.queue, enqueueingWhile: threadIsInsideAQueueLocalActorAccess)).start(
            next: { value in
                self.assumeIsolated { actor -> Void in
                    let ignored = next(actor, value)
                    withExtendedLifetime(ignored) {}
                }
            },
            error: { failure in
                self.assumeIsolated { actor in error?(actor, failure) }
            },
            completed: {
                self.assumeIsolated { actor in completed?(actor) }
            })
    }
}

/// How many bodies of `QueueLocalActor` accesses run on the calling thread, one inside another (each
/// to another actor, or the process stops): a thread-specific count, since a body runs synchronously on
/// the thread that called it. A global, as a generic type cannot have a static stored property.
let queueLocalActorAccesses = ThreadSpecificSlot()

/// Holds a ``QueueLocalActor``'s value; owned by the actor, then by the block that releases it on the
/// queue. Not `Sendable`: the value is reached only through the actor's isolation.
final class QueueLocalActorStorage<Value> {
    var value: Value

    init(_ value: sending Value) {
        self.value = value
    }
}

/// Whether the calling thread is inside the body of a `withValue(_:)` or `withValueOnQueue(_:)` of any
/// `QueueLocalActor` (see `QueueLocalActor.subscribe(_:next:error:completed:)`): a handler run there would
/// run in the middle of that body, and reaching that actor from it would find its value being changed.
/// A free function: it reads only the thread's count, so the gate captures no actor.
private func threadIsInsideAQueueLocalActorAccess() -> Bool {
    return Int(bitPattern: queueLocalActorAccesses.value) > 0
}
