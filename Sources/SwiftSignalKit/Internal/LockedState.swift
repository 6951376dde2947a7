#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a pthread mutex that lives at a stable address.
///
/// `package`: shared with the other modules of this package, not API.
///
/// The mutex lives in the same heap object as the value (``LockStorage``), so it never moves and is never
/// passed as `&storedProperty` (which Swift may copy to a temporary). Access goes only
/// through ``withLock(_:)``; callers must not call user code, `dispose()` or resume continuations inside.
@usableFromInline package struct LockedState<State> {
    @usableFromInline package let storage: LockStorage<State>

    /// Creates a lock guarding `initialState`.
    @usableFromInline package init(_ initialState: State) {
        self.storage = LockStorage.make(initialState)
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Inlinable (as are the hot paths that call it), so that generic callers in client modules are
    /// specialised instead of running this module's unspecialised code.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        return try self.storage.withLock(body)
    }

    /// Runs `body` if the lock can be taken without waiting; returns `nil` otherwise.
    package func tryWithLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        return try self.storage.tryWithLock(body)
    }
}

// Safe: every access to the state goes through `withLock`/`tryWithLock`, which hold the mutex, and the
// state itself must be Sendable, so values moved in or out of the lock may cross threads.
extension LockedState: @unchecked Sendable where State: Sendable {}

/// The heap object behind ``LockedState``: the mutex as header, the state as the single element.
///
/// The mutex comes first, 16 bytes into the object, and the state after it, so that the words a lock
/// and an unlock touch (on glibc the first 20 bytes of the mutex: the lock word, the owner, the user
/// count and the kind) are followed by the state and the end of the object. Then, with malloc's 16-byte
/// alignment and its 8-byte header, they never share a 64-byte cache line with the lock of a neighbouring
/// object, whatever the size of the state: another ``LockStorage`` or a ``Subscriber`` (whose mutex is 16
/// bytes in too). With the state first, a state of 16, 32 or 48 bytes put the mutex's last touched word in
/// the line of the next object's lock. `LockLayoutTests` checks it.
@usableFromInline package final class LockStorage<State>: ManagedBuffer<pthread_mutex_t, State> {
    @inlinable
    static func make(_ initialState: State) -> LockStorage<State> {
        // A zeroed mutex, initialised in place below: `pthread_mutex_init` needs its final address.
        let buffer = self.create(minimumCapacity: 1) { _ in pthread_mutex_t() }
        buffer.withUnsafeMutablePointers { mutex, state in
            initialiseMutex(mutex)
            state.initialize(to: initialState)
        }
        // `create` on a final subclass allocates an instance of that subclass.
        return unsafeDowncast(buffer, to: LockStorage<State>.self)
    }

    deinit {
        // A buffer does not destroy its elements: the state is released here (after the last access,
        // so no lock is held while a value's `deinit` runs).
        self.withUnsafeMutablePointers { mutex, state in
            _ = state.deinitialize(count: 1)
            let result = pthread_mutex_destroy(mutex)
            precondition(result == 0, "LockedState: pthread_mutex_destroy failed with \(result) (a lock still held?)")
        }
    }

    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        return try self.withUnsafeMutablePointers { mutex, state in
            lockMutex(mutex)
            defer { unlockMutex(mutex) }
            return try body(&state.pointee)
        }
    }

    func tryWithLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        return try self.withUnsafeMutablePointers { mutex, state in
            let result = pthread_mutex_trylock(mutex)
            if result == EBUSY { return nil }
            precondition(result == 0, "LockedState: pthread_mutex_trylock failed with \(result)")
            defer { unlockMutex(mutex) }
            return try body(&state.pointee)
        }
    }
}

/// Initialises the mutex at `mutex`: error-checking in debug builds, so that a thread that takes a lock
/// it holds stops with a message instead of deadlocking, and one that unlocks a lock it does not hold
/// stops too; the default kind in release builds, which lets a releasing thread take the lock again at
/// once.
@usableFromInline func initialiseMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    #if DEBUG
        var attributes = pthread_mutexattr_t()
        var result = pthread_mutexattr_init(&attributes)
        precondition(result == 0, "LockedState: pthread_mutexattr_init failed with \(result)")
        defer { pthread_mutexattr_destroy(&attributes) }
        result = pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        precondition(result == 0, "LockedState: pthread_mutexattr_settype failed with \(result)")
        result = pthread_mutex_init(mutex, &attributes)
    #else
        let result = pthread_mutex_init(mutex, nil)
    #endif
    precondition(result == 0, "LockedState: pthread_mutex_init failed with \(result)")
}

/// Locks `mutex`; a failure (in debug builds, a thread taking a lock it already holds) stops the process
/// with a message rather than deadlocking. The check is one compare on the uncontended path.
@inlinable @inline(__always)
func lockMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    let result = pthread_mutex_lock(mutex)
    if result != 0 { mutexFailed("pthread_mutex_lock", result) }
}

/// Unlocks `mutex`, which the calling thread holds; a failure stops the process with a message.
@inlinable @inline(__always)
func unlockMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    let result = pthread_mutex_unlock(mutex)
    if result != 0 { mutexFailed("pthread_mutex_unlock", result) }
}

/// Stops the process for a failed lock operation, out of line so that the callers stay small.
@usableFromInline @inline(never)
func mutexFailed(_ operation: StaticString, _ result: Int32) -> Never {
    let meaning: String
    switch result {
    case EDEADLK: meaning = " (EDEADLK: this thread already holds the lock)"
    case EPERM: meaning = " (EPERM: this thread does not hold the lock)"
    default: meaning = ""
    }
    fatalError("SwiftSignalKit: \(operation) failed with \(result)\(meaning)")
}

/// Moves a value that is not `Sendable` across an isolation boundary.
///
/// Used only where the library can show that the value is touched by one thread at a time (for example
/// objects that are merely kept alive and released, never read). Each use site says why it is safe.
@usableFromInline struct UnsafeTransfer<Value>: @unchecked Sendable {
    // Safe by contract: see the type's comment; every use documents its own confinement.
    @usableFromInline var value: Value
    @inlinable init(_ value: Value) { self.value = value }
}
