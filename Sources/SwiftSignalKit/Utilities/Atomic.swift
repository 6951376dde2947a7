/// The error thrown by ``Atomic/tryWith(_:)`` when the value is locked (by another thread, or by the
/// calling thread inside `with`).
public enum AtomicLockError: Error {
    /// Another thread holds the lock.
    case isLocked
}

/// A value guarded by a mutex.
///
/// Kept for source compatibility with the original SwiftSignalKit. In new code, prefer the standard
/// library's `Mutex` (`import Synchronization`), which checks at compile time that the value is only
/// reached with the lock held. In a file that imports Synchronization too, plain `Atomic` is
/// ambiguous (`Synchronization.Atomic` is the standard library's lock-free atomic): write
/// `SwiftSignalKit.Atomic`.
///
/// ```swift
/// let counter = Atomic(value: 0)
/// let updated = counter.modify { $0 + 1 }
/// let current = counter.with { $0 }
/// ```
///
/// > Warning: Unlike the rest of the library, `Atomic` calls your closure *while holding its lock*: that
/// > is its purpose. Keep the closures short, and do not touch the same `Atomic` from inside them: the
/// > lock is not recursive, and a thread that takes it again with `with`, `modify` or `swap` stops
/// > with "Recursive call to lock Mutex" rather than deadlock (`tryWith` throws
/// > ``AtomicLockError/isLocked``).
public final class Atomic<T> {
    private let state: LockedState<T>

    /// Creates an atomic holding `value`.
    ///
    /// - Parameter value: The initial value.
    public init(value: T) {
        self.state = .init(value)
    }

    /// Reads the value under the lock.
    ///
    /// - Parameter f: Receives the value; runs while the lock is held.
    /// - Returns: What `f` returns.
    public func with<R>(_ f: (T) throws -> R) rethrows -> R {
        return try self.state.withLock { try f($0) }
    }

    /// Reads the value if the lock is free.
    ///
    /// - Parameter f: Receives the value; runs while the lock is held.
    /// - Returns: What `f` returns.
    /// - Throws: ``AtomicLockError/isLocked`` when another thread holds the lock.
    public func tryWith<R>(_ f: (T) -> R) throws -> R {
        guard let result = self.state.tryWithLock({ f($0) }) else {
            throw AtomicLockError.isLocked
        }
        return result
    }

    /// Replaces the value with `f(value)`.
    ///
    /// - Parameter f: Computes the new value from the old; runs while the lock is held. The old value is
    ///   released after the lock, so its `deinit` may use this `Atomic`.
    /// - Returns: The new value.
    @discardableResult public func modify(_ f: (T) throws -> T) rethrows -> T {
        let (new, old) = try self.state.withLock { value -> (T, T) in
            var replaced = try f(value)
            Swift.swap(&replaced, &value)
            return (value, replaced)
        }
        withExtendedLifetime(old) {}
        return new
    }

    /// Stores `value` and returns the previous one.
    ///
    /// - Parameter value: The new value.
    /// - Returns: The old value.
    @discardableResult public func swap(_ value: T) -> T {
        return self.state.withLock { current in
            let previous = current
            current = value
            return previous
        }
    }
}

// Safe: the value is only reached through the mutex in `state`, and `T` is Sendable, so values handed in
// and out of the lock may cross threads.
extension Atomic: @unchecked Sendable where T: Sendable {}

/// A mutex, used through ``locked(_:)``.
///
/// Kept for source compatibility with the original SwiftSignalKit. In new code, prefer the standard
/// library's `Mutex` (`import Synchronization`), which holds the state it guards.
///
/// ```swift
/// let lock = Lock()
/// var cache: [String: Int] = [:]
/// lock.locked { cache["a"] = 1 }
/// ```
///
/// > Warning: The closure runs while the lock is held, and the lock is not recursive.
public final class Lock: Sendable {
    // A one-byte state rather than `Void`: with a zero-sized header, ThreadSanitizer attributes the
    // closure's `inout` access to the object's base address, where an unlocked read of the object is.
    private let state = LockedState<UInt8>(0)

    /// Creates an unlocked lock.
    public init() {}

    /// Runs `f` while holding the lock.
    ///
    /// - Parameter f: The critical section.
    /// - Returns: What `f` returns.
    @discardableResult public func locked<R>(_ f: () -> R) -> R {
        return self.state.withLock { _ in f() }
    }

    /// Runs a throwing `f` while holding the lock; the lock is released when `f` throws.
    ///
    /// - Parameter f: The critical section.
    /// - Returns: What `f` returns.
    /// - Throws: What `f` throws.
    @discardableResult public func throwingLocked<R>(_ f: () throws -> R) throws -> R {
        return try self.state.withLock { _ in try f() }
    }
}

/// A weak reference, usable as a value.
public final class Weak<T: AnyObject> {
    private weak var _value: T?

    /// The referenced object, or nil once it has been released.
    public var value: T? {
        return self._value
    }

    /// Creates a weak reference to `value`.
    ///
    /// - Parameter value: The object to reference without retaining it.
    public init(_ value: T) {
        self._value = value
    }
}

// Safe: the only stored property is a `weak let`-like reference that is never reassigned after `init`;
// loading a weak reference is atomic in Swift. `T` must be Sendable for the object to be used elsewhere.
extension Weak: @unchecked Sendable where T: Sendable {}
