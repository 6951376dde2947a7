#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The mutexes that guard subscribers: a fixed table of pthread mutexes, allocated once and never freed,
/// which subscribers share by a hash of their address.
///
/// A subscriber with a mutex of its own needs a second heap object (a pthread mutex must not move, and a
/// stored property of a class gives no stable address), and that object was a quarter of the
/// allocations of a short subscription. Sharing is safe because a subscriber holds its mutex only for a
/// few loads and stores of its own state: it never calls out, never releases an object that could
/// deinitialise, and never takes another lock while holding it. So two subscribers on one mutex only
/// wait briefly for each other, and no thread ever holds two of these mutexes.
///
/// In debug builds of the library the mutexes check errors, so a violation of that rule stops with a
/// message instead of deadlocking.
@usableFromInline struct SubscriberLockTable: @unchecked Sendable {
    // Safe: `base` is written once, before the table is published by the `shared` initialiser, and only
    // read afterwards; the mutexes it points to are only touched through pthread calls.
    @usableFromInline let base: UnsafeMutableRawPointer

    /// Number of mutexes; a power of two. (Computed, like `stride`, so that reading it costs no lazy
    /// initialisation check.)
    static var count: Int { 256 }
    /// Bytes between two mutexes: at least a cache line, so that mutexes of unrelated subscribers do not
    /// share one.
    static var stride: Int { (MemoryLayout<pthread_mutex_t>.stride + 63) / 64 * 64 }

    @usableFromInline static let shared = SubscriberLockTable()

    private init() {
        self.base = UnsafeMutableRawPointer.allocate(byteCount: Self.count * Self.stride, alignment: 64)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        for index in 0..<Self.count {
            let mutex = (self.base + index * Self.stride).bindMemory(to: pthread_mutex_t.self, capacity: 1)
            let result = pthread_mutex_init(mutex, &attributes)
            precondition(result == 0, "pthread_mutex_init failed with \(result)")
        }
    }

    /// What a subscriber's `mutex` holds until its initialiser can hash its address (only after every
    /// stored property is set). Never dereferenced: the initialiser overwrites it before it returns.
    @inlinable static var placeholder: UnsafeMutablePointer<pthread_mutex_t> {
        return UnsafeMutablePointer(bitPattern: MemoryLayout<pthread_mutex_t>.alignment)!
    }

    /// The mutex for the object at `object`'s address.
    @usableFromInline static func mutex(for object: ObjectIdentifier) -> UnsafeMutablePointer<pthread_mutex_t> {
        // Heap objects are 16-byte aligned; Fibonacci hashing spreads neighbouring addresses over the table.
        let bits = UInt64(UInt(bitPattern: object)) >> 4
        let index = Int((bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - Self.count.trailingZeroBitCount))
        return (Self.shared.base + index * Self.stride).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    /// Stops with a message when a subscriber mutex cannot be locked or unlocked (in debug builds: when a
    /// thread takes one it already holds).
    @usableFromInline static func failed(_ operation: StaticString, _ result: Int32) -> Never {
        preconditionFailure(
            "SwiftSignalKit: \(operation) of a subscriber mutex failed with \(result)"
                + (result == EDEADLK ? " (the thread already holds it: a subscriber lock was re-entered)" : ""))
    }
}
