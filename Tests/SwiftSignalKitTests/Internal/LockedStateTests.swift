import Testing

@testable import SwiftSignalKit

/// The library's lock checks what it does: every pthread result, and in debug builds an error-checking
/// mutex, so that misuse stops with a message naming it instead of deadlocking.
@Suite struct LockedStateTests {
    @Test func locksAndUnlocksAroundTheBody() {
        let state = LockedState(0)
        state.withLock { $0 += 1 }
        #expect(state.withLock { $0 } == 1)
        #expect(state.tryWithLock { $0 } == 1)
    }

    #if DEBUG
        /// Taking a lock that the thread already holds stops with a message (it would deadlock in silence
        /// with a default mutex).
        @Test func takingALockTwiceOnOneThreadStopsWithAMessage() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let state = LockedState(0)
                state.withLock { _ in state.withLock { _ in } }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("pthread_mutex_lock failed with"))
            #expect(message.contains("EDEADLK: this thread already holds the lock"))
        }
    #endif
}
