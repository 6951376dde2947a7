import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct SubscriberStressTests {
    /// Bug 3 of the original: a value that passed the "not terminated" check could be delivered after
    /// `dispose()` had returned. The callback below is still running when another thread disposes; a
    /// correct `dispose()` waits for it, so the callback never observes `dispose()` as returned.
    @Test func noCallbackRunsAfterDisposeReturns() {
        for _ in 0..<20 {
            let captured = CapturedSubscriber<Int, NoError>()
            let callbackStarted = Flag()
            let disposeCalled = Flag()
            let disposeReturned = Flag()
            let violations = Counter()
            let callbackFinished = Flag()
            let subscription = captured.signal().start(next: { _ in
                callbackStarted.set()
                spin(until: { disposeCalled.isSet })
                // Give a non-waiting dispose() ample time to return.
                for _ in 0..<20_000 { sched_yield() }
                if disposeReturned.isSet {
                    violations.increment()
                }
                callbackFinished.set()
            })
            let sender = Thread {
                captured.subscriber?.putNext(1)
            }
            sender.start()
            #expect(spin(until: { callbackStarted.isSet }))
            disposeCalled.set()
            subscription.dispose()
            disposeReturned.set()
            captured.subscriber?.putNext(2)
            #expect(spin(until: { callbackFinished.isSet }))
            #expect(violations.value == 0)
        }
    }

    /// An operator's subscriber passes a completion on without counting it as a delivery of its own,
    /// except while another thread is inside one of its callbacks. Then the count is what lets the
    /// upstream disposal that the completion triggers (on the completing thread, still inside the forward)
    /// go without waiting for that other thread, which here waits for the completion to return: waiting
    /// would deadlock.
    @Test func aCompletionForwardedWhileAnotherThreadMapsDoesNotWaitForIt() {
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
                    if completionReturned.wait(timeout: .now() + 10) == .success { waitedForCompletion.set() }
                    return value
                }
            let subscription = mapped.start(completed: { completed.set() })
            let senderReturned = DispatchSemaphore(value: 0)
            let sender = Thread {
                captured.subscriber?.putNext(1)
                senderReturned.signal()
            }
            sender.start()
            #expect(spin(until: { mapping.isSet }))
            // The completion goes through the map's subscriber to the one `start` made, whose termination
            // disposes the map's subscriber from inside the forward, while the sender is still mapping.
            let completer = Thread {
                captured.subscriber?.putCompletion()
                completionReturned.signal()
            }
            completer.start()
            #expect(senderReturned.wait(timeout: .now() + 20) == .success)
            #expect(completed.isSet)
            subscription.dispose()
            #expect(waitedForCompletion.isSet, "the completion waited for the mapping thread")
            if !waitedForCompletion.isSet { break }
        }
    }

    @Test func concurrentEventsAndDisposeNeverDeliverAfterDispose() {
        for _ in 0..<200 {
            let captured = CapturedSubscriber<Int, NoError>()
            let disposed = Flag()
            let late = Counter()
            let subscription = captured.signal().start(next: { _ in
                if disposed.isSet { late.increment() }
            })
            concurrently(4) { index in
                if index == 0 {
                    subscription.dispose()
                    disposed.set()
                } else {
                    for value in 0..<200 {
                        captured.subscriber?.putNext(value)
                    }
                }
            }
            #expect(late.value == 0)
        }
    }

    @Test func concurrentTerminalEventsDeliverExactlyOne() {
        for _ in 0..<500 {
            let captured = CapturedSubscriber<Int, TestError>()
            let terminals = Counter()
            let disposable = CountingDisposable()
            _ = captured.signal(disposable: disposable).start(error: { _ in terminals.increment() }, completed: { terminals.increment() })
            concurrently(4) { index in
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
    @Test func concurrentDisposesFromInsideCallbacksDoNotDeadlock() {
        for _ in 0..<50 {
            let captured = CapturedSubscriber<Int, NoError>()
            let holder = LockedState<Disposable?>(nil)
            let inside = Counter()
            let finished = DispatchSemaphore(value: 0)
            let subscription = captured.signal().start(next: { _ in
                inside.increment()
                // Both callbacks are running before either disposes.
                spin(until: { inside.value >= 2 }, limit: 5_000_000)
                holder.withLock { $0 }?.dispose()
            })
            holder.withLock { $0 = subscription }
            for value in 0..<2 {
                Thread {
                    captured.subscriber?.putNext(value)
                    finished.signal()
                }.start()
            }
            #expect(wait(finished), "the first callback returned")
            #expect(wait(finished), "the second callback returned")
        }
    }
}
