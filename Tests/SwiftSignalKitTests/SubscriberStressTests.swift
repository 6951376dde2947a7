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
