import Testing

@testable import SwiftSignalKit

/// The library's lock checks what it does: misuse stops with a message naming it instead of
/// deadlocking, in every build.
@Suite struct LockedStateTests {
    @Test func locksAndUnlocksAroundTheBody() {
        let state = LockedState(0)
        state.withLock { $0 += 1 }
        #expect(state.withLock { $0 } == 1)
        #expect(state.tryWithLock { $0 } == 1)
    }

    #if os(Linux)
        /// Taking a lock that the thread already holds stops with a message (it would deadlock in silence
        /// with a default pthread mutex), in release builds too.
        @Test func takingALockTwiceOnOneThreadStopsWithAMessage() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let state = LockedState(0)
                state.withLock { _ in state.withLock { _ in } }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("Recursive call to lock Mutex"))
        }

        /// So does a subscriber's lock.
        @Test func takingASubscribersLockTwiceStopsWithAMessage() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let subscriber = Subscriber<Int, NoError>(next: { _ in })
                subscriber.withState { _ in subscriber.withState { _ in } }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("Recursive call to lock Mutex"))
        }
    #endif

    /// The lock tells ThreadSanitizer of each lock and unlock exactly when the process runs under it: the
    /// constant behind `LockTracing`, compiled in C, is compiled with the sanitizer when the tests are.
    /// CI's ThreadSanitizer stage runs this suite, so both answers are checked.
    @Test func tellsThreadSanitizerOfLocksExactlyWhenItRuns() {
        #expect(LockTracing.isEnabled == isRunningUnderThreadSanitizer)
    }

    /// A lock whose state was left locked by nothing: the state is released when the lock goes, after
    /// its last access.
    @Test func releasesTheStateWithTheLock() {
        final class Tracked: Sendable {
            let released: Flag
            init(_ released: Flag) { self.released = released }
            deinit { self.released.set() }
        }
        let released = Flag()
        do {
            let state = LockedState(Tracked(released))
            state.withLock { _ in }
        }
        #expect(released.isSet)
    }
}
