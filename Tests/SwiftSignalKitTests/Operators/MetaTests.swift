import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct SwitchToLatestTests {
    @Test func followsOnlyTheLatestInnerSignal() {
        let outer = ValuePipe<Signal<Int, NoError>>()
        let first = CapturedSubscriber<Int, NoError>()
        let firstDisposable = CountingDisposable()
        let second = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(outer.signal() |> switchToLatest)
        outer.putNext(first.signal(disposable: firstDisposable))
        first.subscriber?.putNext(1)
        outer.putNext(second.signal())
        #expect(firstDisposable.count.value == 1, "switching disposes the previous inner signal")
        first.subscriber?.putNext(2)
        second.subscriber?.putNext(3)
        #expect(recorder.values == [1, 3])
    }

    /// As in the original library: the new inner signal is subscribed before the replaced one is
    /// disposed (a probe against the original found them the other way round).
    @Test func theNewInnerIsSubscribedBeforeTheReplacedOneIsDisposed() {
        let order = LockedState<[String]>([])
        func inner(_ name: String) -> Signal<Int, NoError> {
            return Signal { _ in
                order.withLock { $0.append("subscribed \(name)") }
                return ActionDisposable { order.withLock { $0.append("disposed \(name)") } }
            }
        }
        let outer = ValuePipe<Signal<Int, NoError>>()
        let subscription = (outer.signal() |> switchToLatest).start()
        outer.putNext(inner("a"))
        outer.putNext(inner("b"))
        subscription.dispose()
        #expect(order.withLock { $0 } == ["subscribed a", "subscribed b", "disposed a", "disposed b"])
    }

    /// So a `share()`d signal that each inner signal subscribes to stays connected across the
    /// switches, where disposing first disconnected it and connected it again every time.
    @Test func switchingBetweenSubscriptionsOfASharedSignalKeepsItConnected() {
        let connections = Counter()
        let feed = ValuePipe<Int>()
        let shared =
            (Signal<Int, NoError> { subscriber in
                connections.increment()
                return feed.signal().start(next: { subscriber.putNext($0) })
            } |> share())
        let recorder = Recorder<Int, NoError>()
        let triggers = ValuePipe<Int>()
        let subscription = recorder.start(triggers.signal() |> mapToSignal { _ in shared })
        for trigger in 0..<5 {
            triggers.putNext(trigger)
            feed.putNext(trigger)
        }
        subscription.dispose()
        #expect(connections.value == 1)
        #expect(recorder.values == [0, 1, 2, 3, 4])
    }

    /// Bug 4 of the original: a replaced inner signal that completed (while it was being replaced) made
    /// the result complete early, although the current inner signal was still running.
    @Test func completesOnlyAfterOuterAndCurrentInnerComplete() {
        let outer = CapturedSubscriber<Signal<Int, NoError>, NoError>()
        let first = CapturedSubscriber<Int, NoError>()
        let second = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(outer.signal() |> switchToLatest)
        outer.subscriber?.putNext(first.signal())
        let staleFirst = first.subscriber
        outer.subscriber?.putNext(second.signal())
        outer.subscriber?.putCompletion()
        staleFirst?.putCompletion()
        #expect(recorder.events.isEmpty)
        second.subscriber?.putNext(4)
        second.subscriber?.putCompletion()
        #expect(recorder.events == [.next(4), .completed])
    }

    @Test func innerErrorEndsTheResult() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(values([Signal<Int, TestError>.fail(TestError(code: 3))], TestError.self) |> switchToLatest)
        #expect(recorder.events == [.error(TestError(code: 3))])
    }

    @Test func mapToSignalAndPromotingError() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(values([1, 2]) |> mapToSignal { value in values([value, value * 10]) })
        #expect(recorder.events == [.next(1), .next(10), .next(2), .next(20), .completed])

        let promoted = Recorder<Int, TestError>()
        promoted.start(values([1]) |> mapToSignalPromotingError { _ in Signal<Int, TestError>.fail(TestError(code: 8)) })
        #expect(promoted.events == [.error(TestError(code: 8))])
    }

    @Test func disposeDisposesOuterAndInner() {
        let outerDisposable = CountingDisposable()
        let innerDisposable = CountingDisposable()
        let outer = CapturedSubscriber<Signal<Int, NoError>, NoError>()
        let subscription = (outer.signal(disposable: outerDisposable) |> switchToLatest).start()
        outer.subscriber?.putNext(Signal { _ in innerDisposable })
        subscription.dispose()
        #expect(outerDisposable.count.value == 1)
        #expect(innerDisposable.count.value == 1)
    }

    /// As in the original library: disposing `mapToSignal`, `mapToQueue` or `mapToThrottled` disposes
    /// the inner subscription, then the outer one (it was the other way round).
    @Test func disposeDisposesTheInnerSubscriptionThenTheOuter() {
        let operators: [(String, (Signal<Int, NoError>, @escaping @Sendable (Int) -> Signal<Int, NoError>) -> Signal<Int, NoError>)] = [
            ("mapToSignal", { $0 |> mapToSignal($1) }),
            ("mapToQueue", { $0 |> mapToQueue($1) }),
            ("mapToThrottled", { $0 |> mapToThrottled($1) }),
        ]
        for (name, apply) in operators {
            let order = LockedState<[String]>([])
            let outer = CapturedSubscriber<Int, NoError>()
            let source = outer.signal(disposable: ActionDisposable { order.withLock { $0.append("outer") } })
            let subscription = apply(source) { _ in
                Signal { _ in ActionDisposable { order.withLock { $0.append("inner") } } }
            }.start()
            outer.subscriber?.putNext(1)
            subscription.dispose()
            #expect(order.withLock { $0 } == ["inner", "outer"], "\(name)")
        }
    }
}

@Suite struct SwitchToLatestStateMachineTests {
    @Test func staleInnerCompletionIsIgnored() {
        var machine = SwitchToLatestStateMachine()
        let first = machine.outerSentInner().subscribesTo!
        let second = machine.outerSentInner().subscribesTo!
        #expect(!machine.isCurrent(first))
        #expect(machine.isCurrent(second))
        let completedByOuter = machine.outerCompletedEvent()
        let completedByStale = machine.innerCompleted(first)
        let completedByCurrent = machine.innerCompleted(second)
        #expect(!completedByOuter.completes)
        #expect(!completedByStale.completes)
        #expect(completedByCurrent.completes)
        #expect(machine.isTerminated)
    }

    @Test func lateStartedInnerIsDisposed() {
        var machine = SwitchToLatestStateMachine()
        let first = machine.outerSentInner().subscribesTo!
        _ = machine.outerSentInner()
        let late = ActionDisposable {}
        let action = machine.innerStarted(first, disposable: late)
        #expect(action.disposed === late, "an inner subscription that was already replaced must be disposed")
    }
}

@Suite struct QueueOperatorTests {
    @Test func queueRunsInnerSignalsOneAfterAnother() {
        let outer = ValuePipe<Signal<Int, NoError>>()
        let first = CapturedSubscriber<Int, NoError>()
        let secondStarted = Flag()
        let recorder = Recorder<Int, NoError>()
        recorder.start(outer.signal() |> queue)
        outer.putNext(first.signal())
        outer.putNext(
            Signal { subscriber in
                secondStarted.set()
                subscriber.putNext(2)
                subscriber.putCompletion()
                return EmptyDisposable
            })
        #expect(!secondStarted.isSet, "the second waits for the first to complete")
        first.subscriber?.putNext(1)
        first.subscriber?.putCompletion()
        #expect(secondStarted.isSet)
        #expect(recorder.values == [1, 2])
    }

    @Test func queueCompletesAfterOuterAndAllInnersComplete() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(values([values([1, 2]), values([3])]) |> queue)
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func hundredThousandSynchronousInnerSignalsKeepTheStackFlat() async {
        let total = Counter()
        let outer = Signal<Signal<Int, NoError>, NoError> { subscriber in
            // The first inner signal is slow, so the rest pile up and then drain synchronously in a row.
            let gate = CapturedSubscriber<Int, NoError>()
            subscriber.putNext(gate.signal())
            for value in 0..<100_000 {
                subscriber.putNext(.single(value))
            }
            subscriber.putCompletion()
            gate.subscriber?.putCompletion()
            return EmptyDisposable
        }
        let completed = Flag()
        // A stress of synchronous work: on a thread of its own, not on one of the task pool's.
        await onThread { _ = (outer |> queue).start(next: { _ in total.increment() }, completed: { completed.set() }) }
        #expect(total.value == 100_000)
        #expect(completed.isSet)
    }

    @Test func throttledKeepsOnlyTheLatestWaitingSignal() {
        let outer = ValuePipe<Signal<Int, NoError>>()
        let first = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(outer.signal() |> throttled)
        outer.putNext(first.signal())
        outer.putNext(.single(2))
        outer.putNext(.single(3))
        first.subscriber?.putCompletion()
        #expect(recorder.values == [3])
    }

    @Test func mapToQueueAndMapToThrottled() {
        let queued = Recorder<Int, NoError>()
        queued.start(values([1, 2, 3]) |> mapToQueue { .single($0 * 2) })
        #expect(queued.events == [.next(2), .next(4), .next(6), .completed])
        let throttledRecorder = Recorder<Int, NoError>()
        throttledRecorder.start(values([1, 2]) |> mapToThrottled { .single($0) })
        #expect(throttledRecorder.events == [.next(1), .next(2), .completed])
    }

    @Test func innerErrorEndsAndDropsWaitingSignals() {
        let started = Counter()
        let recorder = Recorder<Int, TestError>()
        let waiting = Signal<Int, TestError> { _ in
            started.increment()
            return EmptyDisposable
        }
        recorder.start(values([Signal<Int, TestError>.fail(TestError(code: 1)), waiting], TestError.self) |> queue)
        #expect(recorder.events == [.error(TestError(code: 1))])
        #expect(started.value == 0)
    }
}

@Suite struct SequencingTests {
    @Test func thenDoesNotStartTheNextSignalForAnEndedSubscriber() {
        let started = Counter()
        let next = Signal<Int, NoError> { subscriber in
            started.increment()
            subscriber.putNext(9)
            return EmptyDisposable
        }
        let taken = Recorder<Int, NoError>()
        taken.start(values([1, 2]) |> then(next) |> take(2))
        #expect(taken.events == [.next(1), .next(2), .completed])
        #expect(started.value == 0, "take(2) had ended the subscriber before the source completed")
    }

    @Test func ignoreValuesThenDeferredMerge() {
        // The result's value type is Never, so no value can be sent; only the completion remains.
        let ignored = LockedState<[String]>([])
        let result: Signal<Never, NoError> = ignoreValues(values([1, 2]))
        _ = result.start(completed: {
            ignored.withLock { $0.append("completed") }
        })
        #expect(ignored.withLock { $0 } == ["completed"])

        let chained = Recorder<Int, NoError>()
        chained.start(values([1]) |> then(values([2, 3])))
        #expect(chained.events == [.next(1), .next(2), .next(3), .completed])

        let made = Counter()
        let lazy = deferred { () -> Signal<Int, NoError> in
            made.increment()
            return .single(1)
        }
        #expect(made.value == 0)
        _ = lazy.start()
        _ = lazy.start()
        #expect(made.value == 2)
    }

    @Test func mergeCompletesAfterAllAndFailsOnFirstError() {
        let merged = Recorder<Int, TestError>()
        merged.start(merge([values([1, 2], TestError.self), values([3], TestError.self)]))
        #expect(merged.events == [.next(1), .next(2), .next(3), .completed])

        let empty = Recorder<Int, NoError>()
        empty.start(merge([Signal<Int, NoError>]()))
        #expect(empty.events == [.completed])

        let other = CountingDisposable()
        let failed = Recorder<Int, TestError>()
        failed.start(merge([Signal { _ in other }, .fail(TestError(code: 2))]))
        #expect(failed.events == [.error(TestError(code: 2))])
        #expect(other.count.value == 1, "the error disposes the other sources")
    }
}

@Suite struct MetaStressTests {
    /// The concurrent form of bug 4: an old inner signal completing on another thread while the outer
    /// signal switches and completes must not complete the result.
    @Test func switchRacingStaleInnerCompletionNeverCompletesEarly() async {
        for _ in 0..<2_000 {
            let outer = CapturedSubscriber<Signal<Int, NoError>, NoError>()
            let first = CapturedSubscriber<Int, NoError>()
            let second = CapturedSubscriber<Int, NoError>()
            let completed = Flag()
            _ = (outer.signal() |> switchToLatest).start(completed: { completed.set() })
            outer.subscriber?.putNext(first.signal())
            await concurrently(2) { thread in
                if thread == 0 {
                    first.subscriber?.putCompletion()
                } else {
                    outer.subscriber?.putNext(second.signal())
                    outer.subscriber?.putCompletion()
                }
            }
            #expect(!completed.isSet)
            second.subscriber?.putCompletion()
            #expect(completed.isSet)
        }
    }

    @Test func queueWithConcurrentOuterAndAsynchronousInnersDeliversEverything() async {
        let dispatchQueue = Queue()
        let outer = ValuePipe<Signal<Int, NoError>>()
        let received = Counter()
        let subscription = (outer.signal() |> queue).start(next: { _ in received.increment() })
        await concurrently(4) { thread in
            for value in 0..<250 {
                outer.putNext(
                    Signal { subscriber in
                        dispatchQueue.justDispatch {
                            subscriber.putNext(thread * 1_000 + value)
                            subscriber.putCompletion()
                        }
                        return EmptyDisposable
                    })
            }
        }
        await spin(until: { received.value == 1_000 })
        #expect(received.value == 1_000)
        subscription.dispose()
    }
}
