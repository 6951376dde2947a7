/// An object that lives on a ``Queue`` and is only touched there.
///
/// The object is created on the queue by `generate`, every access runs on the queue, and it is released
/// on the queue when the `QueueLocalObject` is released. This confines non-thread-safe state to one
/// serial queue while the wrapper itself is passed around freely.
///
/// ```swift
/// final class Context { var count = 0 }
/// let context = QueueLocalObject(queue: Queue(), generate: { Context() })
/// context.with { $0.count += 1 }
/// let count = context.syncWith { $0.count }
/// ```
///
/// > Note: The queue must be serial; on a concurrent queue the object would be touched from several
/// > threads at once.
public final class QueueLocalObject<T: AnyObject> {
    /// The queue the object lives on.
    public let queue: Queue
    private let box = QueueLocalBox<T>()

    /// Creates the object on `queue` (asynchronously, or inline when already on it).
    ///
    /// - Parameters:
    ///   - queue: A serial queue.
    ///   - generate: Makes the object; runs on `queue`.
    @preconcurrency public init(queue: Queue, generate: @escaping @Sendable () -> T) {
        self.queue = queue
        let box = self.box
        queue.async {
            box.value = generate()
        }
    }

    deinit {
        let box = self.box
        self.queue.async {
            // Released here, on the queue.
            box.value = nil
        }
    }

    /// Runs `f` with the object on the queue, asynchronously (inline when already on the queue).
    ///
    /// - Parameter f: Receives the object; runs on the queue.
    @preconcurrency public func with(_ f: @escaping @Sendable (T) -> Void) {
        let box = self.box
        self.queue.async {
            if let value = box.value {
                f(value)
            }
        }
    }

    /// Runs `f` with the object on the queue and waits for its result.
    ///
    /// - Parameter f: Receives the object; runs on the queue.
    /// - Returns: What `f` returns, or nil if the object is gone.
    public func syncWith<R>(_ f: (T) -> R) -> R? {
        var result: R?
        let box = self.box
        self.queue.sync {
            if let value = box.value {
                result = f(value)
            }
        }
        return result
    }

    /// A signal whose subscription runs `f` with the object on the queue.
    ///
    /// - Parameter f: Receives the object and the subscriber; runs on the queue.
    /// - Returns: A signal that subscribes on the queue (see ``runOn(_:)-(Queue)``).
    @preconcurrency public func signalWith<R, E>(_ f: @escaping @Sendable (T, Subscriber<R, E>) -> Disposable) -> Signal<R, E> {
        let box = self.box
        return Signal { subscriber in
            if let value = box.value {
                return f(value, subscriber)
            }
            return EmptyDisposable
        } |> runOn(self.queue)
    }
}

// Safe: the only mutable state is the object in `box`, which is created, used and released only inside
// work submitted to `queue`, a serial queue, so it is never touched by two threads at once.
extension QueueLocalObject: @unchecked Sendable {}

/// Holds the object; read and written only on the owning queue.
final class QueueLocalBox<T: AnyObject>: @unchecked Sendable {
    // Safe: see `QueueLocalObject`; `value` is only accessed on the owning serial queue.
    var value: T?
}
