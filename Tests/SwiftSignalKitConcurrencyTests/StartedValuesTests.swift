import Dispatch
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// The newcomer's server code: make the sequence, tell a producer to start, then loop. The producer runs
/// on a thread of its own and sends as soon as it is told to, so it races the loop's first `next()`.
@Suite struct StartedValuesTests {
    @Test(arguments: 0..<20)
    func aPipesValuesKeepEverythingSentBeforeTheLoopStarts(round: Int) async {
        let feed = ValuePipe<Int>()
        let loopEnded = Atomic(value: false)
        let trades = feed.values
        // A producer that sends its first trade while it is told to start, the rest from its thread.
        feed.putNext(1)
        async let producer: Void = {
            await onThread {
                for trade in 2...100 { feed.putNext(trade) }
            }
            // Then -1 until the loop ends, so a loop that lost values ends (and fails) instead of waiting.
            await eventually {
                feed.putNext(-1)
                return loopEnded.with { $0 }
            }
        }()
        var received: [Int] = []
        for await trade in trades {
            if trade == -1 { break }
            received.append(trade)
            if trade == 100 { break }
        }
        loopEnded.swap(true)
        await producer
        #expect(received == Array(1...100))
    }

    @Test func startValuesSubscribesAtOnceAndKeepsValuesForTheFirstLoop() async {
        let source = InstrumentedSource()
        let feed = ValuePipe<Int>()
        let filtered: Signal<Int, NoError> = source.signal { subscriber in
            subscriber.keepAlive(feed.signal().start(next: { subscriber.putNext($0) }))
        }
        let evens = filtered |> filter { $0 % 2 == 0 }
        let values = evens.startValues()
        #expect(source.starts.value == 1, "subscribed by startValues()")
        await onThread {
            for value in 1...10 { feed.putNext(value) }
        }
        var received: [Int] = []
        for await value in values {
            received.append(value)
            if value == 10 { break }
        }
        #expect(received == [2, 4, 6, 8, 10])
        #expect(source.isBalanced)
    }

    @Test func laterIteratorsSubscribeWhenMade() async {
        // Bounded: without the fix a read waits for a value that was lost; the test then fails.
        let finished = await finishesBeforeDeadline(seconds: 60) {
            let feed = ValuePipe<Int>()
            let values = feed.values
            var first = values.makeAsyncIterator()
            feed.putNext(1)
            var second = values.makeAsyncIterator()
            feed.putNext(2)
            #expect(await first.next() == 1)
            #expect(await first.next() == 2)
            #expect(await second.next() == 2, "the second iterator subscribed when it was made")
        }
        #expect(finished)
    }

    @Test func anUniteratedSequenceDisposesItsSubscription() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        do {
            let values = signal.startValues()
            #expect(source.starts.value == 1)
            withExtendedLifetime(values) {}
        }
        #expect(source.isBalanced, "dropping the sequence disposed the subscription and released the value")
    }

    @Test func theFirstValueIsKeptEvenWithNoBuffer() async {
        let promise = Promise<Int>(1)
        let values = promise.values(bufferingPolicy: .bufferingNewest(0))
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 1, "the current value, sent while the subscription started")
    }

    @Test func policiesApplyToWhatArrivesBeforeTheLoop() async {
        // Bounded: without the fix a read waits for a value that was lost; the test then fails.
        let finished = await finishesBeforeDeadline(seconds: 60) {
            let feed = ValuePipe<Int>()
            let newest = feed.values(bufferingPolicy: .bufferingNewest(2))
            let oldest = feed.values(bufferingPolicy: .bufferingOldest(2))
            for value in 1...10 { feed.putNext(value) }
            var newestIterator = newest.makeAsyncIterator()
            var oldestIterator = oldest.makeAsyncIterator()
            var fromNewest: [Int] = []
            var fromOldest: [Int] = []
            for _ in 0..<3 {
                fromNewest.append(await newestIterator.next() ?? -1)
                fromOldest.append(await oldestIterator.next() ?? -1)
            }
            #expect(fromNewest == [1, 9, 10], "the first value, then the newest two")
            #expect(fromOldest == [1, 2, 3], "the first value, then the oldest two")
        }
        #expect(finished)
    }

    @Test func aPromiseSetBeforeTheLoopIsSeenInOrder() async {
        // Bounded: without the fix a read waits for a value that was lost; the test then fails.
        let finished = await finishesBeforeDeadline(seconds: 60) {
            let promise = ValuePromise(0)
            let values = promise.values
            promise.set(1)
            promise.set(2)
            var iterator = values.makeAsyncIterator()
            var received: [Int] = []
            for _ in 0..<3 { received.append(await iterator.next() ?? -1) }
            #expect(received == [0, 1, 2])
        }
        #expect(finished)
    }

    @Test func cancellingTheTaskBeforeTheLoopEndsItAndDisposes() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        let values = signal.startValues()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var count = 0
            for await _ in values { count += 1 }
            return count
        }
        #expect(await task.value == 0)
        #expect(source.isBalanced)
    }
}
