import Dispatch
import Foundation

/// A dispatch queue that knows when code is running on it.
///
/// `Queue` wraps a `DispatchQueue` and adds ``isCurrent()``, which makes ``async(_:)`` and ``sync(_:)``
/// run inline when already on the queue: `sync` from inside the queue cannot deadlock, and `async` from
/// inside keeps the work on the current stack.
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
public final class Queue: Sendable {
    private let nativeQueue: DispatchQueue
    private let identity: Identity

    /// How ``isCurrent()`` recognises the queue.
    private enum Identity: Sendable {
        /// A queue carrying a marker in its dispatch-specific storage.
        case marker(QueueMarker)
        /// The main queue: its marker, or the main thread. On Linux, after `dispatchMain()` the main queue
        /// is drained by a thread that is not the main thread, so the thread check alone is not enough.
        case main(QueueMarker)
        /// A global concurrent queue: work submitted through this wrapper is marked per thread.
        case global
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
        } else if queue.label.hasPrefix("com.apple.root.") {
            // Global root queues do not support dispatch-specific storage.
            self.identity = .global
        } else {
            self.identity = .marker(QueueMarker.marker(for: queue))
        }
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
    }

    /// Whether the calling code is running on this queue.
    ///
    /// - Returns: true on this queue (for the main queue: in work it runs, or on the main thread).
    public func isCurrent() -> Bool {
        switch self.identity {
        case .marker(let marker):
            return DispatchQueue.getSpecific(key: queueMarkerKey) === marker
        case .main(let marker):
            return DispatchQueue.getSpecific(key: queueMarkerKey) === marker || Thread.isMainThread
        case .global:
            return CurrentGlobalQueue.contains(self)
        }
    }

    /// Runs `f` on the queue: inline when already on it, otherwise asynchronously.
    ///
    /// - Parameter f: The work.
    @preconcurrency public func async(_ f: @escaping @Sendable () -> Void) {
        if self.isCurrent() {
            f()
        } else {
            self.nativeQueue.async(execute: self.marked(f))
        }
    }

    /// Runs `f` on the queue and waits for it: inline when already on it, so it never deadlocks on itself.
    ///
    /// - Parameter f: The work.
    public func sync(_ f: () -> Void) {
        if self.isCurrent() {
            f()
        } else if case .global = self.identity {
            self.nativeQueue.sync {
                CurrentGlobalQueue.run(self, f)
            }
        } else {
            self.nativeQueue.sync(execute: f)
        }
    }

    /// Enqueues `f` asynchronously, even when already on the queue.
    ///
    /// - Parameter f: The work.
    @preconcurrency public func justDispatch(_ f: @escaping @Sendable () -> Void) {
        self.nativeQueue.async(execute: self.marked(f))
    }

    /// Enqueues `f` asynchronously with the given quality of service, even when already on the queue.
    ///
    /// - Parameters:
    ///   - qos: The quality of service for this work item.
    ///   - f: The work.
    @preconcurrency public func justDispatchWithQoS(qos: DispatchQoS, _ f: @escaping @Sendable () -> Void) {
        self.nativeQueue.async(group: nil, qos: qos, flags: [.enforceQoS], execute: self.marked(f))
    }

    /// Runs `f` on the queue after `delay` seconds.
    ///
    /// - Parameters:
    ///   - delay: Seconds to wait; the monotonic clock is used.
    ///   - f: The work.
    @preconcurrency public func after(_ delay: Double, _ f: @escaping @Sendable () -> Void) {
        self.nativeQueue.asyncAfter(deadline: DispatchTime.now() + delay, execute: self.marked(f))
    }

    /// Wraps work for a global queue so ``isCurrent()`` can recognise it; other queues need no wrapping.
    private func marked(_ f: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        guard case .global = self.identity else { return f }
        return { CurrentGlobalQueue.run(self, f) }
    }
}

private let globalMainQueue = Queue(queue: DispatchQueue.main)
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
}

private let queueMarkerKey = DispatchSpecificKey<QueueMarker>()

/// The global-queue wrappers whose work the current thread is running, innermost last.
enum CurrentGlobalQueue {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed with \(result)")
        return key
    }()

    static func run(_ queue: Queue, _ f: () -> Void) {
        let previous = pthread_getspecific(self.key)
        pthread_setspecific(self.key, Unmanaged.passUnretained(queue).toOpaque())
        defer { pthread_setspecific(self.key, previous) }
        f()
    }

    static func contains(_ queue: Queue) -> Bool {
        return pthread_getspecific(self.key) == Unmanaged.passUnretained(queue).toOpaque()
    }
}
