#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value of the calling thread, kept in pthread's thread-specific data: other threads, and tasks that
/// the thread starts, do not see it. Each slot is one key, made once and never deleted (the library
/// holds a handful, in `static let`s). `package`: `QueueLocalActor` keeps one too.
@usableFromInline package struct ThreadSpecificSlot: Sendable {
    @usableFromInline let key: pthread_key_t

    @usableFromInline package init() {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        if result != 0 { misuse("pthread_key_create failed with \(result)") }
        self.key = key
    }

    /// The calling thread's value; nil until it is set.
    @inlinable package var value: UnsafeMutableRawPointer? {
        return pthread_getspecific(self.key)
    }

    /// Sets the calling thread's value.
    @inlinable package func set(_ value: UnsafeRawPointer?) {
        pthread_setspecific(self.key, value)
    }

    /// Runs `body` with the calling thread's value set to `value`, then restores the value before.
    @inlinable func withValue<R>(_ value: UnsafeRawPointer?, _ body: () throws -> R) rethrows -> R {
        let previous = pthread_getspecific(self.key)
        pthread_setspecific(self.key, value)
        defer { pthread_setspecific(self.key, previous) }
        return try body()
    }
}
