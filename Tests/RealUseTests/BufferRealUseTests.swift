import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// `for await` over a signal with a buffering policy, including the sizes users pass for "latest
/// only" (`.bufferingNewest(0)`/`(1)`), and values whose lifetime matters.
@Suite struct BufferRealUseTests {
    /// A value sent while the signal starts goes to the consumer that is already waiting, whatever the
    /// buffer's size.
    @Test func aSizeZeroBufferDeliversToTheWaitingConsumer() async {
        let fromSingle = Log<Int>()
        let fromPromise = Log<Int>()
        let finished = await finishes {
            for await value in Signal<Int, NoError>.single(7).values(bufferingPolicy: .bufferingNewest(0)) {
                fromSingle.append(value)
            }
            for await value in ValuePromise(42).values(bufferingPolicy: .bufferingOldest(0)) {
                fromPromise.append(value)
                break
            }
        }
        #expect(finished, "a loop waited for a value that was dropped")
        #expect(fromSingle.entries == [7])
        #expect(fromPromise.entries == [42])
    }

    @Test(arguments: DisposalRealUseTests.policies)
    func everyPolicyYieldsAPromisesCurrentValueFirst(_ policy: SignalBufferingPolicy) async {
        let state = Promise<String>("ready")
        var first: String?
        for await value in state.values(bufferingPolicy: policy) {
            first = value
            break
        }
        #expect(first == "ready")
    }

    final class Noisy: Sendable {
        let pipe: ValuePipe<Noisy>?
        let released: Count
        init(_ pipe: ValuePipe<Noisy>?, released: Count) {
            self.pipe = pipe
            self.released = released
        }
        deinit {
            self.released.increment()
            // A deinit that sends into the pipe it was buffered from: the library must not hold its
            // buffer's lock while releasing it.
            self.pipe?.putNext(Noisy(nil, released: self.released))
        }
    }

    /// Values dropped by a bounded buffer, and values consumed from it, are released outside the
    /// buffer's lock: a value whose deinit sends into the same pipe does not deadlock.
    @Test(arguments: [SignalBufferingPolicy.bufferingNewest(2), .bufferingOldest(2), .unbounded])
    func aBufferedValuesDeinitMaySendIntoTheSamePipe(_ policy: SignalBufferingPolicy) async {
        let finished = await finishes {
            let pipe = ValuePipe<Noisy>()
            let released = Count()
            let iterating = DispatchSemaphore(value: 0)
            let consumer = Task.detached {
                var count = 0
                for await _ in pipe.values(bufferingPolicy: policy) {
                    if count == 0 { iterating.signal() }
                    count += 1
                    if count == 50 { break }
                }
            }
            // The pipe does not replay: send until the loop has subscribed and received one.
            await eventually {
                pipe.putNext(Noisy(pipe, released: released))
                return iterating.wait(timeout: .now()) == .success  // blocking-check: a zero timeout does not wait
            }
            for _ in 0..<200 {
                pipe.putNext(Noisy(pipe, released: released))
            }
            consumer.cancel()
            await consumer.value
        }
        #expect(finished, "a value's deinit deadlocked against the buffer's lock")
    }

    final class Tracked: Sendable {
        let released: Count
        init(_ released: Count) { self.released = released }
        deinit { self.released.increment() }
    }

    /// Once the loop body has dropped a value, nothing in the iteration keeps it alive.
    @Test(arguments: [SignalBufferingPolicy.bufferingOldest(3), .bufferingNewest(3), .unbounded])
    func aConsumedValueIsReleasedWhenTheLoopDropsIt(_ policy: SignalBufferingPolicy) async {
        let released = Count()
        // Four values at start: the first goes to the waiting consumer, three wait in the buffer.
        let signal = Signal<Tracked, NoError> { subscriber in
            for _ in 0..<4 { subscriber.putNext(Tracked(released)) }
            return EmptyDisposable
        }
        var iterator = signal.values(bufferingPolicy: policy).makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(released.value == 2, "a consumed value is still alive inside the iteration")
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(released.value == 4)
    }
}
