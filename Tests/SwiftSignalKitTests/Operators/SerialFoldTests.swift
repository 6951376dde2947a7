import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct ScanTests {
    @Test func sendsEachRunningResultButNotTheInitialValue() {
        let recorder = Recorder<Int, NoError>()
        recorder.start(values([1, 2, 3]) |> scan(10, +))
        #expect(recorder.events == [.next(11), .next(13), .next(16), .completed])

        let empty = Recorder<Int, NoError>()
        empty.start(values([Int]()) |> scan(10, +))
        #expect(empty.events == [.completed])
    }

    @Test func errorsPassThroughAfterTheValuesBeforeThem() {
        let source = CapturedSubscriber<Int, TestError>()
        let disposable = CountingDisposable()
        let recorder = Recorder<String, TestError>()
        recorder.start(source.signal(disposable: disposable) |> scan("", { $0 + String($1) }))
        source.subscriber?.putNext(1)
        source.subscriber?.putNext(2)
        source.subscriber?.putError(TestError(code: 3))
        source.subscriber?.putNext(4)
        #expect(recorder.events == [.next("1"), .next("12"), .error(TestError(code: 3))])
        #expect(disposable.count.value == 1)
    }

    /// A value sent from inside the subscriber's callback is folded after the callback returns, not
    /// nested inside it: results arrive in fold order.
    @Test func aValueSentFromTheCallbackIsFoldedAfterItReturns() {
        let pipe = ValuePipe<Int>()
        let log = LockedState<[String]>([])
        let subscription = (pipe.signal() |> scan(0, +)).start(next: { total in
            log.withLock { $0.append("enter \(total)") }
            if total == 1 {
                pipe.putNext(10)
            }
            log.withLock { $0.append("exit \(total)") }
        })
        pipe.putNext(1)
        #expect(log.withLock { $0 } == ["enter 1", "exit 1", "enter 11", "exit 11"])
        subscription.dispose()
    }

    /// The fold is user code: it must run outside the operator's lock, so another thread can send to
    /// the operator (its value is queued) while the fold runs.
    @Test func theFoldRunsOutsideTheLock() async {
        let pipe = ValuePipe<Int>()
        let otherReturned = Flag()
        let fold: @Sendable (Int, Int) -> Int = { total, value in
            if value == 1 {
                let sent = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    pipe.putNext(2)
                    sent.signal()
                }
                if blockingWait(sent) { otherReturned.set() }
            }
            return total + value
        }
        let subscription = (pipe.signal() |> scan(0, fold)).start()
        await onThread { pipe.putNext(1) }  // the fold waits for another thread: not on a pool thread
        #expect(otherReturned.isSet)
        subscription.dispose()
    }

    @Test func disposingFromTheCallbackStopsFolding() {
        let source = CapturedSubscriber<Int, NoError>()
        let sourceDisposable = CountingDisposable()
        let folds = Counter()
        let subscription = LockedState<UnsafeTransfer<Disposable?>>(UnsafeTransfer(nil))
        let fold: @Sendable (Int, Int) -> Int = { total, value in
            folds.increment()
            if value == 1 {
                // Queued behind this fold, then dropped by the disposal below.
                source.subscriber?.putNext(2)
            }
            return total + value
        }
        let disposable = (source.signal(disposable: sourceDisposable) |> scan(0, fold)).start(next: { _ in
            subscription.withLock { $0.value }?.dispose()
        })
        subscription.withLock { $0 = UnsafeTransfer(disposable) }
        source.subscriber?.putNext(1)
        #expect(folds.value == 1)
        #expect(sourceDisposable.count.value == 1)
    }

    @Test func disposeReleasesTheAccumulator() {
        let tracker = LifetimeTracker()
        let pipe = ValuePipe<Int>()
        let subscription = (pipe.signal() |> scan([Tracked](), { list, _ in list + [tracker.make()] })).start()
        pipe.putNext(1)
        pipe.putNext(2)
        #expect(tracker.live.value == 2)
        subscription.dispose()
        #expect(tracker.live.value == 0)
    }
}

@Suite struct BufferTests {
    @Test func groupsValuesAndSendsThePartialLastGroupOnCompletion() {
        let recorder = Recorder<[Int], NoError>()
        recorder.start(values([1, 2, 3, 4, 5]) |> buffer(count: 2))
        #expect(recorder.events == [.next([1, 2]), .next([3, 4]), .next([5]), .completed])

        let exact = Recorder<[Int], NoError>()
        exact.start(values([1, 2, 3, 4]) |> buffer(count: 2))
        #expect(exact.events == [.next([1, 2]), .next([3, 4]), .completed], "no empty group at the end")

        let single = Recorder<[Int], NoError>()
        single.start(values([1, 2]) |> buffer(count: 1))
        #expect(single.events == [.next([1]), .next([2]), .completed])
    }

    @Test func anErrorDropsThePartialGroup() {
        let source = CapturedSubscriber<Int, TestError>()
        let recorder = Recorder<[Int], TestError>()
        recorder.start(source.signal() |> buffer(count: 2))
        source.subscriber?.putNext(1)
        source.subscriber?.putNext(2)
        source.subscriber?.putNext(3)
        source.subscriber?.putError(TestError(code: 1))
        #expect(recorder.events == [.next([1, 2]), .error(TestError(code: 1))])
    }

    @Test func countBelowOneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let operation: (Signal<Int, NoError>) -> Signal<[Int], NoError> = buffer(count: 0)
            _ = operation
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("buffer(count:) needs a count of at least 1, got 0"))
    }
}

@Suite struct DistinctTests {
    @Test func dropsEveryValueWhoseKeyWasSeenBefore() {
        let recorder = Recorder<String, NoError>()
        recorder.start(values(["a1", "b1", "a2", "c1", "b2"]) |> distinct(by: { $0.first! }))
        #expect(recorder.events == [.next("a1"), .next("b1"), .next("c1"), .completed])

        let hashable = Recorder<Int, NoError>()
        hashable.start(values([1, 2, 1, 3, 2, 3]) |> distinct)
        #expect(hashable.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func errorsPassThrough() {
        let recorder = Recorder<Int, TestError>()
        recorder.start(Signal<Int, TestError>.fail(TestError(code: 2)) |> distinct)
        #expect(recorder.events == [.error(TestError(code: 2))])
    }

    @Test func eachSubscriptionHasItsOwnKeys() {
        let signal = values([1, 1, 2]) |> distinct
        let first = Recorder<Int, NoError>()
        let second = Recorder<Int, NoError>()
        first.start(signal)
        second.start(signal)
        #expect(first.values == [1, 2])
        #expect(second.values == [1, 2])
    }

    /// Hashing and comparing keys is user code: it must run outside the operator's lock.
    @Test func keysAreHashedOutsideTheLock() async {
        let pipe = ValuePipe<Int>()
        let otherReturned = Flag()
        let key = ProbeKey(value: 0) { value in
            guard value == 1 else { return }
            let sent = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                pipe.putNext(2)
                sent.signal()
            }
            if blockingWait(sent) { otherReturned.set() }
        }
        let recorder = Recorder<Int, NoError>()
        let subscription = recorder.start(pipe.signal() |> distinct(by: { ProbeKey(value: $0, onHash: key.onHash) }))
        await onThread { pipe.putNext(1) }  // hashing waits for another thread: not on a pool thread
        #expect(otherReturned.isSet)
        #expect(recorder.values == [1, 2])
        subscription.dispose()
    }
}

/// A key that runs `onHash` whenever it is hashed.
private struct ProbeKey: Hashable, Sendable {
    let value: Int
    let onHash: @Sendable (Int) -> Void

    static func == (lhs: ProbeKey, rhs: ProbeKey) -> Bool { lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) {
        self.onHash(self.value)
        hasher.combine(self.value)
    }
}

@Suite struct SerialFoldStateMachineTests {
    typealias Machine = SerialFoldStateMachine<Int, TestError>

    func describe(_ action: Machine.Action) -> String {
        switch action {
        case .handle(let event): return "handle \(event)"
        case .none: return "none"
        case .handOff: return "hand off"
        case .drop(let event): return "drop \(event)"
        case .releaseState: return "release the state"
        }
    }

    func describe(_ action: Machine.SubscriptionAction) -> String {
        switch action {
        case .none: return "none"
        case .tearDown(let undelivered, let releasingState):
            return "tear down, \(undelivered.count) undelivered\(releasingState ? ", releasing the state" : "")"
        }
    }

    @Test func theFirstSenderHandlesAndOthersQueue() {
        var machine = Machine()
        #expect(describe(machine.received(.Next(1))) == "handle Next(1)")
        #expect(describe(machine.received(.Next(2))) == "none", "queued for the deliverer")
        #expect(describe(machine.nextDelivery(resuming: false)) == "handle Next(2)")
        #expect(describe(machine.nextDelivery(resuming: false)) == "none", "idle")
        #expect(describe(machine.received(.Next(3))) == "handle Next(3)")
    }

    @Test func theTerminalEventIsLastAndLaterEventsAreDropped() {
        var machine = Machine()
        _ = machine.received(.Next(1))
        #expect(describe(machine.received(.Completion)) == "none")
        #expect(describe(machine.received(.Next(2))) == "drop Next(2)")
        #expect(describe(machine.received(.Error(TestError()))).hasPrefix("drop Error"))
        #expect(describe(machine.nextDelivery(resuming: false)) == "handle Completion")
        #expect(
            describe(machine.nextDelivery(resuming: false)) == "none",
            "idle; the state is released at disposal, which the completion causes")
    }

    @Test func disposalWhileIdleLetsTheDisposerReleaseTheState() {
        var machine = Machine()
        _ = machine.received(.Next(1))
        _ = machine.nextDelivery(resuming: false)
        #expect(describe(machine.disposed()) == "tear down, 0 undelivered, releasing the state")
        #expect(describe(machine.received(.Next(2))) == "drop Next(2)")
    }

    @Test func disposalWhileDeliveringLeavesTheStateToTheDeliverer() {
        var machine = Machine()
        _ = machine.received(.Next(1))
        _ = machine.received(.Next(2))
        #expect(describe(machine.disposed()) == "tear down, 1 undelivered")
        #expect(
            describe(machine.nextDelivery(resuming: false)) == "release the state",
            "the deliverer releases it, after unlocking")
        #expect(describe(machine.disposed()) == "none", "once")
    }
}

@Suite struct SerialFoldStressTests {
    /// Four threads send distinct positive values to `scan(0, +)`: every value is folded exactly once,
    /// the fold never runs on two threads at once, and the totals arrive in fold order (so strictly
    /// increasing), each one the previous plus one of the values, then exactly one completion.
    @Test func scanFromManyThreadsFoldsEachValueOnceInOrder() async {
        let perThread = 2_000
        let source = CapturedSubscriber<Int, NoError>()
        let folding = Counter()
        let overlapped = Flag()
        let totals = LockedState<[Int]>([])
        let completions = Counter()
        let done = DispatchSemaphore(value: 0)
        let fold: @Sendable (Int, Int) -> Int = { total, value in
            if folding.increment() > 1 { overlapped.set() }
            defer { folding.decrement() }
            return total + value
        }
        let subscription = (source.signal() |> scan(0, fold)).start(
            next: { total in totals.withLock { $0.append(total) } },
            completed: {
                completions.increment()
                done.signal()
            })
        await concurrentlyTogether(4) { thread in
            for index in 0..<perThread {
                source.subscriber!.putNext(1 + thread * perThread + index)
            }
        }
        source.subscriber!.putCompletion()
        #expect(await wait(done, seconds: 60))
        let received = totals.withLock { $0 }
        let sent = (1...(4 * perThread)).map { $0 }
        #expect(received.count == sent.count)
        let steps = zip(received, [0] + received.dropLast()).map { $0 - $1 }
        #expect(firstDifference(steps.sorted(), sent) == nil, "each value folded exactly once, results in fold order")
        #expect(!overlapped.isSet, "the fold runs on one thread at a time")
        #expect(completions.value == 1)
        subscription.dispose()
    }

    @Test func bufferFromManyThreadsKeepsEveryValueOnceAndEachThreadsOrder() async {
        let perThread = 2_000
        let source = CapturedSubscriber<Int, NoError>()
        let groups = LockedState<[[Int]]>([])
        let done = DispatchSemaphore(value: 0)
        let subscription = (source.signal() |> buffer(count: 7)).start(
            next: { group in groups.withLock { $0.append(group) } },
            completed: { done.signal() })
        await concurrentlyTogether(4) { thread in
            for index in 0..<perThread {
                source.subscriber!.putNext(thread * perThread + index)
            }
        }
        source.subscriber!.putCompletion()
        #expect(await wait(done, seconds: 60))
        let received = groups.withLock { $0 }
        #expect(received.dropLast().allSatisfy { $0.count == 7 })
        #expect(received.last?.count == (4 * perThread) % 7)
        let flat = received.flatMap { $0 }
        #expect(firstDifference(flat.sorted(), Array(0..<(4 * perThread))) == nil)
        for thread in 0..<4 {
            let mine = flat.filter { $0 / perThread == thread }
            #expect(firstDifference(mine, mine.sorted()) == nil, "thread \(thread)'s values keep their order")
        }
        subscription.dispose()
    }

    @Test func distinctFromManyThreadsSendsEachKeyOnce() async {
        let keys = 1_000
        let source = CapturedSubscriber<Int, NoError>()
        let recorder = Recorder<Int, NoError>()
        let done = DispatchSemaphore(value: 0)
        let subscription = (source.signal() |> distinct).start(
            next: { recorder.append(.next($0)) },
            completed: {
                recorder.append(.completed)
                done.signal()
            })
        await concurrentlyTogether(4) { thread in
            for index in 0..<keys {
                source.subscriber!.putNext((index * (thread + 1)) % keys)
            }
        }
        source.subscriber!.putCompletion()
        #expect(await wait(done, seconds: 60))
        #expect(firstDifference(recorder.values.sorted(), Array(0..<keys)) == nil)
        #expect(recorder.events.last == .completed)
        subscription.dispose()
    }

    /// Disposal racing senders: nothing crashes or leaks, and no state is released under the lock
    /// (checked by ThreadSanitizer and the tracker).
    @Test func disposeRacingSendersReleasesTheState() async {
        let tracker = LifetimeTracker()
        for _ in 0..<200 {
            let pipe = ValuePipe<Int>()
            let subscription = (pipe.signal() |> scan([Tracked](), { list, _ in [tracker.make()] + list.prefix(3) })).start()
            await concurrentlyTogether(3) { thread in
                if thread == 0 {
                    subscription.dispose()
                } else {
                    for value in 0..<100 { pipe.putNext(value) }
                }
            }
        }
        // A drain handed to Dispatch may still hold its state for a moment after the senders return.
        #expect(await spin(until: { tracker.live.value == 0 }))
    }
}
