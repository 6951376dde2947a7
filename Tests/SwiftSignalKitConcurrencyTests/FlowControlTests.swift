import Dispatch
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// The integers `0..<count` as an `AsyncSequence` that counts how many elements were pulled from it.
struct CountingSequence: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = Never

    let count: Int
    let pulled: Counter
    /// When set, the value after the first waits until it opens.
    var holdAfterFirst: Gate? = nil

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let pulled: Counter
        let holdAfterFirst: Gate?
        var next = 0

        mutating func next() async -> Int? {
            guard self.next < self.count else { return nil }
            if self.next == 1, let gate = self.holdAfterFirst { await gate.wait() }
            defer { self.next += 1 }
            self.pulled.increment()
            return self.next
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(count: self.count, pulled: self.pulled, holdAfterFirst: self.holdAfterFirst)
    }
}

/// The operators a consumer's bound passes through (the "Passes it on" column of the *Flow control*
/// article), each applied to a signal of integers and keeping every value (so that every value pulled
/// reaches the loop). `innerOf...`, `replacementOfCatch` and `nextOfThen` put the source where the operator
/// starts a second signal.
enum PassingOperator: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case none
    // Mapping and filtering.
    case map, filter, mapThenFilter, flatMap, distinctUntilChanged, castError, mapError
    case take, mapUnderTake, takeUntilAction, takeUntil, skip
    // Side effects.
    case beforeNext, afterNext, beforeStarted, beforeCompleted, afterCompleted, afterDisposed, withState
    case measureTimeToFirstEvent
    // Events as values.
    case materialize, dematerialize
    // Sequencing, errors and restarts.
    case startWith, then, nextOfThen, deferred, merge, catchError, replacementOfCatch
    case restart, recurse, restartIfError, retry, retryOnError, retryWithBackoff
    // Signals of signals: the inner signal.
    case innerOfSwitchToLatest, innerOfMapToSignal, innerOfMapToSignalPromotingError
    case innerOfQueue, innerOfMapToQueue, innerOfThrottled, innerOfMapToThrottled
    // Threads.
    case runOn, runOnThreadPool

    var testDescription: String { self.rawValue }

    /// The pool of `runOnThreadPool`: one thread for the whole run.
    static let threadPool = ThreadPool(threadCount: 1, threadPriority: 0.5)

    func apply(_ signal: Signal<Int, NoError>) -> Signal<Int, NoError> {
        // Sources that restart without end are cut off after the values the tests expect.
        let count = FlowControlTests.count
        switch self {
        case .none: return signal
        case .map: return signal |> SwiftSignalKit.map { $0 }
        case .filter: return signal |> SwiftSignalKit.filter { _ in true }
        case .mapThenFilter: return signal |> SwiftSignalKit.map { $0 } |> SwiftSignalKit.filter { _ in true }
        case .flatMap:
            return signal |> SwiftSignalKit.map { Optional($0) } |> SwiftSignalKit.flatMap { $0 }
                |> SwiftSignalKit.map { $0 ?? -1 }
        case .distinctUntilChanged: return signal |> SwiftSignalKit.distinctUntilChanged
        case .castError:
            return signal |> SwiftSignalKit.castError(TestError.self)
                |> SwiftSignalKit.mapError { (_: TestError) -> NoError in fatalError("the source cannot fail") }
        case .mapError:
            return signal |> SwiftSignalKit.castError(TestError.self) |> SwiftSignalKit.mapError { TestError(code: $0.code + 1) }
                |> SwiftSignalKit.catch { _ in Signal<Int, NoError>.complete() }
        case .take: return signal |> SwiftSignalKit.take(1_000_000)
        case .mapUnderTake: return signal |> SwiftSignalKit.map { $0 } |> SwiftSignalKit.take(1_000_000) |> SwiftSignalKit.map { $0 }
        case .takeUntilAction:
            return signal |> SwiftSignalKit.take(until: { _ in SignalTakeAction(passthrough: true, complete: false) })
        case .takeUntil: return signal |> SwiftSignalKit.take(until: Signal<Int, NoError>.never())
        case .skip:
            // `skip(0)` would return the source itself: skip a value put in front of it instead.
            return Signal<Int, NoError>.single(-1) |> SwiftSignalKit.then(signal) |> SwiftSignalKit.skip(1)
        case .beforeNext: return signal |> SwiftSignalKit.beforeNext { _ in }
        case .measureTimeToFirstEvent:
            // Prints one line per subscription, by design.
            return signal |> SwiftSignalKit.debug_measureTimeToFirstEvent(label: "FlowControlTests")
        case .afterNext: return signal |> SwiftSignalKit.afterNext { _ in }
        case .beforeStarted: return signal |> SwiftSignalKit.beforeStarted {}
        case .beforeCompleted: return signal |> SwiftSignalKit.beforeCompleted {}
        case .afterCompleted: return signal |> SwiftSignalKit.afterCompleted {}
        case .afterDisposed: return signal |> SwiftSignalKit.afterDisposed {}
        case .withState: return SwiftSignalKit.withState(signal, { 0 })
        case .materialize:
            return SwiftSignalKit.materialize(signal: signal |> SwiftSignalKit.map { SignalEvent<Int, NoError>.Next($0) })
        case .dematerialize:
            return SwiftSignalKit.dematerialize(signal: signal)
                |> SwiftSignalKit.filter { event in
                    if case .Next = event { return true }
                    return false
                }
                |> SwiftSignalKit.map { event in
                    guard case .Next(let value) = event else { preconditionFailure("only values pass the filter") }
                    return value
                }
        case .startWith:
            // The value sent first is dropped again, so that the loop sees only the source's values.
            return signal |> SwiftSignalKit.startWith(-1) |> SwiftSignalKit.skip(1)
        case .then: return signal |> SwiftSignalKit.then(Signal<Int, NoError>.complete())
        case .nextOfThen: return Signal<Int, NoError>.complete() |> SwiftSignalKit.then(signal)
        case .deferred: return SwiftSignalKit.deferred { signal }
        case .merge: return SwiftSignalKit.merge([signal, .complete()])
        case .catchError:
            return signal |> SwiftSignalKit.castError(TestError.self) |> SwiftSignalKit.catch { _ in Signal<Int, NoError>.complete() }
        case .replacementOfCatch:
            return Signal<Int, TestError>.fail(TestError()) |> SwiftSignalKit.catch { _ in signal }
        case .restart: return SwiftSignalKit.restart(signal) |> SwiftSignalKit.take(count)
        case .recurse: return signal |> SwiftSignalKit.recurse(nil) |> SwiftSignalKit.take(count)
        case .restartIfError: return SwiftSignalKit.restartIfError(signal)
        case .retry: return signal |> SwiftSignalKit.retry(1.0, maxDelay: 1.0, onQueue: Queue())
        case .retryOnError:
            return signal |> SwiftSignalKit.castError(TestError.self)
                |> SwiftSignalKit.retry(retryOnError: { _ in true }, delayIncrement: 1.0, maxDelay: 1.0, maxRetries: 1, onQueue: Queue())
                |> SwiftSignalKit.catch { _ in Signal<Int, NoError>.complete() }
        case .retryWithBackoff:
            return signal |> SwiftSignalKit.retry(.exponential(initial: 1.0, maxDelay: 1.0), maxAttempts: 2)
        case .innerOfSwitchToLatest: return Signal<Signal<Int, NoError>, NoError>.single(signal) |> SwiftSignalKit.switchToLatest
        case .innerOfMapToSignal: return Signal<Int, NoError>.single(0) |> SwiftSignalKit.mapToSignal { _ in signal }
        case .innerOfMapToSignalPromotingError:
            return Signal<Int, NoError>.single(0) |> SwiftSignalKit.mapToSignalPromotingError { _ in signal }
        case .innerOfQueue: return Signal<Signal<Int, NoError>, NoError>.single(signal) |> SwiftSignalKit.queue
        case .innerOfMapToQueue: return Signal<Int, NoError>.single(0) |> SwiftSignalKit.mapToQueue { _ in signal }
        case .innerOfThrottled: return Signal<Signal<Int, NoError>, NoError>.single(signal) |> SwiftSignalKit.throttled
        case .innerOfMapToThrottled: return Signal<Int, NoError>.single(0) |> SwiftSignalKit.mapToThrottled { _ in signal }
        case .runOn: return signal |> SwiftSignalKit.runOn(Queue())
        case .runOnThreadPool: return signal |> SwiftSignalKit.runOn(Self.threadPool)
        }
    }
}

/// A producer's lead over a slow `for await` loop under `.bounded(n)`: how far it got ahead.
final class Lead: Sendable {
    let produced = Counter()
    let taken = Counter()
    private let largest = Atomic(value: 0)

    var largestLead: Int { self.largest.with { $0 } }

    /// Called by the loop for each value: records how many the producer had produced beyond it.
    func took() {
        let taken = self.taken.increment()
        let lead = self.produced.value - taken
        self.largest.modify { Swift.max($0, lead) }
    }
}

@Suite(.serialized) struct FlowControlTests {
    static let count = 300

    /// Lets a producer that ignored the bound run ahead, so that the check below would see it.
    static func giveTheProducerTime() async {
        for _ in 0..<20 { await Task.yield() }
    }

    /// `Signal(sequence)` pulls only when the loop has room: never more than the bound plus the value
    /// handed to a loop that waits in `next()`.
    @Test(arguments: PassingOperator.allCases, [0, 1, 8])
    func aSequenceIsReadNoFasterThanTheLoopTakes(through passing: PassingOperator, bound: Int) async {
        let lead = Lead()
        let source = Signal(CountingSequence(count: Self.count, pulled: lead.produced))
        var received: [Int] = []
        for await value in passing.apply(source).values(bufferingPolicy: .bounded(bound)) {
            lead.took()
            received.append(value)
            await Self.giveTheProducerTime()
        }
        #expect(received == Array(0..<Self.count), "every value arrives, in order")
        #expect(lead.largestLead <= bound + 1, "the sequence was read \(lead.largestLead) ahead of the loop")
    }

    /// An async generator that sends with `waitingForRoom` waits for the loop the same way.
    @Test(arguments: [PassingOperator.none, .mapThenFilter, .take, .beforeNext, .mapUnderTake, .materialize, .dematerialize], [0, 1, 8])
    func aGeneratorWaitsForRoom(through passing: PassingOperator, bound: Int) async {
        let lead = Lead()
        let source = Signal<Int, NoError> { send in
            for value in 0..<Self.count {
                lead.produced.increment()
                await send.waitingForRoom(value)
            }
        }
        var received: [Int] = []
        for await value in passing.apply(source).values(bufferingPolicy: .bounded(bound)) {
            lead.took()
            received.append(value)
            await Self.giveTheProducerTime()
        }
        #expect(received == Array(0..<Self.count))
        // The generator counts a value before it waits for room for it: one more than a sequence.
        #expect(lead.largestLead <= bound + 2, "the generator got \(lead.largestLead) ahead of the loop")
    }

    /// `mapAsync` and its family take no more input while their output is full: a result waits for the
    /// loop's room, and meanwhile the sequence above is not read. The lead allowed beyond the bound: the
    /// value the loop is about to take, the value taken from the sequence, and per place of the
    /// operator a value in its transform and a result that found room at the same moment as the others.
    @Test(arguments: ["serial", "concurrent(max: 4)", "compactMapAsync", "filterAsync"], [0, 1, 8])
    func anAsyncOperatorPassesTheBoundOn(policy: String, bound: Int) async {
        let lead = Lead()
        let source = Signal(CountingSequence(count: Self.count, pulled: lead.produced))
        let transformed: Signal<Int, NoError> =
            switch policy {
            case "serial":
                source
                    |> mapAsync { value in
                        await Task.yield(); return value
                    }
            case "compactMapAsync":
                source
                    |> compactMapAsync { value in
                        await Task.yield(); return value
                    }
            case "filterAsync":
                source
                    |> filterAsync { _ in
                        await Task.yield(); return true
                    }
            default:
                source
                    |> mapAsync(.concurrent(max: 4, ordered: true)) { value in
                        await Task.yield(); return value
                    }
            }
        var received: [Int] = []
        for await value in (transformed |> map { $0 }).values(bufferingPolicy: .bounded(bound)) {
            lead.took()
            received.append(value)
            await Self.giveTheProducerTime()
        }
        #expect(received == Array(0..<Self.count))
        let width = policy.hasPrefix("concurrent") ? 4 : 1
        #expect(lead.largestLead <= bound + 2 * width + 1, "the sequence was read \(lead.largestLead) ahead of the loop")
    }

    /// `.bounded(n)` as an async operator's own buffering: its producers wait while `n` values wait for
    /// a transform, whatever the consumer below.
    @Test(arguments: [0, 4])
    func anAsyncOperatorsOwnBoundPacesItsProducers(bound: Int) async {
        let pulled = Counter()
        let transformed = Counter()
        let largest = Atomic(value: 0)
        let source = Signal(CountingSequence(count: Self.count, pulled: pulled))
        let done = Counter()
        let subscription =
            (source
            |> mapAsync(.serial(buffering: .bounded(bound))) { value in
                let lead = pulled.value - transformed.increment()
                largest.modify { Swift.max($0, lead) }
                await Self.giveTheProducerTime()
                return value
            }).start(completed: { done.increment() })
        await eventually { done.value == 1 }
        subscription.dispose()
        #expect(transformed.value == Self.count)
        // The value being transformed, the bound waiting, and one the sequence gave meanwhile.
        #expect(largest.with { $0 } <= bound + 1, "the sequence was read \(largest.with { $0 }) ahead of the transform")
    }

    /// The same loop without a bound: the producer runs ahead. Shows that the checks above can fail.
    @Test func withoutABoundTheProducerRunsAhead() async {
        let lead = Lead()
        let source = Signal(CountingSequence(count: Self.count, pulled: lead.produced))
        for await _ in source.values(bufferingPolicy: .unbounded) {
            lead.took()
            if lead.taken.value == 1 {
                await eventually { lead.produced.value == Self.count }
            }
        }
        // The loop's second value finds the whole sequence read.
        #expect(lead.largestLead >= Self.count - 2)
    }

    /// Where the bound stops: above an operator that hops threads, the producer does not wait. A value
    /// it sends into a full buffer ends the loop, with the reason, instead of growing the buffer.
    @Test func theBoundStopsAtAnOperatorThatHopsThreads() async {
        let lead = Lead()
        let queue = Queue()
        // The producer sends its second value only once the loop has the first: the sequence subscribes
        // when it is made, and a producer let loose at once could fill the buffer before the first next().
        let loopHasTheFirst = Gate()
        let source = Signal(CountingSequence(count: Self.count, pulled: lead.produced, holdAfterFirst: loopHasTheFirst))
        let values = (source |> deliverOn(queue)).values(bufferingPolicy: .bounded(1))
        for await _ in values {
            lead.took()
            if lead.taken.value == 1 {
                loopHasTheFirst.open()
                // The producer does not wait for room: it sends the second value, which the bound keeps,
                // and the third, which finds the buffer full and ends the loop. Wait for the fourth pull,
                // not the third: a value is counted when it is pulled, before it is put on the queue, and
                // `Signal(sequence)` pulls once more after each `putNext` returns, even once cancelled. So
                // the third is on the queue by then, and the queue has delivered it after the dispatch.
                await eventually { lead.produced.value >= 4 }
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    queue.justDispatch { done.resume() }
                }
            }
        }
        // Without the bound's end, the loop would take all the values.
        #expect(lead.taken.value == 2, "the first value, then the one the bound kept")
        #expect(values.endReason == .producerCouldNotWait)
        #expect(values.endedBecauseFull)
    }

    /// `Int.max` never makes a producer wait.
    @Test func aBoundOfIntMaxNeverWaits() async {
        let lead = Lead()
        let source = Signal(CountingSequence(count: Self.count, pulled: lead.produced))
        for await _ in source.values(bufferingPolicy: .bounded(Int.max)) {
            lead.took()
            if lead.taken.value == 1 {
                await eventually { lead.produced.value == Self.count }
            }
        }
        #expect(lead.taken.value == Self.count)
    }

    /// A producer that cannot wait (a synchronous `putNext`, the generator's `send(value)`) is never
    /// blocked, and never grows the buffer past the bound: the value that finds it full ends the loop,
    /// which takes what was kept and can read why it ended.
    @Test func aProducerThatCannotWaitEndsTheLoopInsteadOfGrowingTheBuffer() async {
        let pipe = ValuePipe<Int>()
        let values = pipe.values(bufferingPolicy: .bounded(2))
        await onThread {
            for value in 0..<100 { pipe.putNext(value) }
        }
        var received: [Int] = []
        for await value in values {
            received.append(value)
        }
        // Two values wait (the first, kept for the first next(), counts): the third ends the loop.
        #expect(received == [0, 1])
        #expect(values.endReason == .producerCouldNotWait)

        let sentAll = Atomic(value: false)
        let generated = Signal<Int, NoError> { send in
            for value in 0..<100 { send(value) }
            sentAll.swap(true)
        }
        let fromGenerator = generated.values(bufferingPolicy: .bounded(1))
        var iterator = fromGenerator.makeAsyncIterator()
        var taken: [Int] = []
        while let value = await iterator.next() {
            taken.append(value)
            if taken.count == 1 { await eventually { sentAll.with { $0 } } }
        }
        #expect(taken.count <= 2, "at most the first value and the one the bound kept: \(taken)")
        #expect(taken == Array(0..<taken.count))
        #expect(iterator.endReason == .producerCouldNotWait)
        #expect(fromGenerator.endReason == .producerCouldNotWait, "the first iterator's reason is the sequence's")
    }

    /// A loop that runs inside its generator (`restart` of a synchronous signal) runs while the sequence
    /// is made, before the subscription's disposable exists: the value that ends the iteration stops it
    /// all the same, through the operators that hand values on where they arrive. (It ran on to the end
    /// of its source, for ever without the `take` here: the subscriber the sequence made was linked to
    /// nothing. Found by a probe on 2026-11-30.)
    @Test(
        arguments: [SignalBufferingPolicy.bounded(1), .endingWhenFull(1)],
        [PassingOperator.none, .map, .mapThenFilter, .take, .beforeNext, .materialize]
    )
    func aLoopInTheGeneratorStopsWhenTheIterationEnds(policy: SignalBufferingPolicy, through passing: PassingOperator) async {
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(starts.increment())
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let values = passing.apply(restart(source) |> take(1_000)).values(bufferingPolicy: policy)
        var received: [Int] = []
        for await value in values {
            received.append(value)
        }
        // `.bounded(1)`: the value kept for the first `next()` counts, so the second ends the loop.
        // `.endingWhenFull(1)`: the first value is handed to the first `next()`, the second is kept, the
        // third ends the loop.
        let ending = policy == .bounded(1) ? 2 : 3
        #expect(starts.value == ending, "the loop ran on after the iteration ended")
        #expect(received == Array(1..<ending))
        #expect(values.endReason == (policy == .bounded(1) ? .producerCouldNotWait : .fellBehind))
    }

    /// A waiting producer whose every value `filter` drops finds room 5,000 times and sends nothing:
    /// that must not let a producer that cannot wait, in the same loop, fill the buffer far past the
    /// bound. (The count of waits that found room was unbounded: all 1,000 values were kept.)
    @Test func droppedValuesOfAWaitingProducerDoNotLetAnotherPastTheBound() async {
        let pipe = ValuePipe<Int>()
        let pulled = Counter()
        let dropped = Signal(CountingSequence(count: 5_000, pulled: pulled)) |> filter { _ in false }
        let values = merge([dropped, pipe.signal()]).values(bufferingPolicy: .bounded(1))
        await eventually { pulled.value == 5_000 }
        for value in 0..<1_000 { pipe.putNext(value) }
        var taken = 0
        for await value in values {
            taken += 1
            if value == 999 { break }
        }
        #expect(values.endReason == .producerCouldNotWait)
        #expect(taken <= 2 + 64, "took \(taken) values under .bounded(1)")
    }

    /// Leaving the loop while the producer waits for room releases it: its task is cancelled and its
    /// wait ends at once.
    @Test func leavingTheLoopReleasesAWaitingProducer() async {
        let lead = Lead()
        let finished = Counter()
        let source = Signal<Int, NoError> { send in
            defer { finished.increment() }
            var value = 0
            while !Task.isCancelled {
                lead.produced.increment()
                await send.waitingForRoom(value)
                value += 1
            }
        }
        for await _ in (source |> map { $0 }).values(bufferingPolicy: .bounded(1)) {
            lead.took()
            if lead.taken.value == 3 { break }
            await eventually { lead.produced.value >= lead.taken.value + 1 }
        }
        await eventually { finished.value == 1 }
        #expect(lead.largestLead <= 3)
    }

    /// Cancelling the task that iterates, while the producer waits for room, releases the producer.
    @Test func cancellingTheConsumerReleasesAWaitingProducer() async {
        let waiting = Counter()
        let finished = Counter()
        let source = Signal<Int, NoError> { send in
            defer { finished.increment() }
            await send.waitingForRoom(0)
            await send.waitingForRoom(1)
            waiting.increment()
            await send.waitingForRoom(2)
        }
        let values = source.values(bufferingPolicy: .bounded(1))
        let firstTaken = Counter()
        let consumer = Task {
            var received: [Int] = []
            for await value in values {
                received.append(value)
                firstTaken.increment()
                // Never takes another: the producer waits for room until the task is cancelled.
                await eventually { Task.isCancelled }
            }
            return received
        }
        await eventually { firstTaken.value == 1 && waiting.value == 1 }
        consumer.cancel()
        await eventually { finished.value == 1 }
        #expect(await consumer.value == [0])
    }

    /// A sequence made with `startValues` and dropped while the producer waits releases it.
    @Test func droppingTheSequenceReleasesAWaitingProducer() async {
        let finished = Counter()
        let produced = Counter()
        let source = Signal<Int, NoError> { send in
            defer { finished.increment() }
            for value in 0..<10 where !Task.isCancelled {
                produced.increment()
                await send.waitingForRoom(value)
            }
        }
        do {
            let values = source.startValues(bufferingPolicy: .bounded(2))
            // Two values kept for the loop, and the third waiting for room.
            await eventually { produced.value == 3 }
            for _ in 0..<20 { await Task.yield() }
            #expect(produced.value == 3)
            _ = values
        }
        await eventually { finished.value == 1 }
        #expect(produced.value == 3, "the producer's task was cancelled with the sequence")
    }

    /// The consumer iterates on an actor that the producer also calls into for every value: the wait
    /// for room holds no actor, so nothing deadlocks.
    @Test func aProducerAndAConsumerOnOneActorDoNotDeadlock() async {
        actor Ledger {
            var notes: [Int] = []
            var received: [Int] = []
            func note(_ value: Int) { self.notes.append(value) }
            func consume(_ signal: Signal<Int, NoError>) async {
                for await value in signal.values(bufferingPolicy: .bounded(1)) {
                    self.received.append(value)
                }
            }
        }
        let ledger = Ledger()
        let source = Signal<Int, NoError> { send in
            for value in 0..<50 {
                await ledger.note(value)
                await send.waitingForRoom(value)
            }
        }
        await ledger.consume(source)
        #expect(await ledger.received == Array(0..<50))
        #expect(await ledger.notes == Array(0..<50))
    }

    /// The same with the actor on a `Queue` (`QueueLocalActor`'s executor), and the consumer on the
    /// main actor.
    @Test @MainActor func aConsumerOnTheMainActorPacesAProducerOnAQueueActor() async {
        let ledger = QueueLocalActor(queue: Queue(name: "FlowControlTests.ledger"), value: [Int]())
        let source = Signal<Int, NoError> { send in
            for value in 0..<50 {
                await ledger.withValue { $0.append(value) }
                await send.waitingForRoom(value)
            }
        }
        var received: [Int] = []
        for await value in source.values(bufferingPolicy: .bounded(0)) {
            received.append(value)
        }
        #expect(received == Array(0..<50))
        #expect(await ledger.withValue { $0 } == Array(0..<50))
    }

    /// `.endingWhenFull`: a loop that falls behind takes what was kept, then ends, and can tell that
    /// end from the source's completion; the source and its other consumers go on.
    @Test func aSlowConsumerIsEndedAndTheOthersGoOn() async {
        let pipe = ValuePipe<Int>()
        let slow = pipe.values(bufferingPolicy: .endingWhenFull(3))
        let fast = pipe.values
        await onThread {
            for value in 0..<10 { pipe.putNext(value) }
        }
        var slowIterator = slow.makeAsyncIterator()
        var slowReceived: [Int] = []
        while let value = await slowIterator.next() { slowReceived.append(value) }
        // The first value was handed to the loop's first `next()`, three were kept, the fifth found the
        // buffer full.
        #expect(slowReceived == [0, 1, 2, 3])
        #expect(slowIterator.endedBecauseFull)
        #expect(await slowIterator.next() == nil, "the iteration stays over")
        await onThread {
            for value in 10..<20 { pipe.putNext(value) }
        }
        var fastReceived: [Int] = []
        for await value in fast {
            fastReceived.append(value)
            if value == 19 { break }
        }
        #expect(fastReceived == Array(0..<20), "the other consumer and the source went on")
    }

    /// The source's completion, a failure or cancellation is not an end for being full.
    @Test func endingForAnotherReasonIsNotEndingWhenFull() async throws {
        var completed = Signal<Int, NoError>.single(1).values(bufferingPolicy: .endingWhenFull(0)).makeAsyncIterator()
        #expect(await completed.next() == 1)
        #expect(await completed.next() == nil)
        #expect(!completed.endedBecauseFull)

        var failed = Signal<Int, TestError>.fail(TestError(code: 1)).values(bufferingPolicy: .endingWhenFull(4))
            .makeAsyncIterator()
        await #expect(throws: TestError(code: 1)) { try await failed.next() }
        #expect(!failed.endedBecauseFull)

        let pipe = ValuePipe<Int>()
        let cancelled = Task {
            var iterator = pipe.values(bufferingPolicy: .endingWhenFull(4)).makeAsyncIterator()
            withUnsafeCurrentTask { $0?.cancel() }
            _ = await iterator.next()
            return iterator.endedBecauseFull
        }
        #expect(await cancelled.value == false)
    }

    /// A limit of 0 keeps nothing: a value that arrives while the loop is not waiting ends it.
    @Test func aLimitOfZeroEndsAtTheFirstValueTheLoopIsNotWaitingFor() async {
        let pipe = ValuePipe<Int>()
        var iterator = pipe.values(bufferingPolicy: .endingWhenFull(0)).makeAsyncIterator()
        await onThread {
            for value in 0..<3 { pipe.putNext(value) }
        }
        #expect(await iterator.next() == 0, "kept for the first next(), as under every policy")
        #expect(await iterator.next() == nil)
        #expect(iterator.endedBecauseFull)
    }

    /// A negative limit, and `.endingWhenFull` for an async operator (whose buffer has no loop to end),
    /// stop the program with a message naming the problem.
    @Test func misusedEndingWhenFullIsRefused() async {
        let negative = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ValuePipe<Int>().values(bufferingPolicy: .endingWhenFull(-2))
        }
        let negativeMessage = String(decoding: negative?.standardErrorContent ?? [], as: UTF8.self)
        #expect(negativeMessage.contains("values(bufferingPolicy: .endingWhenFull(-2)): the limit must be at least 0"))
        let operatorPolicy = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AsyncTransformPolicy.serial(buffering: .endingWhenFull(4))
        }
        let operatorMessage = String(decoding: operatorPolicy?.standardErrorContent ?? [], as: UTF8.self)
        #expect(operatorMessage.contains(".endingWhenFull ends a for await loop"))
    }

    /// A negative bound stops the program with a message naming it, where the policy is used.
    @Test func aNegativeBoundIsRefused() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int, NoError>.never().values(bufferingPolicy: .bounded(-1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("values(bufferingPolicy: .bounded(-1)): the bound must be at least 0"))
    }

    /// A negative limit of `.bufferingNewest` or `.bufferingOldest` stops the program with a message
    /// naming the case and the value, for a loop and for an async operator alike.
    @Test func aNegativeBufferingLimitIsRefusedByName() async {
        let newest = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int, NoError>.never().values(bufferingPolicy: .bufferingNewest(-1))
        }
        let newestMessage = String(decoding: newest?.standardErrorContent ?? [], as: UTF8.self)
        #expect(newestMessage.contains("values(bufferingPolicy: .bufferingNewest(-1)): the limit must be at least 0"))
        let oldest = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int, NoError>.never().values(bufferingPolicy: .bufferingOldest(-3))
        }
        let oldestMessage = String(decoding: oldest?.standardErrorContent ?? [], as: UTF8.self)
        #expect(oldestMessage.contains("values(bufferingPolicy: .bufferingOldest(-3)): the limit must be at least 0"))
        let operatorPolicy = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AsyncTransformPolicy.serial(buffering: .bufferingOldest(-2))
        }
        let operatorPolicyMessage = String(decoding: operatorPolicy?.standardErrorContent ?? [], as: UTF8.self)
        #expect(operatorPolicyMessage.contains("the limit of .bufferingOldest must be at least 0, got -2"))
    }

    /// A negative bound for an async operator stops the program with a message naming it.
    @Test func anAsyncOperatorRefusesANegativeBound() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AsyncTransformPolicy.serial(buffering: .bounded(-4))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the bound of .bounded must be at least 0, got -4"))
    }
}
