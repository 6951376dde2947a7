import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@Suite struct AsyncTransformOrderTests {
    @Test func serialRunsOneAtATimeInInputOrder() async {
        let meter = ConcurrencyMeter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync { value in
                    meter.enter()
                    defer { meter.leave() }
                    for _ in 0..<(value % 3) { await Task.yield() }
                    return value * 10
                })
        for value in 0..<200 { pipe.putNext(value) }
        await eventually { recording.valueList.count == 200 }
        #expect(recording.valueList == (0..<200).map { $0 * 10 })
        #expect(meter.peak == 1)
        #expect(recording.overlap.value == 0)
        subscription.dispose()
    }

    @Test func serialKeepsOnlyTheNewestWaitingValueWhenAskedTo() async {
        let gate = Gate()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.serial(buffering: .bufferingNewest(1))) { value in
                    if value == 1 { await gate.wait() }
                    return value
                })
        pipe.putNext(1)
        await eventually { gate.arrivals.value == 1 }
        for value in 2...5 { pipe.putNext(value) }  // 2, 3 and 4 are dropped while 1 runs
        gate.open()
        await eventually { recording.valueList.count == 2 }
        #expect(recording.valueList == [1, 5])
        subscription.dispose()
    }

    @Test func serialKeepsTheOldestWaitingValuesWhenAskedTo() async {
        let gate = Gate()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.serial(buffering: .bufferingOldest(2))) { value in
                    if value == 1 { await gate.wait() }
                    return value
                })
        pipe.putNext(1)
        await eventually { gate.arrivals.value == 1 }
        for value in 2...5 { pipe.putNext(value) }
        gate.open()
        await eventually { recording.valueList.count == 3 }
        #expect(recording.valueList == [1, 2, 3])
        subscription.dispose()
    }

    @Test func latestCancelsTheRunningTransform() async {
        let firstGate = Gate()
        let cancelled = Counter()
        let pipe = ValuePipe<String>()
        let recording = Recording<String, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.latest) { text in
                    if text == "a" {
                        do {
                            try await firstGate.waitOrCancel()
                        } catch {
                            cancelled.increment()
                        }
                    }
                    return text.uppercased()
                })
        pipe.putNext("a")
        await eventually { firstGate.arrivals.value == 1 }
        pipe.putNext("b")
        await eventually { recording.valueList == ["B"] }
        await eventually { cancelled.value == 1 }
        #expect(recording.valueList == ["B"])  // "A" was computed after the cancellation, and dropped
        subscription.dispose()
    }

    /// The error a cancelled `.latest` transform throws is dropped with its result, as its documentation
    /// says: the signal goes on with the newer value's transform.
    @Test func latestDropsTheErrorOfACancelledTransform() async {
        let started = Counter()
        let pipe = ValuePipe<String>()
        let recording = Recording<String, TestError>()
        let subscription = recording.start(
            pipe.signal() |> castError(TestError.self)
                |> mapAsync(.latest) { (text: String) throws(TestError) -> String in
                    if text == "a" {
                        started.increment()
                        do {
                            try await untilCancelled()
                        } catch {
                            throw TestError(code: 1)
                        }
                    }
                    return text.uppercased()
                })
        pipe.putNext("a")
        await eventually { started.value == 1 }
        pipe.putNext("b")
        // "b" starts only once the cancelled transform of "a" has thrown, so its error has been handled.
        await eventually { recording.valueList == ["B"] || recording.hasEnded }
        #expect(recording.failure == nil)
        #expect(recording.valueList == ["B"])
        pipe.putNext("c")
        await eventually { recording.valueList == ["B", "C"] || recording.hasEnded }
        #expect(recording.valueList == ["B", "C"])
        #expect(recording.failure == nil)
        subscription.dispose()
    }

    @Test func concurrentNeverExceedsItsWidthAndKeepsInputOrder() async {
        let meter = ConcurrencyMeter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 3, ordered: true)) { value in
                    meter.enter()
                    defer { meter.leave() }
                    for _ in 0..<((100 - value) % 7) { await Task.yield() }
                    return value
                })
        for value in 0..<100 { pipe.putNext(value) }
        await eventually { recording.valueList.count == 100 }
        #expect(recording.valueList == Array(0..<100))
        #expect(meter.peak <= 3)
        #expect(recording.overlap.value == 0)
        subscription.dispose()
    }

    @Test func concurrentReachesItsWidth() async {
        let gate = Gate()
        let meter = ConcurrencyMeter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 3, ordered: false)) { value in
                    meter.enter()
                    await gate.wait()
                    meter.leave()
                    return value
                })
        for value in 0..<10 { pipe.putNext(value) }
        await eventually { gate.arrivals.value == 3 }
        #expect(meter.current == 3)
        gate.open()
        await eventually { recording.valueList.count == 10 }
        #expect(meter.peak == 3)
        #expect(Set(recording.valueList) == Set(0..<10))
        subscription.dispose()
    }

    @Test func unorderedSendsEachResultWhenItsTransformFinishes() async {
        let gates = [Gate(), Gate()]
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 2, ordered: false)) { value in
                    await gates[value].wait()
                    return value
                })
        pipe.putNext(0)
        pipe.putNext(1)
        await eventually { gates[0].arrivals.value == 1 && gates[1].arrivals.value == 1 }
        gates[1].open()
        await eventually { recording.valueList == [1] }
        gates[0].open()
        await eventually { recording.valueList == [1, 0] }
        subscription.dispose()
    }

    @Test func orderedHoldsAFastResultUntilTheSlowerOnesBeforeIt() async {
        let gates = [Gate(), Gate()]
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 2, ordered: true)) { value in
                    await gates[value].wait()
                    return value
                })
        pipe.putNext(0)
        pipe.putNext(1)
        await eventually { gates[0].arrivals.value == 1 && gates[1].arrivals.value == 1 }
        gates[1].open()
        await Task.yield()
        #expect(recording.valueList == [])
        gates[0].open()
        await eventually { recording.valueList == [0, 1] }
        subscription.dispose()
    }

    @Test func filterAndCompactMapLeaveValuesOutWithoutHoldingOthersBack() async {
        let numbers = Signal<Int, NoError> { subscriber in
            for value in 0..<20 { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let even = Recording<Int, NoError>()
        let halves = Recording<Int, NoError>()
        let first = even.start(numbers |> filterAsync(.concurrent(max: 4, ordered: true)) { value in value % 2 == 0 })
        let second = halves.start(numbers |> compactMapAsync { value in value % 2 == 0 ? value / 2 : nil })
        await eventually { even.isCompleted && halves.isCompleted }
        #expect(even.valueList == Array(stride(from: 0, to: 20, by: 2)))
        #expect(halves.valueList == Array(0..<10))
        first.dispose()
        second.dispose()
    }
}

@Suite struct AsyncTransformBackpressureTests {
    @Test func aStuckFirstValueHoldsBackLaterValuesInsteadOfPilingUpResults() async {
        let gate = Gate()
        let started = Counter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 2, ordered: true, buffering: .bufferingOldest(1))) { value in
                    started.increment()
                    if value == 0 { await gate.wait() }
                    return value
                })
        pipe.putNext(0)
        await eventually { gate.arrivals.value == 1 }
        for value in 1...20 {
            // 1 runs, then its result waits for 0's; 2 waits for room; the rest are dropped.
            pipe.putNext(value)
            for _ in 0..<20 { await Task.yield() }
        }
        gate.open()
        await eventually { recording.valueList.count == 3 }
        await Task.yield()
        #expect(recording.valueList == [0, 1, 2])
        #expect(started.value == 3)
        subscription.dispose()
    }

    @Test func latestRunsOneTransformAtATimeEvenWhenOneIgnoresCancellation() async {
        let gate = Gate()
        let meter = ConcurrencyMeter()
        let started = Atomic<[String]>(value: [])
        let pipe = ValuePipe<String>()
        let recording = Recording<String, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.latest) { text in
                    meter.enter()
                    defer { meter.leave() }
                    started.modify { $0 + [text] }
                    if text == "a" { await gate.wait() }  // ignores cancellation
                    return text.uppercased()
                })
        pipe.putNext("a")
        await eventually { gate.arrivals.value == 1 }
        pipe.putNext("b")
        pipe.putNext("c")
        for _ in 0..<50 { await Task.yield() }
        #expect(started.with { $0 } == ["a"])  // c waits for a to return; b was replaced by c
        gate.open()
        await eventually { recording.valueList == ["C"] }
        #expect(started.with { $0 } == ["a", "c"])
        #expect(meter.peak == 1)
        subscription.dispose()
    }

    @Test func aFunctionCanBePassedAlone() async throws {
        @Sendable func double(_ value: Int) async throws(TestError) -> Int { value * 2 }
        @Sendable func isEven(_ value: Int) async -> Bool { value % 2 == 0 }
        let numbers = Signal<Int, TestError>.single(2)
        #expect(try await (numbers |> mapAsync(double)).get() == 4)
        #expect(try await (numbers |> filterAsync(isEven)).get() == 2)
        #expect(try await (numbers |> compactMapAsync({ value in value > 1 ? value : nil })).get() == 2)
    }
}

/// Tests whose consumer blocks its thread, which is a thread of the task pool: a slow synchronous consumer
/// is what they are about. Each block is released by the test's own task, which needs only the pool's
/// other threads, and such tests take turns with every other test that blocks the pool on purpose
/// (`takingTurnsToBlockThePool`): so they never hold every thread of the pool between them.
@Suite(.serialized) struct AsyncTransformSlowConsumerTests {
    @Test func aTransformErrorOvertakesResultsTheConsumerHasNotTakenYet() async {
        await takingTurnsToBlockThePool {
            let gates = [Gate(), Gate(), Gate()]
            let finished = Counter()
            let inCallback = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let values = Atomic<[Int]>(value: [])
            let failure = Atomic<TestError?>(value: nil)
            let upstreamDisposed = Atomic<Bool>(value: false)
            let pipe = ValuePipe<Int>()
            let subscription =
                (pipe.signal() |> afterDisposed { _ = upstreamDisposed.swap(true) } |> castError(TestError.self)
                |> mapAsync(.concurrent(max: 3, ordered: false)) { (value: Int) throws(TestError) -> Int in
                    await gates[value].wait()
                    defer { finished.increment() }
                    if value == 2 { throw TestError(code: 2) }
                    return value
                }).start(
                    next: { value in
                        values.modify { $0 + [value] }
                        if value == 0 {
                            inCallback.signal()
                            _ = release.wait(timeout: .now() + 120)  // blocking-check: the slow consumer under test
                        }
                    },
                    error: { error in _ = failure.swap(error) })
            for value in 0..<3 { pipe.putNext(value) }
            gates[0].open()
            #expect(await wait(inCallback))  // the consumer is busy with 0
            gates[1].open()
            await eventually { finished.value == 2 }  // 1 waits for the consumer
            gates[2].open()
            // 2 failed, and the operator has taken the error: it disposes the upstream after that. (The
            // transform's `defer` runs before the operator records its result, so `finished` alone
            // could let the consumer go first on a machine with a thread to spare.)
            await eventually { upstreamDisposed.with { $0 } }
            release.signal()
            await eventually { failure.with { $0 } != nil }
            #expect(values.with { $0 } == [0])
            #expect(failure.with { $0 } == TestError(code: 2))
            subscription.dispose()
        }
    }

    @Test(arguments: [AsyncTransformPolicy.serial, .concurrent(max: 1, ordered: true), .concurrent(max: 3, ordered: true)])
    func aValueArrivingDuringADeliveryWaitsBehindTheWaitingOnes(policy: AsyncTransformPolicy) async {
        await takingTurnsToBlockThePool {
            let inCallback = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let received = Atomic<[Int]>(value: [])
            let pipe = ValuePipe<Int>()
            let subscription = (pipe.signal() |> mapAsync(policy) { value in value }).start(next: { value in
                received.modify { $0 + [value] }
                if value == 0 {
                    inCallback.signal()
                    _ = release.wait(timeout: .now() + 120)  // blocking-check: the slow consumer under test
                }
            })
            for value in 0...3 { pipe.putNext(value) }  // 3 at least waits for a transform
            #expect(await wait(inCallback))  // the consumer is busy with 0
            for value in 4...6 { pipe.putNext(value) }  // behind the waiting ones, not before
            release.signal()
            await eventually { received.with { $0 }.count == 7 }
            #expect(received.with { $0 } == Array(0...6))
            subscription.dispose()
        }
    }

    @Test func latestHoldsBackNewValuesWhileTheConsumerIsBusy() async {
        await takingTurnsToBlockThePool {
            let inCallback = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let finished = Counter()
            let received = Atomic<[Int]>(value: [])
            let pipe = ValuePipe<Int>()
            let subscription =
                (pipe.signal()
                |> mapAsync(.latest) { value in
                    defer { finished.increment() }
                    return value
                }).start(next: { value in
                    received.modify { $0 + [value] }
                    if value == 0 {
                        inCallback.signal()
                        _ = release.wait(timeout: .now() + 120)  // blocking-check: the slow consumer under test
                    }
                })
            pipe.putNext(0)
            #expect(await wait(inCallback))  // the consumer is busy with 0
            pipe.putNext(1)
            await eventually { finished.value == 2 }  // 1 has been transformed
            for value in 2...50 { pipe.putNext(value) }  // only the newest waits, untransformed
            release.signal()
            await eventually { received.with { $0 }.last == 50 }
            // 1's result waits for the consumer, and then comes 50. (The transform's `defer` runs before
            // the operator records its result: on a machine with a thread to spare, 2 can arrive in
            // between and supersede 1, and then one of 1 or 2 waits instead.) Never more than one
            // waiting value, never the values in between transformed one by one.
            let seen = received.with { $0 }
            #expect(seen.first == 0 && seen.last == 50 && seen.count <= 3, "\(seen)")
            #expect(finished.value <= 4)
            subscription.dispose()
        }
    }
}

@Suite struct AsyncTransformLifetimeTests {
    @Test func completionWaitsForTheLastTransform() async {
        let gate = Gate()
        let pipe = ValuePipe<Int>()
        let source = Signal<Int, NoError> { subscriber in
            let inner = pipe.signal().start(next: { subscriber.putNext($0) }, completed: { subscriber.putCompletion() })
            return inner
        }
        let ending = ValuePipe<Void>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            Signal<Int, NoError> { subscriber in
                let values = source.start(next: { subscriber.putNext($0) })
                let end = ending.signal().start(next: { subscriber.putCompletion() })
                return ActionDisposable {
                    values.dispose()
                    end.dispose()
                }
            }
                |> mapAsync { value in
                    await gate.wait()
                    return value
                })
        pipe.putNext(1)
        await eventually { gate.arrivals.value == 1 }
        ending.putNext(())  // the upstream completes while the transform still runs
        await Task.yield()
        #expect(!recording.isCompleted)
        gate.open()
        await eventually { recording.isCompleted }
        #expect(recording.valueList == [1])
        subscription.dispose()
    }

    @Test func aThrowingTransformFailsTheResultAndCancelsTheOthers() async {
        let cancelled = Counter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, TestError>()
        let subscription = recording.start(
            pipe.signal() |> castError(TestError.self)
                |> mapAsync(.concurrent(max: 2, ordered: false)) {
                    (value: Int) throws(TestError) -> Int in
                    if value == 0 {
                        do {
                            try await untilCancelled()
                        } catch {
                            cancelled.increment()
                        }
                        return value
                    }
                    throw TestError(code: value)
                })
        pipe.putNext(0)
        pipe.putNext(7)
        await eventually { recording.failure != nil }
        #expect(recording.failure == TestError(code: 7))
        await eventually { cancelled.value == 1 }
        #expect(recording.valueList == [])
        subscription.dispose()
    }

    @Test func anUpstreamFailureCancelsTheRunningTransforms() async {
        let cancelled = Counter()
        let started = Counter()
        let source = Signal<Int, TestError> { subscriber in
            subscriber.putNext(1)
            return EmptyDisposable
        }
        let failing = ValuePipe<Void>()
        let recording = Recording<Int, TestError>()
        let subscription = recording.start(
            Signal<Int, TestError> { subscriber in
                let values = source.start(next: { subscriber.putNext($0) })
                let failure = failing.signal().start(next: { subscriber.putError(TestError(code: 9)) })
                return ActionDisposable {
                    values.dispose()
                    failure.dispose()
                }
            }
                |> mapAsync { (value: Int) throws(TestError) -> Int in
                    started.increment()
                    do {
                        try await untilCancelled()
                    } catch {
                        cancelled.increment()
                    }
                    return value
                })
        await eventually { started.value == 1 }
        failing.putNext(())
        await eventually { recording.failure == TestError(code: 9) }
        await eventually { cancelled.value == 1 }
        #expect(recording.valueList == [])
        subscription.dispose()
    }

    @Test(arguments: [AsyncTransformPolicy.serial, .latest, .concurrent(max: 4, ordered: true)])
    func disposingCancelsTheTransformsAndDeliversNothingMore(policy: AsyncTransformPolicy) async {
        let cancelled = Counter()
        let started = Counter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(policy) { value in
                    started.increment()
                    do {
                        try await untilCancelled()
                    } catch {
                        cancelled.increment()
                    }
                    return value
                })
        pipe.putNext(1)
        await eventually { started.value == 1 }
        subscription.dispose()
        await eventually { cancelled.value == 1 }
        #expect(recording.valueList == [])
        #expect(!recording.hasEnded)
    }

    @Test func cancellingTheConsumingTaskCancelsTheRunningTransform() async {
        let started = Counter()
        let cancelled = Counter()
        let pipe = ValuePipe<Int>()
        let transformed =
            pipe.signal()
            |> mapAsync { value in
                started.increment()
                do {
                    try await untilCancelled()
                } catch {
                    cancelled.increment()
                }
                return value
            }
        let consumer = Task {
            for await _ in transformed.values {}
        }
        await eventually {
            pipe.putNext(1)  // until the loop has subscribed and a transform runs
            return started.value > 0
        }
        consumer.cancel()
        await consumer.value
        await eventually { cancelled.value == started.value }
        #expect(cancelled.value == started.value)
    }

    @Test func aTransformThatIgnoresCancellationCannotDeliverAfterDispose() async {
        let gate = Gate()
        let returned = Counter()
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 2, ordered: false)) { value in
                    await gate.wait()  // ignores cancellation
                    returned.increment()
                    return value
                })
        pipe.putNext(1)
        await eventually { gate.arrivals.value == 1 }
        subscription.dispose()
        gate.open()
        await eventually { returned.value == 1 }
        await Task.yield()
        #expect(recording.valueList == [])
    }

    @Test func aConsumerMayDisposeFromItsOwnCallback() async {
        let pipe = ValuePipe<Int>()
        let received = Atomic<[Int]>(value: [])
        let holder = MetaDisposable()
        holder.set(
            (pipe.signal() |> mapAsync { value in value }).start(next: { value in
                received.modify { $0 + [value] }
                holder.dispose()
            }))
        for value in 0..<5 { pipe.putNext(value) }
        await eventually { !received.with { $0 }.isEmpty }
        await Task.yield()
        #expect(received.with { $0 } == [0])
    }

    /// A loop inside a generator above an async operator (`restart` of a synchronous signal) runs
    /// while the operator starts, before the operator's subscription to it exists: a consumer below
    /// that has ended stops it all the same. (It ran on to the end of its source, for ever without the
    /// `take` here: the operator subscribed upstream with a subscriber linked to nothing.) The second
    /// start waits, on the test's own thread, until the consumer has ended; the loop then asks before
    /// a third. The transform waits for the second start: without that, a quick transform ended the
    /// consumer before the loop came to it, and the loop rightly never started again (one run in five).
    @Test(arguments: [AsyncTransformPolicy.serial, .serial(buffering: .bounded(1))])
    func aLoopInTheGeneratorAboveStopsWhenTheConsumerHasEnded(policy: AsyncTransformPolicy) async {
        let consumerEnded = DispatchSemaphore(value: 0)
        let secondStart = Gate()
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            let start = starts.increment()
            if start == 2 {
                secondStart.open()
                // The transform's task runs on the thread pool, which a whole suite starting at once
                // on two cores can keep busy for more than ten seconds: the wait is long, and ends
                // as soon as the consumer has.
                _ = blockingWait(consumerEnded, seconds: 120)
            }
            subscriber.putNext(start)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let received = Atomic<[Int]>(value: [])
        let subscription = await onThread {
            (restart(source) |> take(1_000)
                |> mapAsync(policy) { value in
                    await secondStart.wait()
                    return value * 10
                } |> take(1)).start(
                    next: { value in received.modify { $0 + [value] } },
                    completed: { consumerEnded.signal() })
        }
        #expect(received.with { $0 } == [10])
        #expect(starts.value == 2, "the loop ran on after the consumer had ended")
        subscription.dispose()
    }

    @Test func aSlowConsumerGetsEveryResultInOrderOneAtATime() async {
        let numbers = Signal<Int, NoError> { subscriber in
            for value in 0..<50 { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let overlap = Counter()
        let inside = Counter()
        let received = Atomic<[Int]>(value: [])
        let done = Atomic(value: false)
        let subscription = (numbers |> mapAsync(.concurrent(max: 8, ordered: false)) { value in value }).start(
            next: { value in
                if inside.increment() > 1 { overlap.increment() }
                for _ in 0..<1_000 { _ = received.with { $0.count } }  // a slow callback
                received.modify { $0 + [value] }
                inside.decrement()
            },
            completed: { _ = done.swap(true) })
        await eventually { done.with { $0 } }
        #expect(Set(received.with { $0 }) == Set(0..<50))
        #expect(received.with { $0 }.count == 50)
        #expect(overlap.value == 0)
        subscription.dispose()
    }
}

@Suite struct AsyncTransformTaskTests {
    @TaskLocal static var requestID: String?

    @Test func transformsSeeTheSubscribingTasksLocalsAndPriority() async {
        let seen = Atomic<[String]>(value: [])
        let priorities = Atomic<[TaskPriority]>(value: [])
        let numbers = Signal<Int, NoError> { subscriber in
            for value in 0..<4 { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        for policy in [AsyncTransformPolicy.serial, .latest, .concurrent(max: 2, ordered: false)] {
            let done = Atomic(value: false)
            await Task(priority: .low) {
                Self.$requestID.withValue("r-1") {
                    _ =
                        (numbers
                        |> mapAsync(policy) { value in
                            seen.modify { $0 + [Self.requestID ?? "none"] }
                            priorities.modify { $0 + [Task.currentPriority] }
                            return value
                        }).start(completed: { _ = done.swap(true) })
                }
            }.value
            await eventually { done.with { $0 } }
        }
        #expect(!seen.with { $0 }.isEmpty)
        #expect(seen.with { $0 }.allSatisfy { $0 == "r-1" })
        #expect(priorities.with { $0 }.allSatisfy { $0 == .low })
    }

    @Test func anExplicitPriorityWins() async {
        let priorities = Atomic<[TaskPriority]>(value: [])
        let done = Atomic(value: false)
        _ =
            (Signal<Int, NoError>.single(1)
            |> mapAsync(.concurrent(max: 2, ordered: true), priority: .high) { value in
                priorities.modify { $0 + [Task.currentPriority] }
                return value
            }).start(completed: { _ = done.swap(true) })
        await eventually { done.with { $0 } }
        #expect(priorities.with { $0 } == [.high])
    }
}

@Suite struct AsyncGeneratorTests {
    @Test func theBodySendsValuesThenCompletes() async throws {
        let signal = Signal<Int, TestError> { (send) throws(TestError) in
            for value in 0..<3 { send(value) }
        }
        var values: [Int] = []
        for try await value in signal.values { values.append(value) }
        #expect(values == [0, 1, 2])
    }

    @Test func aThrownErrorFailsTheSignalWithItsType() async {
        let signal = Signal<Int, TestError> { (send) throws(TestError) in
            send(1)
            throw TestError(code: 3)
        }
        let recording = Recording<Int, TestError>()
        let subscription = recording.start(signal)
        await eventually { recording.failure != nil }
        #expect(recording.valueList == [1])
        #expect(recording.failure == TestError(code: 3))
        subscription.dispose()
    }

    @Test func disposingCancelsTheBodyAndDropsWhatItSendsAfterwards() async {
        let cancelled = Atomic(value: false)
        let sentAfter = Counter()
        let started = Counter()
        let signal = Signal<Int, NoError> { send in
            started.increment()
            try? await untilCancelled()
            _ = cancelled.swap(Task.isCancelled)
            send(99)
            sentAfter.increment()
        }
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(signal)
        await eventually { started.value == 1 }
        subscription.dispose()
        await eventually { sentAfter.value == 1 }
        #expect(cancelled.with { $0 })
        #expect(recording.valueList == [])
        #expect(!recording.hasEnded)
    }

    /// A body written in main-actor code reads and writes main-actor state: it is given the sender with
    /// `sending`, so it may be isolated to an actor. Before, the compiler refused such a body (the
    /// sender is not `Sendable`).
    @Test @MainActor func aBodyIsolatedToTheMainActorChangesMainActorState() async {
        let screen = MainActorScreen()
        let signal = Signal<Int, NoError> { @MainActor send in
            for value in 1...4 {
                screen.sent.append(value)
                if value.isMultiple(of: 2) { send(value) } else { await send.waitingForRoom(value) }
            }
        }
        var values: [Int] = []
        for await value in signal.values(bufferingPolicy: .bounded(1)) { values.append(value) }
        #expect(values == [1, 2, 3, 4])
        #expect(screen.sent == [1, 2, 3, 4])
    }

    /// The same without an `await` in the body, written as the initialiser's documentation says: with
    /// `async`. (Without it Swift 6.3 refuses the closure: "crossing of an isolation boundary requires
    /// parameter and result types to conform to 'Sendable'". Making the parameter `@isolated(any)`
    /// would accept it, but refuses function values of `nonisolated(nonsending)` types that compile
    /// today; see `functionValuesOfThisModulesAsyncTypesAreTaken`.) This test compiling is most of it.
    @Test @MainActor func aBodyIsolatedToTheMainActorThatNeverAwaitsIsWrittenAsync() async {
        let screen = MainActorScreen()
        let signal = Signal<Int, NoError> { @MainActor send async in
            screen.sent.append(1)
            send(1)
            send(2)
        }
        var values: [Int] = []
        for await value in signal.values { values.append(value) }
        #expect(values == [1, 2])
        #expect(screen.sent == [1])
    }

    /// An actor builds a signal whose body hands the sender to the actor, and every value, sent after
    /// waiting for room or not, goes out from the actor's executor, as it would from the body's own code.
    ///
    /// A value sent without waiting finds room only once the loop has taken the one before (the bound is
    /// 1): the actor waits for the loop to say so first. (Without that, a loop slower than the actor, under
    /// load, ended the iteration with `.producerCouldNotWait` after one value.)
    @Test func aBodyHandsItsSenderToAnActorThatSendsFromItsExecutor() async throws {
        let taken = ValuePromise<Int>(0)
        let counter = SendingCounter(queue: Queue(name: "sending-counter"), taken: taken)
        let onQueue = Atomic<[Bool]>(value: [])
        let queue = counter.executor.queue
        let observed = await counter.counting(to: 4) |> afterNext { _ in onQueue.modify { $0 + [queue.isCurrent()] } }
        var values: [Int] = []
        for await value in observed.values(bufferingPolicy: .bounded(1)) {
            values.append(value)
            taken.set(value)
        }
        #expect(values == [1, 2, 3, 4])
        #expect(await counter.count == 4)
        // `waitingForRoom` resumes on the caller's actor and sends from there.
        #expect(onQueue.with { $0 } == [true, true, true, true])
    }

    /// Code written against the earlier signature, a body stored with a parameter that is not
    /// `sending`, still compiles and runs.
    @Test func aBodyOfTheEarlierTypeStillConverts() async throws {
        let body: @Sendable (SignalSender<Int, NoError>) async -> Void = { send in send(7) }
        #expect(try await Signal(body).get() == 7)
    }
}

/// Main-actor state that an async signal body changes.
@MainActor final class MainActorScreen {
    var sent: [Int] = []
}

/// An actor on a queue whose signals send from its own isolation.
actor SendingCounter {
    let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { self.executor.asUnownedSerialExecutor() }
    var count = 0
    /// The last value the consumer has taken: a value sent without waiting for room is sent once the
    /// one before it has been taken.
    let taken: ValuePromise<Int>

    init(queue: Queue, taken: ValuePromise<Int>) {
        self.executor = QueueExecutor(queue: queue)
        self.taken = taken
    }

    func counting(to last: Int) -> Signal<Int, NoError> {
        return Signal { [self] send in
            await self.send(upTo: last, with: send)
        }
    }

    func send(upTo last: Int, with send: sending SignalSender<Int, NoError>) async {
        while self.count < last {
            self.count += 1
            if self.count.isMultiple(of: 2) {
                let previous = self.count - 1
                _ = try? await (self.taken.get() |> filter { $0 >= previous }).get()
                send(self.count)
            } else {
                await send.waitingForRoom(self.count)
            }
        }
    }
}
