import CSwiftSignalKitLockTracing
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The library's one lock primitive, and everything about it: every lock the library takes is the standard
// library's `Mutex`, taken through ``withLock(_:tracedAt:_:)`` below. Two kinds of objects hold one:
//
// - a `Subscriber`, which stores it inline (a 32-bit word on Linux), beside the state it guards;
// - a ``LockStorage``, the heap object behind ``LockedState``, which every other stateful object uses.
//
// What `Mutex` checks, on every lock and unlock, in every build: on Linux it is a priority-inheriting
// futex that records its owner, so a thread that locks a mutex it holds stops with "Recursive call to
// lock Mutex", one that unlocks a mutex it does not hold stops with "Call to unlock Mutex on a thread
// which hasn't acquired the lock", and any other failure of the kernel call stops the process too; on
// Darwin it is an `os_unfair_lock`, which stops the process in both cases as well. There is nothing to
// initialise or destroy, and so no result to ignore. The library never locks recursively and never
// holds a lock while it calls user code, so a stop means a bug in the library, named by the message.

/// Runs `body` while `mutex` is locked: the library's one way to take a lock.
///
/// How it waits. A first try, which touches nothing, asks whether the mutex is free; if it is, the lock
/// is taken with `Mutex.withLock`, whose compare-and-swap is inlined here. If another thread holds the
/// mutex, the thread asks again, first at once and then yielding its core between tries
/// (``LockContention``), and takes the lock once a try finds it free, or after the last try; only then
/// can it sleep in the kernel. It does not go to sleep at once because of how a `Mutex` wakes a sleeper
/// on Linux: its futex is priority-inheriting, and an unlock with a sleeper hands the mutex to that
/// sleeper in the kernel, so no running thread can take it until the sleeper has been scheduled. Once
/// several threads share a lock (a pipe that every thread sends into), each lock then costs a wake-up
/// and a context switch: on a 16-core machine, 16 threads sending into one pipe went from 16.6 million
/// values per second on one thread to 0.1 million, where a `pthread_mutex_t`, which lets a running
/// thread take the lock first, held 2.7 million (Benchmarks/README.md, "Threads"). Trying first keeps
/// the lock with the threads that run, as a pthread mutex does, and the sleep is still there for a
/// holder that keeps it long.
///
/// Why the first try is a separate lock and unlock, and `body` appears once, inside `Mutex.withLock`:
/// every other form measured cost more per lock, because `body` then had to be passed to, or copied
/// into, a second path (callgrind, instructions per operation, Benchmarks/README.md, "Results"). Running
/// `body` in the try and handing it to an out-of-line retry made `ValuePromise.set` to ten subscribers
/// (W6) 1,264 instructions where a plain `Mutex.withLock` takes 862, and `combineLatest` of eight (W4)
/// 636 where it takes 468; with the result returned directly, 988 and 642; with `body` in the try and
/// again in a second `withLock`, 883 and 576, and a closure of `Subscriber` began allocating; with
/// the retry in a loop around one `body`, 2,435 for W6. This form: 872 and 503, the cost of a second
/// compare-and-swap pair.
///
/// - Parameters:
///   - mutex: The lock, stored in `object` (a `Mutex` must not move, so it is always a stored `let`
///     of a class).
///   - object: The address of the object that holds `mutex`, which ThreadSanitizer is told of (see
///     ``LockTracing``). Taken as a raw pointer, which costs nothing to pass.
///   - body: Runs with the lock held; it must not call user code, resume a continuation, dispose, or
///     take another of the library's locks.
@inlinable @inline(__always)
func withLock<Result, Failure: Error>(
    _ mutex: borrowing Mutex<Void>, tracedAt object: UnsafeMutableRawPointer,
    _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
    if !LockContention.isFree(mutex) {
        LockContention.waitForTurn(at: mutex)
    }
    // The tracing is written out here, not called with `object`: a result that passed through such a
    // call could not be the `sending` result `Mutex.withLock` asks for.
    return try mutex.withLock { (_: inout Void) throws(Failure) -> Result in
        let traced = LockTracing.isEnabled
        if traced { LockTracing.locked(object) }
        defer { if traced { LockTracing.unlocking(object) } }
        return try body()
    }
}

/// How a thread that finds a lock held tries again before it sleeps (see ``withLock(_:tracedAt:_:)``).
///
/// The library's critical sections are short (they copy a list, flip a state), so a holder on another
/// core usually lets go within a few tries. After ``triesWithoutYielding`` tries the thread yields its
/// core between tries, which lets a holder that was preempted run again on a machine with more
/// threads than cores; after ``tries`` it takes the lock, sleeping if it must.
@usableFromInline enum LockContention {
    @usableFromInline static var triesWithoutYielding: Int { 16 }
    @usableFromInline static var tries: Int { 64 }

    @usableFromInline static func yieldCore() {
        sched_yield()
    }

    /// Whether `mutex` was free: takes and at once releases it, touching nothing under it.
    @inlinable @inline(__always)
    static func isFree(_ mutex: borrowing Mutex<Void>) -> Bool {
        return mutex.withLockIfAvailable { (_: inout Void) -> Bool in true } != nil
    }

    /// Returns once a try has found `mutex` free, or after ``tries`` tries.
    @usableFromInline @inline(never)
    static func waitForTurn(at mutex: borrowing Mutex<Void>) {
        for attempt in 1...Self.tries {
            if attempt > Self.triesWithoutYielding { Self.yieldCore() }
            if Self.isFree(mutex) { return }
        }
    }
}

/// Runs `body`, the part of a lock that runs with the mutex held, telling ThreadSanitizer of the lock
/// and unlock when it is present: for ``LockStorage/tryWithLock(_:)``, whose result goes through a
/// local (``withLock(_:tracedAt:_:)`` writes the same out, for its `sending` result).
@inlinable @inline(__always)
func whileTraced<Result>(_ object: UnsafeMutableRawPointer, _ body: () -> Result) -> Result {
    let traced = LockTracing.isEnabled
    if traced { LockTracing.locked(object) }
    defer { if traced { LockTracing.unlocking(object) } }
    return body()
}

/// What the library's lock tells ThreadSanitizer, in a build instrumented with it; nothing otherwise.
///
/// Why a lock must tell ThreadSanitizer anything: it understands a `Mutex` only on the uncontended path,
/// whose compare-and-swap is inlined into this module and instrumented with it. A contended lock is
/// handed from the thread that unlocks to the thread that waits inside the standard library's
/// Synchronization module and the kernel (on Linux, a priority-inheriting futex), which it does not
/// see; it would then report races on the state the lock guards. So, under ThreadSanitizer, each lock
/// calls `__tsan_acquire` on the object's address once it holds the mutex, and `__tsan_release` just
/// before it unlocks: the same happens-before edge an instrumented `pthread_mutex_t` gives.
///
/// Why the answer comes from C (the target `CSwiftSignalKitLockTracing`, two functions and a constant):
/// Swift has no compile-time condition for a sanitizer, and a Swift global that could hold the answer is
/// initialised lazily in a debug build, which is what ThreadSanitizer runs; under ThreadSanitizer the
/// Swift runtime never marks a lazy global done (so that the sanitizer sees every read ordered after
/// the initialisation), and each read takes the once's lock, one priority-inheriting futex for the whole
/// process. An earlier version kept the answer in such a global, found with `dlsym` by the first lock,
/// and read it about five times per lock with the mutex held: every lock of every thread queued on that
/// one futex, and a parallel `swift test --sanitize=thread` of the stress tests stalled there (no test
/// progressed for 120 s; 3 runs of 3). The C file is compiled with ThreadSanitizer exactly when the
/// Swift targets are (SwiftPM and Xcode apply the sanitizer to every target), and asks the compiler
/// (`__has_feature(thread_sanitizer)`); its constant is never written, so any thread reads it with one
/// load, and nothing is looked up at run time. With it, the parallel run that stalled no longer does
/// (397 tests passed in 298 s on two cores, 2026-12-01; no sanitizer report in two runs), and
/// `LockedStateTests` checks the constant against the sanitizer found in the process.
///
/// What it costs: nothing in memory (no field in any lock or subscriber; one byte for the process),
/// and, without ThreadSanitizer, that load and a branch per lock; the two calls are made only when the
/// constant says the build is instrumented.
@usableFromInline enum LockTracing {
    /// Whether this build is instrumented with ThreadSanitizer.
    @inlinable static var isEnabled: Bool {
        @inline(__always) get { swiftsignalkit_lock_tracing_enabled != 0 }
    }

    /// The calling thread has just locked the mutex of the object at `object`.
    @inlinable @inline(__always)
    static func locked(_ object: UnsafeMutableRawPointer) {
        swiftsignalkit_lock_acquired(object)
    }

    /// The calling thread is about to unlock the mutex of the object at `object`.
    @inlinable @inline(__always)
    static func unlocking(_ object: UnsafeMutableRawPointer) {
        swiftsignalkit_lock_releasing(object)
    }
}

/// A value guarded by the library's lock, in a heap object of its own.
///
/// `package`: shared with the other modules of this package, not API.
///
/// Access goes only through ``withLock(_:)``; callers must not call user code, `dispose()` or resume
/// continuations inside.
@usableFromInline package struct LockedState<State> {
    @usableFromInline package let storage: LockStorage<State>

    /// Creates a lock guarding `initialState`.
    @usableFromInline package init(_ initialState: State) {
        self.storage = LockStorage(initialState)
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Inlinable (as are the hot paths that call it), so that generic callers in client modules are
    /// specialised instead of running this module's unspecialised code.
    @inlinable @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        return try self.storage.withLock(body)
    }

    /// Runs `body` if the lock can be taken without waiting; returns `nil` otherwise.
    ///
    /// The thread that holds the lock gets `nil` too (the futex's try reports it busy, it does not stop).
    package func tryWithLock<Result>(_ body: (inout State) -> Result) -> Result? {
        return self.storage.tryWithLock(body)
    }
}

// Safe: every access to the state goes through `withLock`/`tryWithLock`, which hold the mutex, and the
// state itself must be Sendable, so values moved in or out of the lock may cross threads.
extension LockedState: @unchecked Sendable where State: Sendable {}

/// The heap object behind ``LockedState``: the mutex, then the state.
///
/// The mutex is the first stored property, 16 bytes into the object, where a subscriber's is too. The
/// room after it (`spacing`) makes every such object at least 56 bytes, so that malloc gives it a block
/// of 64 bytes or more: then the lock words of two objects side by side are at least 64 bytes apart and
/// never share a cache line, whatever the size of the state, and two threads that each use their own
/// object never bounce a line between their cores. It is the room a `pthread_mutex_t` took here before
/// (the same 56 bytes before the state), so no object grew. `LockLayoutTests` checks it.
@usableFromInline package final class LockStorage<State> {
    @usableFromInline let mutex: Mutex<Void>
    /// Unused; see the type's comment.
    let spacing: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// Read and written only while `mutex` is locked. `@exclusivity(unchecked)`: the lock orders every
    /// access, and the dynamic check would cost two runtime calls per access.
    @exclusivity(unchecked) @usableFromInline var state: State

    @usableFromInline init(_ initialState: State) {
        self.mutex = Mutex(())
        self.state = initialState
    }

    @inlinable @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        return try SwiftSignalKit.withLock(self.mutex, tracedAt: Unmanaged.passUnretained(self).toOpaque()) {
            () throws(Failure) -> Result in
            try body(&self.state)
        }
    }

    func tryWithLock<Result>(_ body: (inout State) -> Result) -> Result? {
        let object = Unmanaged.passUnretained(self).toOpaque()
        var result: Result? = nil
        _ = self.mutex.withLockIfAvailable { _ in
            result = whileTraced(object) { body(&self.state) }
        }
        return result
    }
}
