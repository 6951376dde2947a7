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
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed with \(result)")
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
            _ = pthread_mutex_destroy(mutex)
        }
    }

    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        return try self.withUnsafeMutablePointers { mutex, state in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    func tryWithLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        return try self.withUnsafeMutablePointers { mutex, state in
            guard pthread_mutex_trylock(mutex) == 0 else { return nil }
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }
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
