import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct SignalTests {
    @Test func generatorRunsSynchronouslyOnEachStart() {
        let starts = Counter()
        let signal = Signal<Int, NoError> { subscriber in
            let run = starts.increment()
            subscriber.putNext(run)
            return EmptyDisposable
        }
        let first = Recorder<Int, NoError>()
        first.start(signal)
        #expect(first.values == [1], "the generator ran before start returned")
        let second = Recorder<Int, NoError>()
        second.start(signal)
        #expect(second.values == [2], "each start runs the generator again (cold)")
    }

    @Test func staticConstructors() {
        let single = Recorder<Int, TestError>()
        single.start(.single(7))
        #expect(single.events == [.next(7), .completed])

        let failed = Recorder<Int, TestError>()
        failed.start(.fail(TestError(code: 3)))
        #expect(failed.events == [.error(TestError(code: 3))])

        let empty = Recorder<Int, TestError>()
        empty.start(.complete())
        #expect(empty.events == [.completed])

        let silent = Recorder<Int, TestError>()
        silent.start(.never())
        #expect(silent.events.isEmpty)
    }

    @Test func freeFunctionConstructors() {
        let single = Recorder<Int, TestError>()
        single.start(SwiftSignalKit.single(1, TestError.self))
        #expect(single.events == [.next(1), .completed])
        let failed = Recorder<Int, TestError>()
        failed.start(fail(Int.self, TestError(code: 2)))
        #expect(failed.events == [.error(TestError(code: 2))])
        let empty = Recorder<Int, TestError>()
        empty.start(complete(Int.self, TestError.self))
        #expect(empty.events == [.completed])
        let silent = Recorder<Int, TestError>()
        silent.start(never(Int.self, TestError.self))
        #expect(silent.events.isEmpty)
    }

    @Test func eventsAfterTerminalEventAreDropped() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(
            Signal { subscriber in
                subscriber.putNext(1)
                subscriber.putCompletion()
                subscriber.putNext(2)
                subscriber.putError(TestError())
                subscriber.putCompletion()
                return EmptyDisposable
            })
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test func terminalEventInsideGeneratorDisposesTheReturnedDisposable() {
        let disposable = CountingDisposable()
        let recorder = Recorder<Int, NoError>()
        recorder.start(
            Signal { subscriber in
                subscriber.putCompletion()
                return disposable
            })
        #expect(disposable.count.value == 1)
    }

    @Test func laterTerminalEventDisposesGeneratorDisposableOnce() {
        let disposable = CountingDisposable()
        let captured = CapturedSubscriber<Int, TestError>()
        let subscription = captured.signal(disposable: disposable).start()
        #expect(disposable.count.value == 0)
        captured.subscriber?.putError(TestError())
        #expect(disposable.count.value == 1)
        subscription.dispose()
        #expect(disposable.count.value == 1, "dispose after a terminal event does not dispose again")
    }

    /// As in the original library: a subscription disposed inside its own terminal callback disposes
    /// its source there, not after the callback returns (it used to do nothing then).
    @Test func disposingInsideTheTerminalCallbackDisposesTheSourceAtOnce() {
        for terminal in ["completion", "error"] {
            let order = LockedState<[String]>([])
            let captured = CapturedSubscriber<Int, TestError>()
            let holder = MetaDisposable()
            let source = captured.signal(disposable: ActionDisposable { order.withLock { $0.append("source disposed") } })
            let ended: @Sendable () -> Void = {
                order.withLock { $0.append("ended") }
                holder.dispose()
                order.withLock { $0.append("dispose returned") }
            }
            holder.set(source.start(error: { _ in ended() }, completed: ended))
            if terminal == "completion" {
                captured.subscriber?.putCompletion()
            } else {
                captured.subscriber?.putError(TestError())
            }
            #expect(order.withLock { $0 } == ["ended", "source disposed", "dispose returned"], "\(terminal)")
        }
    }

    /// Through an operator: the terminal event reaches the subscriber below, whose teardown disposes the
    /// operator's subscription; the operator's source goes then, before the teardown below goes on.
    @Test func teardownBelowAnOperatorFindsTheSourceAboveDisposed() {
        let order = LockedState<[String]>([])
        let captured = CapturedSubscriber<Int, NoError>()
        let source = captured.signal(disposable: ActionDisposable { order.withLock { $0.append("source disposed") } })
        let below = Signal<Int, NoError> { subscriber in
            let upstream = (source |> map { $0 + 1 }).start(completed: { subscriber.putCompletion() })
            return ActionDisposable {
                upstream.dispose()
                order.withLock { $0.append("teardown below") }
            }
        }
        _ = below.start(completed: { order.withLock { $0.append("completed") } })
        captured.subscriber?.putCompletion()
        #expect(order.withLock { $0 } == ["completed", "source disposed", "teardown below"])
    }

    @Test func disposeStopsDeliveryAndDisposesOnce() {
        let disposable = CountingDisposable()
        let captured = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        let subscription = recorder.start(captured.signal(disposable: disposable))
        captured.subscriber?.putNext(1)
        subscription.dispose()
        subscription.dispose()
        captured.subscriber?.putNext(2)
        captured.subscriber?.putCompletion()
        #expect(recorder.events == [.next(1)])
        #expect(disposable.count.value == 1)
    }

    @Test func callbacksAreReleasedAfterTermination() {
        let tracker = LifetimeTracker()
        let captured = CapturedSubscriber<Int, NoError>()
        do {
            let object = tracker.make()
            _ = captured.signal().start(next: { _ in _ = object })
        }
        #expect(tracker.live.value == 1)
        captured.subscriber?.putCompletion()
        #expect(tracker.live.value == 0, "terminating releases the callbacks and what they captured")
    }

    @Test func aSubscriptionThatEndedWhileStartingIsTheEmptyDisposable() {
        let tracker = LifetimeTracker()
        let values = Counter()
        var subscription: Disposable?
        do {
            let object = tracker.make()
            let signal =
                Signal<Int, NoError>.single(1) |> map { $0 + 1 }
                |> filter { _ in
                    _ = object; return true
                }
            subscription = signal.start(next: { _ in values.increment() })
        }
        #expect(values.value == 1)
        // Nothing is left to end: every stage hands out the empty disposable instead of itself, and the
        // stages (with what their closures captured) are gone before anyone disposes anything.
        #expect(subscription.map { type(of: $0) == _EmptyDisposable.self } == true)
        #expect(tracker.live.value == 0)
        subscription?.dispose()
        #expect(values.value == 1)
    }

    @Test func keepAliveHoldsObjectsUntilTermination() {
        let tracker = LifetimeTracker()
        let captured = CapturedSubscriber<Int, NoError>()
        let subscription = captured.signal().start()
        captured.subscriber?.keepAlive(tracker.make())
        #expect(tracker.live.value == 1)
        subscription.dispose()
        #expect(tracker.live.value == 0)
        captured.subscriber?.keepAlive(tracker.make())
        #expect(tracker.live.value == 0, "objects kept alive after termination are released at once")
    }

    @Test func keptAliveObjectsOutliveTheGeneratorsDisposableAndLeaveTheCallbacksAlone() {
        // Kept-alive objects share the subscriber's rarely used extras with the error and completion
        // callbacks: keeping an object alive must not replace a callback, and the objects go only after
        // the generator's disposable was disposed (which may still use them).
        let tracker = LifetimeTracker()
        let order = LockedState<[String]>([])
        let errors = LockedState<[TestError]>([])
        let captured = CapturedSubscriber<Int, TestError>()
        let source = captured.signal(
            disposable: ActionDisposable {
                order.withLock { $0.append("disposed with \(tracker.live.value) kept alive") }
            })
        _ = source.start(error: { error in errors.withLock { $0.append(error) } })
        captured.subscriber?.keepAlive(tracker.make())
        captured.subscriber?.keepAlive(tracker.make())
        captured.subscriber?.putError(TestError(code: 7))
        #expect(errors.withLock { $0 } == [TestError(code: 7)])
        #expect(order.withLock { $0 } == ["disposed with 2 kept alive"])
        #expect(tracker.live.value == 0)
    }

    @Test func disposingFromInsideOwnCallbackDoesNotDeadlock() {
        let holder = MetaDisposable()
        let recorder = Recorder<Int, NoError>()
        let pipe = ValuePipe<Int>()
        holder.set(
            pipe.signal().start(next: { value in
                recorder.append(.next(value))
                holder.dispose()
            }))
        pipe.putNext(1)
        pipe.putNext(2)
        #expect(recorder.values == [1])
    }

    @Test func startStrictReportsLeakWithFileAndLine() {
        let reports = LockedState<[String]>([])
        let original = StrictDisposable.leakHandler.withLock { handler -> @Sendable (String) -> Void in
            let original = handler
            handler = { message in reports.withLock { $0.append(message) } }
            return original
        }
        defer { StrictDisposable.leakHandler.withLock { $0 = original } }

        do {
            _ = Signal<Int, NoError>.never().startStrict(file: "Feature.swift", line: 42)
        }
        let disposed = Signal<Int, NoError>.never().startStrict(file: "Other.swift", line: 7)
        disposed.dispose()
        #if DEBUG
            #expect(reports.withLock { $0 }.count == 1)
            #expect(reports.withLock { $0 }.first?.contains("Feature.swift:42") == true)
        #endif
    }

    /// A strict subscription to a signal that ended before `startStrict` returned wraps the empty
    /// disposable: its leak report says so in the user's terms, not by the type's underscored name.
    @Test func startStrictLeakOfAnEndedSubscriptionSaysItHadEnded() {
        let ended = StrictDisposable.leakMessage(
            wrapping: Signal<Int, NoError>.single(1).start(), file: "Feature.swift", line: 42)
        #expect(ended.hasPrefix("Leaked disposable from Feature.swift:42: "))
        #expect(ended.contains("its subscription had already ended"))
        #expect(!ended.contains("_EmptyDisposable"))

        let running = Signal<Int, NoError>.never().start()
        defer { running.dispose() }
        let live = StrictDisposable.leakMessage(wrapping: running, file: "Feature.swift", line: 7)
        #expect(live.hasPrefix("Leaked disposable from Feature.swift:7: "))
        #expect(live.contains("it wraps Subscriber"))
    }

    /// `get()` reads its first outcome without locking only when the thread that created the waiter set it
    /// (while starting the signal); a change made on any other thread must be read under the lock.
    @Test func pipeOperatorAndIdentity() {
        #expect((3 |> { $0 * 2 }) == 6)
        #expect(identity(a: "x") == "x")
    }
}
