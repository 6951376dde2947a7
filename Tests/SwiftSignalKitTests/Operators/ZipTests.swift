import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct ZipTests {
    @Test func pairsValuesByPositionAndBuffersTheSourceThatIsAhead() {
        let a = ValuePipe<Int>()
        let b = ValuePipe<String>()
        let recorder = Recorder<String, NoError>()
        recorder.start(zip(a.signal(), b.signal()) |> map { "\($0)\($1)" })
        a.putNext(1)
        a.putNext(2)
        a.putNext(3)
        #expect(recorder.events.isEmpty)
        b.putNext("x")
        b.putNext("y")
        #expect(recorder.values == ["1x", "2y"])
        b.putNext("z")
        b.putNext("w")
        a.putNext(4)
        #expect(recorder.values == ["1x", "2y", "3z", "4w"])
    }

    @Test func synchronousSourcesCompleteWhenTheShorterOneIsUsedUp() {
        let recorder = Recorder<String, NoError>()
        recorder.start(zip(values([1, 2, 3]), values(["a", "b"])) |> map { "\($0)\($1)" })
        #expect(recorder.events == [.next("1a"), .next("2b"), .completed])
    }

    /// The result completes once a completed source has had every value paired: no further tuple can
    /// be formed. Until then, values it sent before completing still pair.
    @Test func completesWhenACompletedSourceHasNoBufferedValuesAndDisposesEverySource() {
        let a = CapturedSubscriber<Int, NoError>()
        let b = CapturedSubscriber<Int, NoError>()
        let aDisposable = CountingDisposable()
        let bDisposable = CountingDisposable()
        let recorder = Recorder<Int, NoError>()
        recorder.start(zip(a.signal(disposable: aDisposable), b.signal(disposable: bDisposable)) |> map { $0 * 10 + $1 })
        a.subscriber?.putNext(1)
        a.subscriber?.putNext(2)
        a.subscriber?.putCompletion()
        #expect(recorder.events.isEmpty, "a's buffered values can still be paired")
        b.subscriber?.putNext(1)
        #expect(recorder.events == [.next(11)])
        b.subscriber?.putNext(2)
        #expect(recorder.events == [.next(11), .next(22), .completed])
        #expect(aDisposable.count.value == 1)
        #expect(bDisposable.count.value == 1)
    }

    @Test func aSourceCompletingWithoutValuesCompletesAtOnce() {
        let a = CapturedSubscriber<Int, NoError>()
        let b = CapturedSubscriber<Int, NoError>()
        let bDisposable = CountingDisposable()
        let recorder = Recorder<Int, NoError>()
        recorder.start(zip(a.signal(), b.signal(disposable: bDisposable)) |> map { $0 + $1 })
        b.subscriber?.putNext(5)
        a.subscriber?.putCompletion()
        #expect(recorder.events == [.completed])
        #expect(bDisposable.count.value == 1)
    }

    @Test func failsOnTheFirstErrorAfterTheTuplesBeforeItAndDisposesTheOthers() {
        let a = CapturedSubscriber<Int, TestError>()
        let b = CapturedSubscriber<Int, TestError>()
        let c = CapturedSubscriber<Int, TestError>()
        let cDisposable = CountingDisposable()
        let recorder = Recorder<Int, TestError>()
        recorder.start(zip(a.signal(), b.signal(), c.signal(disposable: cDisposable)) |> map { $0 + $1 + $2 })
        a.subscriber?.putNext(1)
        b.subscriber?.putNext(2)
        c.subscriber?.putNext(3)
        a.subscriber?.putNext(1)
        b.subscriber?.putError(TestError(code: 1))
        c.subscriber?.putError(TestError(code: 2))
        c.subscriber?.putNext(1)
        #expect(recorder.events == [.next(6), .error(TestError(code: 1))])
        #expect(cDisposable.count.value == 1)
    }

    @Test func tupleElementsOfAnyTypeComeBackAsThemselves() {
        let recorder = Recorder<String, NoError>()
        let closures = values([{ @Sendable in "closure" }])
        let optionals = values([Int?.none, 5])
        let describe: @Sendable (Int?, @Sendable () -> String, [Int]) -> String = { number, closure, array in
            "\(number.map(String.init) ?? "nil") \(closure()) \(array)"
        }
        recorder.start(zip(optionals, closures, values([[1, 2]])) |> map(describe))
        #expect(recorder.events == [.next("nil closure [1, 2]"), .completed])
    }

    @Test func arrayFormAndEmptyArray() {
        let pipes = (0..<3).map { _ in ValuePipe<Int>() }
        let recorder = Recorder<[Int], NoError>()
        recorder.start(zip(pipes.map { $0.signal() }))
        pipes[0].putNext(1)
        pipes[1].putNext(2)
        pipes[0].putNext(10)
        pipes[2].putNext(3)
        #expect(recorder.values == [[1, 2, 3]])
        pipes[2].putNext(30)
        pipes[1].putNext(20)
        #expect(recorder.values == [[1, 2, 3], [10, 20, 30]])

        let empty = Recorder<[Int], NoError>()
        empty.start(zip([Signal<Int, NoError>]()))
        #expect(empty.events == [.completed], "zip([]) completes without a value (combineLatest([]) sends [])")
    }

    @Test func laterSourcesAreNotStartedOnceAnEarlierOneEndedTheResult() {
        let started = Counter()
        let second = Signal<Int, TestError> { subscriber in
            started.increment()
            return EmptyDisposable
        }
        let recorder = Recorder<Int, TestError>()
        recorder.start(zip(Signal<Int, TestError>.fail(TestError(code: 7)), second) |> map { $0 + $1 })
        #expect(recorder.events == [.error(TestError(code: 7))])
        #expect(started.value == 0)
    }

    /// A value sent from inside the subscriber's callback (on the delivering thread) forms a tuple that
    /// is sent after the callback returns, never nested inside it: tuples stay in order.
    @Test func aTupleFormedInsideACallbackIsSentAfterItReturns() {
        let a = ValuePipe<Int>()
        let b = ValuePipe<Int>()
        let log = LockedState<[String]>([])
        let subscription = zip(a.signal(), b.signal()).start(next: { x, y in
            log.withLock { $0.append("enter \(x)\(y)") }
            if x == 1 {
                a.putNext(2)
                b.putNext(2)
            }
            log.withLock { $0.append("exit \(x)\(y)") }
        })
        a.putNext(1)
        b.putNext(1)
        #expect(log.withLock { $0 } == ["enter 11", "exit 11", "enter 22", "exit 22"])
        subscription.dispose()
    }

    @Test func disposingFromTheCallbackStopsDeliveryAndDisposesTheSources() {
        let a = CapturedSubscriber<Int, NoError>()
        let b = CapturedSubscriber<Int, NoError>()
        let aDisposable = CountingDisposable()
        let bDisposable = CountingDisposable()
        let subscription = LockedState<UnsafeTransfer<Disposable?>>(UnsafeTransfer(nil))
        let received = LockedState<[Int]>([])
        let disposable = zip(a.signal(disposable: aDisposable), b.signal(disposable: bDisposable)).start(next: { x, _ in
            received.withLock { $0.append(x) }
            subscription.withLock { $0.value }?.dispose()
        })
        subscription.withLock { $0 = UnsafeTransfer(disposable) }
        a.subscriber?.putNext(1)
        a.subscriber?.putNext(2)
        b.subscriber?.putNext(1)
        b.subscriber?.putNext(2)
        #expect(received.withLock { $0 } == [1])
        #expect(aDisposable.count.value == 1)
        #expect(bDisposable.count.value == 1)
    }

    @Test func disposeReleasesBufferedValues() {
        let tracker = LifetimeTracker()
        let a = ValuePipe<Tracked>()
        let b = ValuePipe<Int>()
        let subscription = zip(a.signal(), b.signal()).start()
        a.putNext(tracker.make())
        a.putNext(tracker.make())
        #expect(tracker.live.value == 2)
        subscription.dispose()
        #expect(tracker.live.value == 0)
    }
}

@Suite struct ZipStateMachineTests {
    typealias Machine = ZipStateMachine<Int, TestError>

    @Test func theFirstThreadToFormARowDeliversAndOthersQueue() {
        var machine = Machine(arity: 2)
        #expect(machine.sourceSent(1, index: 0) == .none)
        #expect(machine.sourceSent(1, index: 1) == .deliver)
        // While that thread delivers, another row is only queued.
        #expect(machine.sourceSent(2, index: 0) == .none)
        #expect(machine.sourceSent(2, index: 1) == .none)
        #expect(describe(machine.nextDelivery()) == "deliver Next([1, 1])")
        #expect(describe(machine.nextDelivery()) == "deliver Next([2, 2])")
        #expect(describe(machine.nextDelivery()) == "idle")
        #expect(machine.sourceSent(3, index: 1) == .none)
        #expect(machine.sourceSent(3, index: 0) == .deliver)
    }

    /// Rows form exactly when every source has a value waiting, whatever the order values arrive in:
    /// the machine counts its empty buffers instead of looking at all of them for every value, and the
    /// count must follow the buffers through rows that leave some of them full.
    @Test(arguments: 0..<20)
    func rowsFormWhenEverySourceHasAValue(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let arity = Int.random(in: 1...6, using: &random)
        var machine = Machine(arity: arity)
        var model = Array(repeating: [Int](), count: arity)
        var expected: [String] = []
        var delivered: [String] = []
        for value in 0..<300 {
            let source = Int.random(in: 0..<arity, using: &random)
            model[source].append(value)
            let action = machine.sourceSent(value, index: source)
            if model.allSatisfy({ !$0.isEmpty }) {
                expected.append("deliver Next(\(model.map { $0[0] }))")
                for index in model.indices { model[index].removeFirst() }
                #expect(action == .deliver, "value \(value)")
                delivered.append(describe(machine.nextDelivery()))
                #expect(describe(machine.nextDelivery()) == "idle")
            } else {
                #expect(action == .none, "value \(value)")
            }
        }
        #expect(delivered == expected)
    }

    @Test func terminalEventsComeAfterQueuedRowsAndCloseTheInput() {
        var machine = Machine(arity: 2)
        #expect(machine.sourceSent(1, index: 0) == .none)
        #expect(machine.sourceSent(1, index: 1) == .deliver)
        #expect(machine.sourceFailed(TestError(code: 1)) == .none)
        #expect(machine.sourceFailed(TestError(code: 2)) == .none)
        #expect(machine.sourceSent(2, index: 0) == .none)
        #expect(describe(machine.nextDelivery()) == "deliver Next([1, 1])")
        #expect(describe(machine.nextDelivery()).hasPrefix("deliver Error("))
        #expect(describe(machine.nextDelivery()) == "idle")
    }

    /// Values that can no longer be paired once a source failed stay in the machine until disposal,
    /// which releases them after unlocking: never under the lock, where their `deinit` could run.
    @Test func valuesLeftWhenASourceFailsAreHandedBackAtDisposal() {
        var machine = Machine(arity: 2)
        let first = machine.sourceSent(1, index: 0)
        let second = machine.sourceSent(2, index: 0)
        let failed = machine.sourceFailed(TestError(code: 1))
        #expect([first, second, failed] == [.none, .none, .deliver])
        let late = machine.sourceSent(3, index: 1)
        #expect(late == .none)
        guard case .release(let buffers, _) = machine.disposed() else {
            Issue.record("disposal hands back what the machine held")
            return
        }
        #expect(buffers.map(\.count) == [2, 0])
    }

    @Test func disposalDropsEverythingAndStopsTheDeliverer() {
        var machine = Machine(arity: 2)
        #expect(machine.sourceSent(1, index: 0) == .none)
        #expect(machine.sourceSent(1, index: 1) == .deliver)
        #expect(machine.sourceSent(2, index: 0) == .none)
        #expect(machine.sourceSent(2, index: 1) == .none)
        #expect(machine.sourceSent(3, index: 0) == .none)
        guard case .release(var buffers, let undelivered) = machine.disposed() else {
            Issue.record("disposal hands back what the machine held")
            return
        }
        #expect(undelivered.count == 2, "both rows: the deliverer had not taken the first yet")
        #expect(buffers.map(\.count) == [1, 0])
        #expect(buffers[0].popFirst() == 3)
        #expect(describe(machine.nextDelivery()) == "idle")
        #expect(machine.sourceSent(4, index: 1) == .none)
        if case .release = machine.disposed() { Issue.record("a second disposal hands back nothing") }
    }
}

@Suite struct ZipStressTests {
    /// Two threads feed each source, so rows are formed on several threads at once. Each thread sends
    /// its values in increasing order, so they enter their source's buffer in that order, and the rows
    /// that hold them are formed in that order: if rows reached the subscriber out of formation order,
    /// some thread's values would arrive out of order. Rows are also sent one at a time, and exactly one
    /// completion follows them.
    @Test func rowsFormedOnSeveralThreadsArriveInTheOrderTheyWereFormed() async {
        let perThread = 5_000
        let sources = (0..<2).map { _ in CapturedSubscriber<Int, NoError>() }
        let received = LockedState<[[Int]]>([])
        let inside = Counter()
        let overlapped = Flag()
        let completions = Counter()
        let done = DispatchSemaphore(value: 0)
        let subscription = zip(sources.map { $0.signal() }).start(
            next: { row in
                if inside.increment() > 1 { overlapped.set() }
                received.withLock { $0.append(row) }
                // Widens the window in which a second deliverer would overlap this one.
                if row[0] % 4 == 0 { yieldProcessor() }
                inside.decrement()
            },
            completed: {
                completions.increment()
                done.signal()
            })
        // Thread t feeds source t % 2 with t * perThread + 0, 1, 2, ...
        await concurrentlyTogether(4) { thread in
            let source = sources[thread % 2].subscriber!
            for index in 0..<perThread {
                source.putNext(thread * perThread + index)
            }
        }
        for source in sources {
            source.subscriber!.putCompletion()
        }
        #expect(await wait(done, seconds: 60))
        let rows = received.withLock { $0 }
        #expect(rows.count == 2 * perThread)
        for thread in 0..<4 {
            let column = rows.map { $0[thread % 2] }.filter { $0 / perThread == thread }
            #expect(firstDifference(column, (0..<perThread).map { thread * perThread + $0 }) == nil, "thread \(thread)'s values in order")
        }
        #expect(!overlapped.isSet, "rows are sent one at a time")
        #expect(completions.value == 1)
        subscription.dispose()
    }

    /// Disposal racing senders: every buffered value and unsent row is released (after unlocking, which
    /// ThreadSanitizer checks), whichever thread held them.
    @Test func disposeRacingSendersReleasesEverything() async {
        let tracker = LifetimeTracker()
        for _ in 0..<200 {
            let a = ValuePipe<Tracked>()
            let b = ValuePipe<Tracked>()
            let subscription = zip(a.signal(), b.signal()).start()
            await concurrentlyTogether(3) { thread in
                switch thread {
                case 0:
                    subscription.dispose()
                case 1:
                    for _ in 0..<100 { a.putNext(tracker.make()) }
                default:
                    for _ in 0..<60 { b.putNext(tracker.make()) }
                }
            }
        }
        // A delivery handed to Dispatch may still hold a row for a moment after the senders return.
        #expect(await spin(until: { tracker.live.value == 0 }))
    }

    /// An error racing values from other threads: exactly one terminal event, and nothing after it.
    @Test func anErrorRacingValuesEndsTheResultOnce() async {
        for _ in 0..<50 {
            let a = CapturedSubscriber<Int, TestError>()
            let b = CapturedSubscriber<Int, TestError>()
            let recorder = Recorder<Int, TestError>()
            let terminated = DispatchSemaphore(value: 0)
            let subscription = zip(a.signal(), b.signal()).start(
                next: { x, y in recorder.append(.next(x * 1_000 + y)) },
                error: { error in
                    recorder.append(.error(error))
                    terminated.signal()
                })
            await concurrentlyTogether(3) { thread in
                switch thread {
                case 0:
                    for value in 0..<500 { a.subscriber!.putNext(value) }
                case 1:
                    for value in 0..<500 { b.subscriber!.putNext(value) }
                default:
                    b.subscriber!.putError(TestError(code: 9))
                }
            }
            #expect(await wait(terminated, seconds: 60))
            let events = recorder.events
            #expect(events.last == .error(TestError(code: 9)))
            #expect(events.filter { if case .error = $0 { true } else { false } }.count == 1)
            let values = recorder.values
            #expect(values == (0..<values.count).map { $0 * 1_000 + $0 })
            subscription.dispose()
        }
    }
}
