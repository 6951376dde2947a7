import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct SubscriberStressTests {
    /// `dispose()` never waits for a callback running on another thread: here the callback itself
    /// waits until `dispose()` has returned, which deadlocked (and now times out) under a waiting dispose.
    @Test func disposeDoesNotWaitForACallbackOnAnotherThread() async {
        for _ in 0..<20 {
            let captured = CapturedSubscriber<Int, NoError>()
            let callbackStarted = DispatchSemaphore(value: 0)
            let disposeReturned = DispatchSemaphore(value: 0)
            let sawDisposeReturn = Flag()
            let subscription = captured.signal().start(next: { _ in
                callbackStarted.signal()
                if blockingWait(disposeReturned) { sawDisposeReturn.set() }
            })
            let senderDone = DispatchSemaphore(value: 0)
            Thread {
                captured.subscriber?.putNext(1)
                senderDone.signal()
            }.start()
            #expect(await wait(callbackStarted))
            subscription.dispose()
            disposeReturned.signal()
            #expect(await wait(senderDone))
            #expect(sawDisposeReturn.isSet, "dispose() waited for the other thread's callback")
            if !sawDisposeReturn.isSet { break }
        }
    }

    /// No callback starts once `dispose()` has returned: a value whose `putNext` begins after that is
    /// dropped, whichever thread sends it, even while other threads are still inside callbacks.
    @Test func noCallbackStartsAfterDisposeReturns() async {
        for _ in 0..<20 {
            let captured = CapturedSubscriber<Int, NoError>()
            let disposeReturned = Flag()
            let late = Counter()
            let delivered = Counter()
            let subscription = captured.signal().start(next: { sentAfterDispose in
                delivered.increment()
                if sentAfterDispose == 1 { late.increment() }
            })
            await concurrently(4) { thread in
                if thread == 0 {
                    blockingSpin(until: { delivered.value > 10 })
                    subscription.dispose()
                    disposeReturned.set()
                } else {
                    for _ in 0..<2_000 {
                        // Sampled before the send begins: 1 only for sends that begin after dispose().
                        captured.subscriber?.putNext(disposeReturned.isSet ? 1 : 0)
                    }
                }
            }
            #expect(late.value == 0, "a value sent after dispose() returned was delivered")
        }
    }

    /// An operator's subscriber passes a completion on without counting it as a delivery of its own,
    /// except while another thread is inside one of its callbacks. Then the count is what lets the
    /// upstream disposal that the completion triggers (on the completing thread, still inside the forward)
    /// go without waiting for that other thread, which here waits for the completion to return: waiting
    /// would deadlock.
    @Test func aCompletionForwardedWhileAnotherThreadMapsDoesNotWaitForIt() async {
        for _ in 0..<20 {
            let captured = CapturedSubscriber<Int, NoError>()
            let mapping = Flag()
            let completionReturned = DispatchSemaphore(value: 0)
            let waitedForCompletion = Flag()
            let completed = Flag()
            let mapped =
                captured.signal()
                |> map { (value: Int) -> Int in
                    mapping.set()
                    // Bounded, so that a deadlock shows as a failure, not a hang.
                    if blockingWait(completionReturned) { waitedForCompletion.set() }
                    return value
                }
            let subscription = mapped.start(completed: { completed.set() })
            let senderReturned = DispatchSemaphore(value: 0)
            let sender = Thread {
                captured.subscriber?.putNext(1)
                senderReturned.signal()
            }
            sender.start()
            #expect(await spin(until: { mapping.isSet }))
            // The completion goes through the map's subscriber to the one `start` made, whose termination
            // disposes the map's subscriber from inside the forward, while the sender is still mapping.
            let completer = Thread {
                captured.subscriber?.putCompletion()
                completionReturned.signal()
            }
            completer.start()
            #expect(await wait(senderReturned))
            #expect(completed.isSet)
            subscription.dispose()
            #expect(waitedForCompletion.isSet, "the completion waited for the mapping thread")
            if !waitedForCompletion.isSet { break }
        }
    }

    @Test func concurrentEventsAndDisposeNeverDeliverAfterDispose() async {
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let disposed = Flag()
            let late = Counter()
            // The flag is sampled before each send: a value sent after dispose() returned must not be
            // delivered (one sent before it may still finish its callback on its thread).
            let subscription = captured.signal().start(next: { sentAfterDispose in
                if sentAfterDispose == 1 { late.increment() }
            })
            await concurrently(4) { index in
                if index == 0 {
                    subscription.dispose()
                    disposed.set()
                } else {
                    for _ in 0..<200 {
                        captured.subscriber?.putNext(disposed.isSet ? 1 : 0)
                    }
                }
            }
            #expect(late.value == 0)
        }
    }

    @Test func concurrentTerminalEventsDeliverExactlyOne() async {
        for _ in 0..<500 {
            let captured = CapturedSubscriber<Int, TestError>()
            let terminals = Counter()
            let disposable = CountingDisposable()
            _ = captured.signal(disposable: disposable).start(error: { _ in terminals.increment() }, completed: { terminals.increment() })
            await concurrently(4) { index in
                if index % 2 == 0 {
                    captured.subscriber?.putCompletion()
                } else {
                    captured.subscriber?.putError(TestError())
                }
            }
            #expect(terminals.value == 1)
            #expect(disposable.count.value == 1)
        }
    }

    /// Two threads inside callbacks of one subscription both dispose it. Waiting for each other would
    /// deadlock, so a disposer that is itself inside one of the subscription's callbacks does not wait.
    @Test func concurrentDisposesFromInsideCallbacksDoNotDeadlock() async {
        for _ in 0..<50 {
            let captured = CapturedSubscriber<Int, NoError>()
            let holder = LockedState<Disposable?>(nil)
            let inside = Counter()
            let finished = DispatchSemaphore(value: 0)
            let subscription = captured.signal().start(next: { _ in
                inside.increment()
                // Both callbacks are running before either disposes.
                blockingSpin(until: { inside.value >= 2 }, limit: 5_000_000)
                holder.withLock { $0 }?.dispose()
            })
            holder.withLock { $0 = subscription }
            for value in 0..<2 {
                Thread {
                    captured.subscriber?.putNext(value)
                    finished.signal()
                }.start()
            }
            #expect(await wait(finished), "the first callback returned")
            #expect(await wait(finished), "the second callback returned")
        }
    }
}
