import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// ThreadSanitizer's `__tsan_acquire` and `__tsan_release`, when the process runs under it; nil otherwise.
///
/// A subscriber's `Mutex` hands a contended lock to a waiter inside the standard library's
/// Synchronization module (on Linux, in the kernel, through a priority-inheriting futex), which
/// ThreadSanitizer does not instrument: it would report races on the state the lock guards. So a
/// subscriber tells it of each lock and unlock itself, with its own address as the synchronisation
/// object. Looked up once; each subscriber keeps the answer (``Subscriber/underThreadSanitizer``), so
/// without ThreadSanitizer a lock only reads a byte of the subscriber it already reads.
@usableFromInline let threadSanitizerHooks: ThreadSanitizerHooks? = ThreadSanitizerHooks.lookUp()

/// The two ThreadSanitizer entry points a subscriber calls, found in the running process.
@usableFromInline struct ThreadSanitizerHooks: Sendable {
    @usableFromInline let acquire: @convention(c) (UnsafeMutableRawPointer?) -> Void
    @usableFromInline let release: @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// The hooks, if the process's global symbols include them (a ThreadSanitizer build exports them).
    static func lookUp() -> ThreadSanitizerHooks? {
        guard let process = dlopen(nil, RTLD_LAZY),
            let acquire = dlsym(process, "__tsan_acquire"),
            let release = dlsym(process, "__tsan_release")
        else { return nil }
        typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
        return ThreadSanitizerHooks(
            acquire: unsafeBitCast(acquire, to: Hook.self), release: unsafeBitCast(release, to: Hook.self))
    }
}
