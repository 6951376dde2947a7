import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// Disposal the way users meet it: a stream cancelled while a producer thread sends, and the library's
/// own disposals (`Promise.set`, `mapToSignal`) made under a lock that a running callback takes. Each
/// of these deadlocked while `dispose()` waited for callbacks on other threads.
@Suite struct DisposalRealUseTests {
    static let policies: [SignalBufferingPolicy] = [
        .unbounded, .bufferingNewest(1), .bufferingOldest(1), .bufferingNewest(0), .bufferingOldest(0),
    ]

    /// Starts `count` loops per policy over one pipe that a producer thread feeds, one loop after
    /// another on a thread per policy, and cancels each from that thread once it has received a value.
    /// Returns once all have ended (a hang stops the process through the watchdog).
    ///
    /// The producer sends a burst of values each time a loop has subscribed (and every millisecond
    /// otherwise), so values keep arriving while each loop takes its first and is cancelled. It used to
    /// send back to back for as long as the loops took: in a parallel `swift test` on two cores, where
    /// the loops wait their turn on the pool for minutes, that was a third of the run's processor time
    /// (perf: 37% of the samples), for the same races a run alone gets from about 25 values a loop.
    static func cancelLoopsWhileProducing(
        policies: [SignalBufferingPolicy], count: Int, scenario: String = #function
    ) async -> Bool {
        return await finishes(scenario) { watchdog in
            let pipe = ValuePipe<Int>()
            let stop = Atomic(value: false)
            let producerDone = DispatchSemaphore(value: 0)
            // Signalled by each loop once it has subscribed: the next burst reaches it.
            let subscribed = DispatchSemaphore(value: 0)
            Thread {
                var next = 0
                while !stop.with({ $0 }) {
                    for _ in 0..<32 {
                        pipe.putNext(next)
                        next += 1
                    }
                    _ = blockingWait(subscribed, seconds: 0.001)
                }
                producerDone.signal()
            }.start()
            let driversDone = DispatchSemaphore(value: 0)
            for policy in policies {
                Thread {
                    for _ in 0..<count {
                        let received = DispatchSemaphore(value: 0)
                        let ended = DispatchSemaphore(value: 0)
                        let task = Task.detached {
                            let values = pipe.values(bufferingPolicy: policy)  // subscribes here
                            subscribed.signal()
                            var first = true
                            for await _ in values where first {
                                first = false
                                received.signal()
                            }
                            ended.signal()
                        }
                        _ = blockingWait(received, seconds: 2 * hangLimit)
                        task.cancel()
                        _ = blockingWait(ended, seconds: 2 * hangLimit)
                        watchdog.progressed()
                    }
                    driversDone.signal()
                }.start()
            }
            for _ in policies { _ = blockingWait(driversDone, seconds: 2 * hangLimit) }
            _ = stop.swap(true)
            _ = blockingWait(producerDone, seconds: 2 * hangLimit)
        }
    }

    @Test(arguments: policies)
    func cancellingForAwaitWhileAProducerThreadSendsReturns(_ policy: SignalBufferingPolicy) async {
        #expect(await Self.cancelLoopsWhileProducing(policies: [policy], count: 200))
    }

    /// `promise.set(_:)` replaces (disposes) the previous source while another thread is inside a
    /// callback of `promise.get()` that waits for the caller's lock.
    @Test func promiseSetUnderALockThatARunningCallbackTakes() async {
        let finished = await finishes {
            let promise = Promise<Int>()
            let source = ValuePipe<Int>()
            promise.set(source.signal())
            let lock = UserLock()
            let entered = DispatchSemaphore(value: 0)
            let seen = Log<Int>()
            let subscription = promise.get().start(next: { value in
                if value == 1 { entered.signal() }
                lock.locked { seen.append(value) }
            })
            let senderDone = DispatchSemaphore(value: 0)
            lock.locked {
                Thread {
                    source.putNext(1)
                    senderDone.signal()
                }.start()
                _ = blockingWait(entered, seconds: 2 * hangLimit)
                promise.set(.single(2))
            }
            _ = blockingWait(senderDone, seconds: 2 * hangLimit)
            #expect(seen.entries.last == 2)
            subscription.dispose()
        }
        #expect(finished, "Promise.set waited for a callback blocked on the caller's lock")
    }

    /// `mapToSignal` disposes the previous inner signal when the outer one sends, here from under a
    /// lock that the inner signal's running callback takes.
    @Test func mapToSignalSwitchUnderALockThatARunningCallbackTakes() async {
        let finished = await finishes {
            let query = ValuePromise<Int>(0)
            let responses = ValuePipe<String>()
            let lock = UserLock()
            let entered = DispatchSemaphore(value: 0)
            let subscription = (query.get() |> mapToSignal { _ in responses.signal() }).start(next: { _ in
                entered.signal()
                lock.locked {}
            })
            let senderDone = DispatchSemaphore(value: 0)
            lock.locked {
                Thread {
                    responses.putNext("a")
                    senderDone.signal()
                }.start()
                _ = blockingWait(entered, seconds: 2 * hangLimit)
                query.set(1)
            }
            _ = blockingWait(senderDone, seconds: 2 * hangLimit)
            subscription.dispose()
        }
        #expect(finished, "mapToSignal's switch waited for a callback blocked on the caller's lock")
    }

    /// `take(1)` ends its upstream (a `combineLatest`, and through it a `map` that another thread is
    /// inside, blocked on a lock this thread holds) when the other source's value completes it.
    @Test func takeEndsItsUpstreamWhileAnotherThreadIsInsideACallback() async {
        let finished = await finishes {
            let left = ValuePipe<Int>()
            let right = ValuePipe<String>()
            let lock = UserLock()
            let entered = DispatchSemaphore(value: 0)
            let mapped =
                left.signal()
                |> map { value -> Int in
                    if value == 1 {
                        entered.signal()
                        lock.locked {}
                    }
                    return value
                }
            let pairs = Log<String>()
            let subscription = (combineLatest(mapped, right.signal()) |> take(1)).start(next: { pairs.append("\($0.0)\($0.1)") })
            left.putNext(0)
            let senderDone = DispatchSemaphore(value: 0)
            lock.locked {
                Thread {
                    left.putNext(1)
                    senderDone.signal()
                }.start()
                _ = blockingWait(entered, seconds: 2 * hangLimit)
                right.putNext("a")
            }
            _ = blockingWait(senderDone, seconds: 2 * hangLimit)
            #expect(pairs.entries == ["0a"])
            subscription.dispose()
        }
        #expect(finished)
    }
}

/// The stress: 10,000 cancellations of `for await` loops for each buffering policy, all
/// policies at once, while one producer thread sends (1,000 under ThreadSanitizer: `stressRounds(_:)`).
@Suite struct CancellationStressRealUseTests {
    @Test func tenThousandCancellationsPerPolicyWhileAProducerThreadSends() async {
        #expect(
            await DisposalRealUseTests.cancelLoopsWhileProducing(
                policies: DisposalRealUseTests.policies, count: stressRounds(10_000)))
    }
}
