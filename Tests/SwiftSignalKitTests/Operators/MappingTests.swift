import Dispatch
import Testing

@testable import SwiftSignalKit

/// A synchronous signal of the given values, then completion.
func values<T: Sendable, E>(_ values: [T], _ errorType: E.Type = NoError.self) -> Signal<T, E> {
    return Signal { subscriber in
        for value in values {
            subscriber.putNext(value)
        }
        subscriber.putCompletion()
        return EmptyDisposable
    }
}

@Suite struct MappingTests {
    @Test func mapAndFilter() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(values([1, 2, 3, 4]) |> filter { $0 % 2 == 0 } |> map { $0 * 10 })
        #expect(recorder.events == [.next(20), .next(40), .completed])
    }

    @Test func flatMapMapsWrappedValues() {
        let recorder = Recorder<Int?, NoError>()
        recorder.start(values([1, nil, 3]) |> flatMap { $0 + 1 })
        #expect(recorder.events == [.next(2), .next(nil), .next(4), .completed])
    }

    @Test func mapErrorAndCastError() {
        let mapped = Recorder<Int, TestError>()
        mapped.start(Signal<Int, TestError>.fail(TestError(code: 1)) |> mapError { TestError(code: $0.code + 1) })
        #expect(mapped.events == [.error(TestError(code: 2))])

        let cast = Recorder<Int, TestError>()
        cast.start(values([5]) |> castError(TestError.self))
        #expect(cast.events == [.next(5), .completed])
    }

    @Test func distinctUntilChangedBothForms() {
        let plain = Recorder<Int, NoError>()
        plain.start(values([1, 1, 2, 2, 1]) |> distinctUntilChanged)
        #expect(plain.values == [1, 2, 1])

        let custom = Recorder<String, NoError>()
        custom.start(values(["a", "A", "b"]) |> distinctUntilChanged(isEqual: { $0.lowercased() == $1.lowercased() }))
        #expect(custom.values == ["a", "b"])
    }

    @Test func errorsAndCompletionPassThroughMapping() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(Signal<Int, TestError>.fail(TestError(code: 4)) |> map { $0 + 1 } |> filter { _ in true })
        #expect(recorder.events == [.error(TestError(code: 4))])
    }

    @Test func disposingTheResultDisposesTheSource() {
        let source = CountingDisposable()
        let subscription = (Signal<Int, NoError> { _ in source } |> map { $0 }).start()
        subscription.dispose()
        #expect(source.count.value == 1)
    }
}

/// `map |> filter` runs as one stage: one subscriber per subscription, which a server holding many
/// subscriptions notices in its memory. Nothing else may differ from two stages.
@Suite struct MapFilterFusionTests {
    /// How many subscribers stand between a chain's source and the caller's callbacks: the forwarding
    /// subscribers the source's subscriber reaches through their targets.
    static func stagesBelow(_ subscriber: Subscriber<Int, NoError>?) -> Int {
        var count = 0
        var current = subscriber
        while let forwarding = current as? OperatorSubscriber<ForwardingTerminals<Int, Int, NoError>> {
            count += 1
            current = forwarding.stage.target
        }
        #expect(current is OperatorSubscriber<CallbacksOnly<Int, NoError>>, "the chain ends at the callbacks")
        return count
    }

    @Test func mapThenFilterSubscribesOnceToItsUpstream() {
        // Under another operator (`take`'s subscriber is one), the fused stage has a subscriber of its own.
        let captured = CapturedSubscriber<Int, NoError>()
        let subscription = (captured.signal() |> map { $0 * 10 } |> filter { $0 > 10 } |> take(5)).start()
        #expect(Self.stagesBelow(captured.subscriber) == 2, "the upstream sees one fused stage")
        subscription.dispose()

        // Every other order keeps its stages.
        _ = (captured.signal() |> filter { $0 > 1 } |> map { $0 * 10 } |> take(5)).start()
        #expect(Self.stagesBelow(captured.subscriber) == 3)
        _ = (captured.signal() |> map { $0 * 10 } |> take(5)).start()
        #expect(Self.stagesBelow(captured.subscriber) == 2)
    }

    /// A stage under another operator keeps its closures in its value callback: ending the subscription
    /// releases them, even when the source keeps its subscriber afterwards (as one that stores it and
    /// returns the empty disposable does). Found by a probe; the stage's subscriber held them until its
    /// source let go of it.
    @Test(arguments: ["complete", "dispose", "take(1)"])
    func aStageUnderAnotherOperatorReleasesItsClosuresWhenTheSubscriptionEnds(how: String) {
        let tracker = LifetimeTracker()
        let captured = CapturedSubscriber<Int, NoError>()
        let subscription: Disposable = {
            let inTransform = tracker.make()
            let inPredicate = tracker.make()
            let inSecondPredicate = tracker.make()
            let signal =
                captured.signal()
                |> map { [inTransform] in $0 + (inTransform.tracker.made.value > 0 ? 1 : 0) }
                |> filter { [inPredicate] in $0 > 0 && inPredicate.tracker.made.value > 0 }
                |> filter { [inSecondPredicate] in $0 > 0 && inSecondPredicate.tracker.made.value > 0 }
            return (how == "take(1)" ? signal |> take(1) : signal).start()
        }()
        #expect(tracker.live.value == 3)
        switch how {
        case "complete": captured.subscriber?.putCompletion()
        case "dispose": subscription.dispose()
        default: captured.subscriber?.putNext(1)
        }
        #expect(tracker.live.value == 0, "a stage's closures outlived the subscription")
        withExtendedLifetime(captured.subscriber) {}
    }

    /// `start` of a `map`, `filter` or fused signal makes one subscriber for the stage and the callbacks.
    @Test(arguments: ["map", "filter", "map |> filter"])
    func startingAStageMakesOneSubscriber(stage: String) {
        let captured = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        let signal: Signal<Int, NoError> =
            switch stage {
            case "map": captured.signal() |> map { $0 * 10 }
            case "filter": captured.signal() |> filter { $0 != 2 }
            default: captured.signal() |> map { $0 * 10 } |> filter { $0 != 20 }
            }
        let subscription = signal.start(
            next: { recorder.append(.next($0)) }, error: { _ in }, completed: { recorder.append(.completed) })
        #expect(type(of: captured.subscriber!) == OperatorSubscriber<CallbacksOnly<Int, NoError>>.self)
        #expect(captured.subscriber === (subscription as AnyObject), "the upstream's subscriber is the disposable")
        for value in 1...3 { captured.subscriber?.putNext(value) }
        captured.subscriber?.putCompletion()
        let expected: [Int] = stage == "filter" ? [1, 3] : (stage == "map" ? [10, 20, 30] : [10, 30])
        #expect(recorder.events == expected.map { .next($0) } + [.completed])
    }

    /// A chain built for one subscription, as a server builds one per request, keeps nothing of the
    /// chain once it has started: the subscription holds the closures, not the stages and their
    /// upstream signal.
    @Test(arguments: ["map", "filter", "map |> filter"])
    func aStartedChainBuiltForOneSubscriptionIsFreed(stage: String) {
        weak var upstream: Signal<Int, NoError>?
        let subscription: Disposable = {
            let source = Signal<Int, NoError>.never()
            upstream = source
            let signal: Signal<Int, NoError> =
                switch stage {
                case "map": source |> map { $0 + 1 }
                case "filter": source |> filter { $0 > 0 }
                default: source |> map { $0 + 1 } |> filter { $0 > 0 }
                }
            return signal.start(next: { _ in })
        }()
        withExtendedLifetime(subscription) {
            #expect(upstream == nil, "the started chain still holds its upstream signal")
        }
        subscription.dispose()
    }

    /// Disposing a started chain releases the callbacks and, once the signal is gone, the stage's
    /// closures too, with nothing left holding them.
    @Test func disposingAStartedStageReleasesEveryClosure() {
        let tracker = LifetimeTracker()
        let subscription: Disposable = {
            let inTransform = tracker.make()
            let inPredicate = tracker.make()
            let inCallback = tracker.make()
            let signal =
                Signal<Int, NoError>.never()
                |> map { [inTransform] in $0 + (inTransform === inPredicate ? 1 : 0) }
                |> filter { [inPredicate] in $0 > 0 && inPredicate.tracker.made.value > 0 }
            return signal.start(next: { [inCallback] _ in _ = inCallback })
        }()
        #expect(tracker.live.value == 3)
        subscription.dispose()
        #expect(tracker.live.value == 0)
    }

    /// The filter's predicate ends the subscription: the value does not reach the callback, as it
    /// would not have reached a separate subscriber.
    @Test func endingTheSubscriptionInsideThePredicateDropsTheValue() {
        let captured = CapturedSubscriber<Int, NoError>()
        let log = LockedState<[String]>([])
        for signal in [
            captured.signal() |> map { $0 }
                |> filter { value in
                    if value == 1 { captured.subscriber?.putCompletion() }
                    return true
                },
            captured.signal()
                |> filter { value in
                    if value == 1 { captured.subscriber?.putCompletion() }
                    return true
                },
        ] {
            log.withLock { $0 = [] }
            _ = signal.start(
                next: { value in log.withLock { $0.append("next \(value)") } },
                completed: { log.withLock { $0.append("completed") } })
            captured.subscriber?.putNext(0)
            captured.subscriber?.putNext(1)
            #expect(log.withLock { $0 } == ["next 0", "completed"])
        }
    }

    @Test func aFusedStageDeliversWhatTwoStagesDid() {
        let fused = Recorder<String, NoError>()
        fused.start(values([1, 2, 3, 4, 5]) |> map { $0 * 3 } |> filter { $0 % 2 == 1 } |> map { "\($0)" })
        #expect(fused.events == [.next("3"), .next("9"), .next("15"), .completed])

        // A fused stage followed by another filter: the second filter is a stage of its own.
        let twice = Recorder<Int, NoError>()
        twice.start(values([1, 2, 3, 4, 5, 6]) |> map { $0 + 1 } |> filter { $0 % 2 == 0 } |> filter { $0 > 2 })
        #expect(twice.values == [4, 6])

        // Optional values: a filtered-out value is not confused with a value that is nil.
        let optionals = Recorder<Int?, NoError>()
        optionals.start(values([1, 2, 3]) |> map { $0 == 2 ? nil : $0 } |> filter { _ in true })
        #expect(optionals.values == [1, nil, 3])
    }

    @Test func aFusedStagePassesErrorsAndCompletionAndDisposesItsSource() {
        let failed = Recorder<Int, TestError>()
        failed.start(Signal<Int, TestError>.fail(TestError(code: 9)) |> map { $0 + 1 } |> filter { _ in true })
        #expect(failed.events == [.error(TestError(code: 9))])

        let source = CountingDisposable()
        let subscription = (Signal<Int, NoError> { _ in source } |> map { $0 } |> filter { _ in true }).start()
        subscription.dispose()
        #expect(source.count.value == 1)
    }

    @Test func endingTheSubscriptionInsideTheTransformSkipsTheFilter() {
        // With two stages, a `map` closure that ends the subscription keeps the `filter` closure from
        // running for that value; one fused stage must behave the same.
        let captured = CapturedSubscriber<Int, NoError>()
        let log = LockedState<[String]>([])
        let completing: (Signal<Int, NoError>) -> Signal<Int, NoError> = map { value in
            if value == 1 { captured.subscriber?.putCompletion() }
            return value
        }
        let logging: (Signal<Int, NoError>) -> Signal<Int, NoError> = filter { value in
            log.withLock { $0.append("filter \(value)") }
            return true
        }
        let fused = captured.signal() |> completing |> logging
        _ = fused.start(
            next: { value in log.withLock { $0.append("next \(value)") } },
            completed: { log.withLock { $0.append("completed") } })
        captured.subscriber?.putNext(0)
        captured.subscriber?.putNext(1)
        #expect(log.withLock { $0 } == ["filter 0", "next 0", "completed"])
    }

    @Test func disposingInsideTheTransformDropsTheValue() {
        // Disposed while the fused stage maps a value: neither the filter nor the subscriber sees it.
        let pipe = ValuePipe<Int>()
        let holder = MetaDisposable()
        let recorder = Recorder<Int, NoError>()
        let disposingOnTwo: (Signal<Int, NoError>) -> Signal<Int, NoError> = map { value in
            if value == 2 { holder.dispose() }
            return value
        }
        let fused: Signal<Int, NoError> = pipe.signal() |> disposingOnTwo |> filter { _ in true }
        holder.set(fused.start(next: { recorder.append(.next($0)) }))
        pipe.putNext(1)
        pipe.putNext(2)
        pipe.putNext(3)
        #expect(recorder.values == [1])
    }
}

@Suite struct TakeTests {
    @Test func takeCompletesAndDisposesTheSource() {
        let source = CountingDisposable()
        let captured = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(captured.signal(disposable: source) |> take(2))
        for value in 1...4 {
            captured.subscriber?.putNext(value)
        }
        #expect(recorder.events == [.next(1), .next(2), .completed])
        #expect(source.count.value == 1)
    }

    @Test func takeZeroCompletesWithoutStarting() {
        let starts = Counter()
        let recorder = Recorder<Int, NoError>()
        recorder.start(
            Signal<Int, NoError> { _ in
                starts.increment(); return EmptyDisposable
            } |> take(0))
        #expect(recorder.events == [.completed])
        #expect(starts.value == 0)
    }

    @Test func takeUntil() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(
            values([1, 2, 3, 4])
                |> take(until: { value in
                    SignalTakeAction(passthrough: value != 3, complete: value == 3)
                }))
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test func lastSendsTheFinalValueOrNil() {
        let recorder = Recorder<Int?, NoError>()
        recorder.start(last(signal: values([1, 2, 3])))
        #expect(recorder.events == [.next(3), .completed])
        let empty = Recorder<Int?, NoError>()
        empty.start(last(signal: values([Int]())))
        #expect(empty.events == [.next(nil), .completed])
    }

    @Test func takeLastSendsTheFinalValueIfThereWasOne() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(takeLast(values([1, 2, 3], TestError.self)))
        #expect(recorder.events == [.next(3), .completed])
        let empty = Recorder<Int, TestError>()
        empty.start(takeLast(values([Int](), TestError.self)))
        #expect(empty.events == [.completed])
        let failing = Recorder<Int, TestError>()
        failing.start(takeLast(values([1], TestError.self) |> then(.fail(TestError(code: 2)))))
        #expect(failing.events == [.error(TestError(code: 2))])
    }

    /// The original's `debug_measureTimeToFirstEvent` printed for a signal's first subscription only;
    /// here each subscription prints once, at its first value, and the values pass unchanged.
    @Test func measureTimeToFirstEventPrintsOncePerSubscription() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let measured = values([1, 2, 3]) |> debug_measureTimeToFirstEvent(label: "feed")
            let received = LockedState<[Int]>([])
            _ = measured.start(next: { value in received.withLock { $0.append(value) } })
            _ = measured.start(next: { value in received.withLock { $0.append(value) } })
            _ = (Signal<Int, NoError>.complete() |> debug_measureTimeToFirstEvent(label: "empty")).start()
            precondition(received.withLock { $0 } == [1, 2, 3, 1, 2, 3], "the values did not pass unchanged")
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasPrefix("measureTimeToFirstEvent(feed): ") && $0.hasSuffix(" ms") })
    }

    /// The thread that admits take's last value must not complete while another thread is still
    /// delivering an earlier one: that value would arrive after the completion and be dropped.
    @Test func takeCompletesOnlyAfterEveryAdmittedValueIsDelivered() async {
        let pipe = ValuePipe<Int>()
        let log = LockedState<[String]>([])
        let firstEntered = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let firstDone = DispatchSemaphore(value: 0)
        let subscription = (pipe.signal() |> take(2)).start(
            next: { value in
                log.withLock { $0.append("next \(value)") }
                if value == 1 {
                    firstEntered.signal()
                    _ = blockingWait(releaseFirst)
                    log.withLock { $0.append("returned 1") }
                }
            },
            completed: { log.withLock { $0.append("completed") } })
        DispatchQueue.global().async {
            pipe.putNext(1)
            firstDone.signal()
        }
        #expect(await wait(firstEntered))
        pipe.putNext(2)
        let whileTheFirstIsDelivered = log.withLock { $0 }
        releaseFirst.signal()
        #expect(await wait(firstDone))
        #expect(whileTheFirstIsDelivered == ["next 1", "next 2"])
        #expect(log.withLock { $0 } == ["next 1", "next 2", "returned 1", "completed"])
        subscription.dispose()
    }

    @Test func takeFromManyThreadsPassesExactlyCount() async {
        let pipe = ValuePipe<Int>()
        let recorder = Recorder<Int, NoError>()
        recorder.start(pipe.signal() |> take(100))
        await concurrently(4) { thread in
            for value in 0..<1_000 {
                pipe.putNext(thread * 1_000 + value)
            }
        }
        // Exactly 100 values pass, and the completion comes after all of them, even though the thread
        // that admits the last one may finish before another thread delivers an earlier one.
        #expect(recorder.values.count == 100)
        #expect(recorder.events.filter { $0 == .completed }.count == 1)
        #expect(recorder.events.last == .completed)
    }
}

@Suite struct SideEffectTests {
    @Test func callbacksRunInOrderAroundEvents() {
        let log = LockedState<[String]>([])
        @Sendable func note(_ entry: String) { log.withLock { $0.append(entry) } }
        let signal =
            values([1])
            |> beforeStarted { note("started") }
            |> beforeNext { note("before \($0)") }
            |> afterNext { note("after \($0)") }
            |> beforeCompleted { note("before completed") }
            |> afterCompleted { note("after completed") }
            |> afterDisposed { note("disposed") }
        _ = signal.start(next: { note("next \($0)") }, completed: { note("completed") })
        #expect(
            log.withLock { $0 } == [
                "started", "before 1", "next 1", "after 1", "before completed", "completed", "after completed", "disposed",
            ])
    }

    @Test func afterDisposedRunsOnDispose() {
        let disposed = Counter()
        let subscription = (Signal<Int, NoError>.never() |> afterDisposed { disposed.increment() }).start()
        #expect(disposed.value == 0)
        subscription.dispose()
        subscription.dispose()
        #expect(disposed.value == 1)
    }

    /// As in the original: the source's subscription is disposed first, then `f` runs, so `f` may
    /// release what the source's disposal still uses. The two were members of a set, disposed in an
    /// order that depended on their addresses and the process's hash seed.
    @Test func afterDisposedRunsAfterTheSourceIsDisposed() {
        let order = LockedState<[String]>([])
        let subscriptions = (0..<200).map { index in
            (Signal<Int, NoError> { _ in
                ActionDisposable { order.withLock { $0.append("source \(index)") } }
            } |> afterDisposed { order.withLock { $0.append("after \(index)") } }).start()
        }
        for subscription in subscriptions { subscription.dispose() }
        #expect(order.withLock { $0 } == (0..<200).flatMap { ["source \($0)", "after \($0)"] })
    }

    /// The same when the source ends by itself, later: its subscriber disposes the source's disposable
    /// only once the terminal event has been delivered, and `f` ran before that.
    @Test func afterDisposedRunsAfterTheSourceIsDisposedWhenItEndsByItself() {
        let order = LockedState<[String]>([])
        let held = LockedState<Subscriber<Int, NoError>?>(nil)
        let source = Signal<Int, NoError> { subscriber in
            held.withLock { $0 = subscriber }
            return ActionDisposable { order.withLock { $0.append("source disposed") } }
        }
        _ = (source |> afterDisposed { order.withLock { $0.append("after") } })
            .start(completed: { order.withLock { $0.append("completed") } })
        held.withLock { $0 }?.putCompletion()
        held.withLock { $0 = nil }
        #expect(order.withLock { $0 } == ["completed", "source disposed", "after"])
    }

    /// The same below another operator (a probe against the original found `f` first there): the
    /// operator's subscriber is disposed by the teardown while it sends its completion, and disposes
    /// its own source then.
    @Test func afterDisposedBelowAnOperatorRunsAfterTheSourceIsDisposed() {
        for ending in ["completion", "error"] {
            let order = LockedState<[String]>([])
            let held = LockedState<Subscriber<Int, TestError>?>(nil)
            let source = Signal<Int, TestError> { subscriber in
                held.withLock { $0 = subscriber }
                return ActionDisposable { order.withLock { $0.append("source disposed") } }
            }
            _ = (source |> map { $0 + 1 } |> beforeNext { _ in } |> afterDisposed { order.withLock { $0.append("after") } })
                .start(error: { _ in order.withLock { $0.append("ended") } }, completed: { order.withLock { $0.append("ended") } })
            let subscriber = held.withLock { $0 }
            if ending == "completion" {
                subscriber?.putCompletion()
            } else {
                subscriber?.putError(TestError())
            }
            held.withLock { $0 = nil }
            #expect(order.withLock { $0 } == ["ended", "source disposed", "after"], "\(ending)")
        }
    }

    @Test func withStatePassesOneStatePerSubscription() {
        final class State: Sendable {
            let seen = Counter()
            let finished = Flag()
            let disposed = Flag()
        }
        let made = LockedState<[State]>([])
        let signal = withState(
            values([1, 2]),
            {
                let state = State()
                made.withLock { $0.append(state) }
                return state
            },
            next: { (_: Int, state: State) in
                state.seen.increment()
            },
            completed: { (state: State) in
                state.finished.set()
            },
            disposed: { (state: State) in
                state.disposed.set()
            })
        _ = signal.start()
        let failing = withState(
            Signal<Int, TestError>.fail(TestError()), { Counter() },
            error: { (_: TestError, counter: Counter) in
                counter.increment()
            })
        let errors = Recorder<Int, TestError>()
        errors.start(failing)
        let states = made.withLock { $0 }
        #expect(states.count == 1)
        #expect(states[0].seen.value == 2)
        #expect(states[0].finished.isSet)
        #expect(states[0].disposed.isSet)
        #expect(errors.events == [.error(TestError())])
    }
}

@Suite struct MaterializeTests {
    @Test func roundTripKeepsEvents() {
        let events = LockedState<[String]>([])
        _ = dematerialize(signal: values([1, 2], TestError.self)).start(next: { event in
            let text: String
            switch event {
            case .Next(let value): text = "next \(value)"
            case .Error: text = "error"
            case .Completion: text = "completion"
            }
            events.withLock { $0.append(text) }
        })
        #expect(events.withLock { $0 } == ["next 1", "next 2", "completion"])

        let failing = Recorder<Int, TestError>()
        failing.start(materialize(signal: dematerialize(signal: Signal<Int, TestError>.fail(TestError(code: 5)))))
        #expect(failing.events == [.error(TestError(code: 5))])
        let succeeding = Recorder<Int, TestError>()
        succeeding.start(values([3], TestError.self) |> dematerialize |> materialize)
        #expect(succeeding.events == [.next(3), .completed])
    }
}
