import Dispatch
import Foundation
import Synchronization

/// A dispatch queue that knows when code is running on it.
///
/// `Queue` wraps a `DispatchQueue` and adds ``isCurrent()``, which makes ``sync(_:)`` run inline when
/// already on the queue, so that `sync` from inside the queue does not deadlock, and makes ``async(_:)``
/// run inline on the serial queues this type makes and on ``mainQueue()``, as the original library did,
/// so that `async` from inside keeps the work on the current stack.
///
/// ```swift
/// let queue = Queue(name: "db")
/// queue.async {
///     queue.sync { print("inline, no deadlock") }
/// }
/// ```
///
/// Every kind of queue reports ``isCurrent()`` correctly: queues made by ``init(name:qos:)``, queues
/// wrapped by ``init(queue:)`` (serial or concurrent), the main queue, and the global concurrent queues
/// (for work submitted through this wrapper).
///
/// ### Nested sync
///
/// Code that runs on a serial queue, or inside its ``sync(_:)``, owns that queue until it returns; while
/// it waits in a nested ``sync(_:)`` on another queue, no other work of the first queue can run. So the
/// nested block counts as running on every queue its caller owns: ``isCurrent()`` is true for them, and
/// ``sync(_:)`` to them runs inline, at any depth, as does ``async(_:)`` to those on which it runs inline
/// at all (queues made by ``init(name:qos:)``, and ``mainQueue()``).
///
/// ```swift
/// database.sync {
///     cache.sync {
///         database.sync { print("inline: database is owned by the caller") }
///     }
/// }
/// ```
///
/// Without this, libdispatch traps ("dispatch_sync called on queue already owned by current thread").
public final class Queue: Sendable {
    private let nativeQueue: DispatchQueue
    private let identity: Identity
    /// Whether ``async(_:)`` runs inline when the queue is current: only for a queue known to be serial
    /// (see ``async(_:)``). `@usableFromInline` for ``runsWorkInline``, which `deliverOn` asks per event.
    @usableFromInline let runsAsyncInline: Bool
    /// The serial executor that actors on this queue share, made by the first of them
    /// (``executionContext(orMake:)``). Held here, so that it lives as long as the queue, and holding the
    /// queue unowned, so that neither keeps the other alive; nil (one word, no allocation) until an actor
    /// is put on the queue.
    private let sharedExecutionContext = AtomicLazyReference<AnyObject & Sendable>()

    /// How ``isCurrent()`` recognises the queue.
    private enum Identity: Sendable {
        /// A queue carrying a marker in its dispatch-specific storage.
        case marker(QueueMarker)
        /// The main queue: its marker, or the main thread. On Linux, after `dispatchMain()` the main queue
        /// is drained by a thread that is not the main thread, so the thread check alone is not enough.
        case main(QueueMarker)
        /// A global concurrent queue: work submitted through any wrapper of it is marked per thread, with
        /// the marker of its label (so that two wrappers of one global queue agree).
        case global(QueueMarker)
    }

    /// Whether this is a global concurrent queue (``concurrentDefaultQueue()``, a wrapped
    /// `DispatchQueue.global`): the one kind of concurrent queue that Dispatch lets the library tell.
    /// By the label of each global queue, not by the prefix ``isCurrent()`` marks by: a serial queue of
    /// the user's may be labelled `com.apple.root.something`. `package`: the queue executor asks it too.
    package var isGlobalConcurrentQueue: Bool {
        guard case .global = self.identity else { return false }
        return globalQueueLabels.contains(self.nativeQueue.label)
    }

    /// The underlying dispatch queue.
    public var queue: DispatchQueue {
        return self.nativeQueue
    }

    /// The queue of the main thread.
    ///
    /// > Note: On Linux the main queue runs only if the process calls `dispatchMain()` (or runs a
    /// > `RunLoop` on the main thread). A server that never does must not deliver work to it.
    ///
    /// - Returns: The shared main-queue wrapper.
    public class func mainQueue() -> Queue {
        return globalMainQueue
    }

    /// The global concurrent queue of default quality of service.
    ///
    /// - Returns: The shared wrapper.
    public class func concurrentDefaultQueue() -> Queue {
        return globalDefaultQueue
    }

    /// The global concurrent queue of background quality of service.
    ///
    /// - Returns: The shared wrapper.
    public class func concurrentBackgroundQueue() -> Queue {
        return globalBackgroundQueue
    }

    /// Wraps an existing dispatch queue.
    ///
    /// A marker is stored in the queue's dispatch-specific storage under a key private to this library,
    /// so that ``isCurrent()`` works; wrapping the same queue twice yields wrappers that agree.
    ///
    /// - Parameter queue: The queue to wrap.
    public init(queue: DispatchQueue) {
        self.nativeQueue = queue
        if queue === DispatchQueue.main || queue.label == DispatchQueue.main.label {
            self.identity = .main(QueueMarker.marker(for: queue))
            // As every wrapped queue: `async` enqueues, as the original library did for a wrapped main
            // queue (only ``mainQueue()`` ran it inline there). Code that defers work to the main queue's
            // next turn with it keeps doing so.
            self.runsAsyncInline = false
        } else if globalQueueLabels.contains(queue.label) {
            // Global root queues do not support dispatch-specific storage. By the exact labels of the
            // global queues, not their prefix: a serial queue of the user's labelled
            // `com.apple.root.something` is an ordinary queue, with a marker of its own.
            self.identity = .global(QueueMarker.marker(forGlobalQueueLabeled: queue.label))
            self.runsAsyncInline = false
        } else {
            self.identity = .marker(QueueMarker.marker(for: queue))
            // Dispatch cannot say whether a queue is concurrent: one made elsewhere may be.
            self.runsAsyncInline = false
        }
    }

    /// The wrapper ``mainQueue()`` returns: on the main queue, ``async(_:)`` runs inline.
    fileprivate init(mainQueue: DispatchQueue) {
        self.nativeQueue = mainQueue
        self.identity = .main(QueueMarker.marker(for: mainQueue))
        self.runsAsyncInline = true
    }

    /// Creates a new serial queue.
    ///
    /// - Parameters:
    ///   - name: The queue's label, for debugging.
    ///   - qos: The quality of service of its work.
    public init(name: String? = nil, qos: DispatchQoS = .default) {
        let queue = DispatchQueue(label: name ?? "SwiftSignalKit.Queue", qos: qos)
        self.nativeQueue = queue
        self.identity = .marker(QueueMarker.marker(for: queue))
        self.runsAsyncInline = true
    }

    /// The object that stands for this queue as the serial executor of actors: the one the first call
    /// made with `make`, for as long as the queue lives. Every later call gets that same object, so the
    /// actors of one queue share one executor identity, and the runtime, which compares executors by
    /// identity alone when one actor calls another, runs the call inline instead of hopping.
    ///
    /// `package`: for the concurrency module's `QueueExecutor`; `make` is its code, and two threads that
    /// race here may both call it, one object winning. The object must not hold the queue strongly.
    package func executionContext<Context: AnyObject & Sendable>(orMake make: () -> Context) -> Context {
        if let existing = self.sharedExecutionContext.load() {
            return unsafeDowncast(existing, to: Context.self)
        }
        return unsafeDowncast(self.sharedExecutionContext.storeIfNil(make()), to: Context.self)
    }

    /// Whether the calling code is running on this queue.
    ///
    /// True inside work the queue runs, and inside ``sync(_:)`` blocks on other queues entered from such
    /// work (at any depth), since the queue is owned by the waiting caller. For the main queue, also on
    /// the main thread; for a global concurrent queue, inside work submitted through this wrapper.
    ///
    /// - Returns: Whether work submitted with ``sync(_:)`` would run inline; ``async(_:)`` runs inline
    ///   only where this is true and the queue is one made by ``init(name:qos:)``, or ``mainQueue()``.
    public func isCurrent() -> Bool {
        switch self.identity {
        case .marker(let marker):
            return DispatchQueue.getSpecific(key: queueMarkerKey) === marker || OwnedQueues.contains(marker)
        case .main(let marker):
            return DispatchQueue.getSpecific(key: queueMarkerKey) === marker || Thread.isMainThread || OwnedQueues.contains(marker)
        case .global(let marker):
            return CurrentGlobalQueue.contains(marker)
        }
    }

    /// Runs `f` on the queue: inline when already on a queue made by ``init(name:qos:)`` or on
    /// ``mainQueue()``, otherwise asynchronously.
    ///
    /// Inline (when ``isCurrent()``) on the queues this type makes with ``init(name:qos:)``, which are
    /// serial, and on ``mainQueue()``, as in the original library. On the global concurrent queues and on
    /// queues wrapped with ``init(queue:)`` (the main queue wrapped so included), which may be concurrent
    /// (Dispatch cannot say), `f` is always
    /// enqueued, as the original library did there: inline, work meant to run beside the caller would
    /// run after it instead, and work that waits for what the caller does after `async` would deadlock.
    /// (``sync(_:)`` runs inline on every kind of queue: its caller waits either way.)
    ///
    /// - Parameter f: The work.
    @preconcurrency public func async(_ f: @escaping @Sendable () -> Void) {
        if self.runsWorkInline {
            f()
        } else {
            if TimelineExecutor.refusesDeparture("Queue.async on \(self.nativeQueue.label)") { return }
            self.nativeQueue.async(execute: self.marked(f))
        }
    }

    /// Whether ``async(_:)`` would run work given now inline: the queue is current (``isCurrent()``) and
    /// is one of those on which `async` runs inline (a queue made by ``init(name:qos:)``, or
    /// ``mainQueue()``). `deliverOn(_:)` and `runOn(_:)` decide the same way, so that on a global queue
    /// or a wrapped one they enqueue, as in the original library. `package`: not API.
    @inlinable package var runsWorkInline: Bool {
        return self.runsAsyncInline && self.isCurrent()
    }

    /// Runs `f` on the queue and waits for it: inline when already on it (see ``isCurrent()``).
    ///
    /// Inline running makes `sync` from the queue's own work safe, and also nested `sync` through other
    /// queues: `a.sync { b.sync { a.sync { } } }` runs the innermost block inline, and so does
    /// `b.async { a.sync { b.sync { } } }`. Inside the nested blocks, ``isCurrent()`` is true for every
    /// queue the waiting caller owns, so `QueueLocalObject` and actors on those queues
    /// (`assumeIsolated`) work there too.
    ///
    /// - Parameter f: The work. It may run on a thread other than the caller's (the main queue's work
    ///   runs where the main queue is drained); the caller waits for it either way.
    ///
    /// > Warning: `sync` still deadlocks where the library cannot see who owns a queue:
    /// > - Two threads that wait for each other's queues: work on `a` calls `b.sync` while work on `b`
    /// >   calls `a.sync`. Neither caller owns the other's queue, so both wait forever.
    /// > - A raw `DispatchQueue.sync` in between: in `a.queue.sync { b.queue.sync { a.sync { } } }`
    /// >   the library does not know that the caller owns `a`, and libdispatch traps with
    /// >   "dispatch_sync called on queue already owned by current thread". Use `Queue.sync` for every
    /// >   level.
    /// > - Dispatch queues that target one another (`DispatchQueue(label:target:)`): work of a queue that
    /// >   targets `a` owns `a` too, but ``isCurrent()`` recognises only the innermost wrapped queue, so
    /// >   `a.sync` from there enters Dispatch and libdispatch traps as above.
    /// > - The main queue when nothing drains it: on Linux, a process that never calls `dispatchMain()`
    /// >   (or runs the main `RunLoop`) never runs main-queue work, so `Queue.mainQueue().sync` from
    /// >   another thread waits forever.
    /// >
    /// > None of these can be told apart from an ordinary wait before entering Dispatch, so `sync` does
    /// > not check for them.
    public func sync(_ f: () -> Void) {
        if self.isCurrent() {
            f()
            return
        }
        let inherited = OwnedQueues.current
        if let marker = DispatchQueue.getSpecific(key: queueMarkerKey) {
            // The caller runs on the queue of `marker` (or one targeting it): it owns it while it waits.
            withUnsafePointer(to: OwnedQueues.Node(marker: ObjectIdentifier(marker), next: inherited)) { owned in
                self.dispatchSync(owning: owned, f)
            }
        } else {
            self.dispatchSync(owning: inherited, f)
        }
    }

    /// Runs `f` with `DispatchQueue.sync`, with `owned` installed as the queues the block owns, on
    /// whichever thread runs it.
    private func dispatchSync(owning owned: UnsafePointer<OwnedQueues.Node>?, _ f: () -> Void) {
        if case .global(let marker) = self.identity {
            self.nativeQueue.sync {
                OwnedQueues.run(owning: owned) {
                    CurrentGlobalQueue.run(marker, f)
                }
            }
        } else {
            self.nativeQueue.sync {
                OwnedQueues.run(owning: owned, f)
            }
        }
    }

    /// Enqueues `f` asynchronously, even when already on the queue.
    ///
    /// - Parameter f: The work.
    @preconcurrency public func justDispatch(_ f: @escaping @Sendable () -> Void) {
        if TimelineExecutor.refusesDeparture("Queue.justDispatch on \(self.nativeQueue.label)") { return }
        self.nativeQueue.async(execute: self.marked(f))
    }

    /// Enqueues `f` asynchronously with the given quality of service, even when already on the queue.
    ///
    /// - Parameters:
    ///   - qos: The quality of service for this work item.
    ///   - f: The work.
    @preconcurrency public func justDispatchWithQoS(qos: DispatchQoS, _ f: @escaping @Sendable () -> Void) {
        if TimelineExecutor.refusesDeparture("Queue.justDispatchWithQoS on \(self.nativeQueue.label)") { return }
        self.nativeQueue.async(group: nil, qos: qos, flags: [.enforceQoS], execute: self.marked(f))
    }

    /// Runs `f` on the queue after `delay` seconds.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer `after(_:_:)`
    /// with a `Duration`.
    ///
    /// `delay` is checked first: 0 or a negative value runs `f` as soon as the queue gets to it (the
    /// deadline has passed), `+infinity` never runs it (`f` is released at once), a value above 100 years
    /// waits 100 years, and NaN is a precondition failure whose message names `delay` and the value.
    ///
    /// - Parameters:
    ///   - delay: Seconds to wait; the monotonic clock is used.
    ///   - f: The work.
    @preconcurrency public func after(_ delay: Double, _ f: @escaping @Sendable () -> Void) {
        let wait = TimeIntervalValidation.wait(delay, as: .delay, api: "Queue.after(_:_:)", argument: "delay")
        guard case .seconds(let seconds) = wait else { return }
        if TimelineExecutor.refusesDeparture("Queue.after(\(delay)) on \(self.nativeQueue.label)") { return }
        self.nativeQueue.asyncAfter(deadline: DispatchTime.now() + seconds, execute: self.marked(f))
    }

    /// Wraps work for a global queue so ``isCurrent()`` can recognise it; other queues need no wrapping.
    func marked(_ f: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        guard case .global(let marker) = self.identity else { return f }
        return { CurrentGlobalQueue.run(marker, f) }
    }
}

/// The labels of the global concurrent queues, of every quality of service (see
/// ``Queue/isGlobalConcurrentQueue``).
private let globalQueueLabels: Set<String> = Set(
    [DispatchQoS.QoSClass.background, .utility, .default, .userInitiated, .userInteractive, .unspecified].map {
        DispatchQueue.global(qos: $0).label
    })

private let globalMainQueue = Queue(mainQueue: DispatchQueue.main)
private let globalDefaultQueue = Queue(queue: DispatchQueue.global(qos: .default))
private let globalBackgroundQueue = Queue(queue: DispatchQueue.global(qos: .background))

/// The object a queue carries in its dispatch-specific storage.
final class QueueMarker: Sendable {
    private static let registration = Lock()

    /// The queue's marker, made and stored on first use.
    static func marker(for queue: DispatchQueue) -> QueueMarker {
        return self.registration.locked {
            if let existing = queue.getSpecific(key: queueMarkerKey) {
                return existing
            }
            let marker = QueueMarker()
            queue.setSpecific(key: queueMarkerKey, value: marker)
            return marker
        }
    }

    /// The markers of the global queues, by label: global queues have no dispatch-specific storage, and
    /// each `DispatchQueue.global(qos:)` call may return a new object for the same queue.
    private static let globalMarkers = LockedState<[String: QueueMarker]>([:])

    /// The marker of the global queue labelled `label`, made on first use.
    static func marker(forGlobalQueueLabeled label: String) -> QueueMarker {
        return self.globalMarkers.withLock { markers in
            if let existing = markers[label] { return existing }
            let marker = QueueMarker()
            markers[label] = marker
            return marker
        }
    }
}

private let queueMarkerKey = DispatchSpecificKey<QueueMarker>()

/// The global-queue wrappers whose work the current thread is running, innermost last.
enum CurrentGlobalQueue {
    private static let slot = ThreadSpecificSlot()

    static func run(_ marker: QueueMarker, _ f: () -> Void) {
        self.slot.withValue(Unmanaged.passUnretained(marker).toOpaque(), f)
    }

    static func contains(_ marker: QueueMarker) -> Bool {
        return self.slot.value == Unmanaged.passUnretained(marker).toOpaque()
    }
}

/// The queues that the calling context owns without running directly on them: those of the callers
/// waiting in ``Queue/sync(_:)`` around the current block.
///
/// A thread-local list, installed by ``Queue/sync(_:)`` for the duration of the block it dispatches and
/// restored afterwards. The nodes live on the stacks of the waiting callers, which stay blocked (so the
/// nodes stay valid) for as long as the list is installed.
enum OwnedQueues {
    /// One owned queue, identified by its marker, and the rest of the list.
    struct Node {
        let marker: ObjectIdentifier
        let next: UnsafePointer<Node>?
    }

    private static let slot = ThreadSpecificSlot()

    /// The list installed on this thread, if any.
    static var current: UnsafePointer<Node>? {
        guard let raw = self.slot.value else { return nil }
        return UnsafePointer(raw.assumingMemoryBound(to: Node.self))
    }

    /// Runs `f` with `owned` installed on this thread, then restores what was installed before.
    static func run(owning owned: UnsafePointer<Node>?, _ f: () -> Void) {
        self.slot.withValue(owned.map { UnsafeRawPointer($0) }, f)
    }

    /// Whether the queue of `marker` is in the list installed on this thread.
    static func contains(_ marker: QueueMarker) -> Bool {
        let identifier = ObjectIdentifier(marker)
        var node = self.current
        while let current = node {
            if current.pointee.marker == identifier { return true }
            node = current.pointee.next
        }
        return false
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

extension Queue {
    /// Runs `f` on the queue after `delay`: the `Duration` form of `after(_:_:)`.
    ///
    /// ```swift
    /// let queue = Queue(name: "batches")
    /// queue.after(.milliseconds(250)) { flush() }
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long to wait; zero or negative runs `f` as soon as the queue gets to it.
    ///   - f: The work.
    @preconcurrency public func after(_ delay: Duration, _ f: @escaping @Sendable () -> Void) {
        self.after(delay.secondsForSignals, f)
    }
}
