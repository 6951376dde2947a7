// The lock of the hand-written baselines (the workloads' "limit" and the scaling suite's hand-written
// pipelines): a pthread mutex at a stable heap address of its own.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread mutex at a stable heap address.
public final class BaselineMutex: @unchecked Sendable {
    // Safe: the mutex is only touched through pthread calls on its fixed address.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates an unlocked mutex.
    public init() {
        self.mutex = .allocate(capacity: 1)
        pthread_mutex_init(self.mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(self.mutex)
        self.mutex.deallocate()
    }

    /// Locks the mutex, waiting while another thread holds it.
    @inlinable @inline(__always)
    public func lock() { pthread_mutex_lock(self.mutex) }

    /// Unlocks the mutex, which the calling thread holds.
    @inlinable @inline(__always)
    public func unlock() { pthread_mutex_unlock(self.mutex) }

    /// Runs `body` with the mutex locked.
    @inlinable @inline(__always)
    public func locked<R>(_ body: () -> R) -> R {
        self.lock()
        defer { self.unlock() }
        return body()
    }
}
