import Dispatch
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Synchronization
import Testing

/// A released pipe releases its subscribers (`ReleasedPipeTests` in the core's tests); a loop over one
/// must still end when its task is cancelled, not wait on a continuation nobody holds.
@Suite struct ReleasedPipeLoopTests {
    /// A loop awaiting a pipe that goes away still ends when its task is cancelled: releasing the
    /// subscriber must not strand the loop's continuation.
    @Test func aLoopOverAPipeThatIsReleasedStillEndsWhenCancelled() async {
        let pipes = Mutex<(ValuePipe<Int>?, ReplayingValuePipe<Int>?)>((ValuePipe(), ReplayingValuePipe()))
        let signals = pipes.withLock { [$0.0!.signal(), $0.1!.signal()] }
        for (index, signal) in signals.enumerated() {
            let started = DispatchSemaphore(value: 0)
            let loop = Task {
                let values = signal.values
                started.signal()
                for await _ in values {}
                return Task.isCancelled
            }
            // Subscribed before or after the release, as it happens: either way it must end.
            let first = Task { await signal.first() }
            #expect(await wait(started))
            pipes.withLock { index == 0 ? ($0.0 = nil) : ($0.1 = nil) }
            loop.cancel()
            first.cancel()
            #expect(await loop.value)
            #expect(await first.value == nil)
        }
    }
}
