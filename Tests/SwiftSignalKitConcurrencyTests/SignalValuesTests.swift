import Dispatch
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// A signal that sends 1...count synchronously when started, then completes. The first `next()` is
/// already waiting when the signal starts, so value 1 goes straight to it; every later value arrives
/// before the consumer takes another, so the buffering policy alone decides which of them are kept.
func burst(_ count: Int, source: InstrumentedSource) -> Signal<Int, NoError> {
    return source.signal { subscriber in
        for value in 1...count {
            subscriber.putNext(value)
        }
        subscriber.putCompletion()
    }
}

@Suite struct SignalValuesTests {
    @Test(arguments: [
        (SignalBufferingPolicy.unbounded, Array(1...10)),
        (.bufferingNewest(3), [1, 8, 9, 10]),
        (.bufferingOldest(3), [1, 2, 3, 4]),
        (.bufferingNewest(0), [1]),
        (.bufferingOldest(0), [1]),
    ])
    func bufferingPolicyDecidesWhatASlowConsumerSees(policy: SignalBufferingPolicy, expected: [Int]) async {
        let source = InstrumentedSource()
        var received: [Int] = []
        for await value in burst(10, source: source).values(bufferingPolicy: policy) {
            received.append(value)
        }
        #expect(received == expected)
        #expect(source.isBalanced)
    }

    @Test func subscribesWhenMadeAndOncePerLaterIterator() async {
        let source = InstrumentedSource()
        let sequence = burst(3, source: source).values
        #expect(source.starts.value == 1, "the sequence subscribes when it is made")
        var first = sequence.makeAsyncIterator()
        #expect(source.starts.value == 1, "the first iterator takes that subscription")
        var second = sequence.makeAsyncIterator()
        #expect(source.starts.value == 2, "a later iterator subscribes when it is made")
        let a = await first.next()
        let b = await second.next()
        let c = await first.next()
        #expect([a, b, c] == [1, 1, 2])
        #expect(source.starts.value == 2, "each iterator is its own subscription")
    }

    @Test func breakDisposesTheSubscription() async {
        let source = InstrumentedSource()
        let pipe = ValuePipe<Int>()
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            let inner = pipe.signal().start(next: { subscriber.putNext($0) })
            subscriber.keepAlive(inner)
            Queue.concurrentDefaultQueue().justDispatch {
                for value in 0..<1_000 { pipe.putNext(value) }
            }
        }
        for await value in signal.values where value >= 3 {
            break
        }
        #expect(source.isBalanced)
    }

    @Test func cancellationEndsTheLoopAndDisposes() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        let received = Counter()
        let task = Task {
            for await _ in signal.values {
                received.increment()
            }
            return "ended"
        }
        await eventually { received.value > 0 }
        task.cancel()
        #expect(await task.value == "ended")
        #expect(source.isBalanced)
    }

    /// The consumer takes buffered values in batches; a cancellation must still end the loop at once,
    /// not after the rest of the batch.
    @Test func cancellationWithValuesStillBufferedEndsTheLoopAtOnce() async {
        let source = InstrumentedSource()
        var received: [Int] = []
        for await value in burst(100, source: source).values {
            received.append(value)
            if value == 2 {
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        #expect(received == [1, 2])
        #expect(source.isBalanced)
    }

    @Test func typedErrorIsThrownOnceThenTheIterationEnds() async {
        let signal = Signal<Int, TestError> { subscriber in
            subscriber.putNext(1)
            subscriber.putError(TestError(code: 3))
            return EmptyDisposable
        }
        var received: [Int] = []
        var iterator = signal.values.makeAsyncIterator()
        do {
            while let value = try await iterator.next() {
                received.append(value)
            }
            Issue.record("expected an error")
        } catch {
            // `error` is statically a TestError.
            #expect(error.code == 3)
        }
        #expect(received == [1])
        let afterError = try? await iterator.next()
        #expect(afterError == nil)
    }

    @Test func droppedIteratorDisposes() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        do {
            var iterator = signal.values.makeAsyncIterator()
            #expect(await iterator.next() == 1)
            #expect(source.disposals.value == 0)
        }
        #expect(source.isBalanced)
    }

    @Test func twoIteratorsAtOnceEachSeeEverything() async {
        let source = InstrumentedSource()
        let signal = burst(100, source: source)
        async let first = collect(signal)
        async let second = collect(signal)
        let (a, b) = await (first, second)
        #expect(a == Array(1...100))
        #expect(b == Array(1...100))
        #expect(source.starts.value == 2)
        #expect(source.isBalanced)
    }

    @Test func bridgesRunFromInsideAnActor() async throws {
        actor Collector {
            var values: [Int] = []
            func run(_ signal: Signal<Int, NoError>) async throws {
                for await value in signal.values {
                    self.values.append(value)
                }
                self.values.append(try await signal.get())
                self.values.append(await signal.first() ?? -1)
            }
        }
        let collector = Collector()
        let source = InstrumentedSource()
        try await collector.run(burst(5, source: source))
        #expect(await collector.values == [1, 2, 3, 4, 5, 1, 1])
        #expect(source.isBalanced)
    }

    @MainActor
    @Test func iteratesAndAwaitsOnTheMainActor() async throws {
        var values: [Int] = []
        for await value in burst(3, source: InstrumentedSource()).values {
            MainActor.assertIsolated()
            values.append(value)
        }
        #expect(values == [1, 2, 3])
        let first = try await burst(3, source: InstrumentedSource()).get()
        #expect(first == 1)
    }
}

func collect(_ signal: Signal<Int, NoError>) async -> [Int] {
    var values: [Int] = []
    for await value in signal.values {
        values.append(value)
    }
    return values
}

@Suite struct SignalValuesStressTests {
    @Test func hundredThousandValuesFromAProducerThreadArriveInOrder() async {
        let source = InstrumentedSource()
        let producer = Queue(name: "producer")
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            producer.justDispatch {
                for value in 0..<100_000 { subscriber.putNext(value) }
                subscriber.putCompletion()
            }
        }
        var expected = 0
        var inOrder = true
        for await value in signal.values {
            if value != expected { inOrder = false }
            expected += 1
        }
        #expect(inOrder)
        #expect(expected == 100_000)
        // The producer thread disposes the source after the completion callback has returned, and that
        // callback is what ended the loop above: the disposal may still be on its way.
        await eventually { source.isBalanced }
    }

    @Test(arguments: [SignalBufferingPolicy.bufferingNewest(8), .bufferingOldest(8)])
    func boundedPoliciesKeepOrderUnderAFastProducer(policy: SignalBufferingPolicy) async {
        let source = InstrumentedSource()
        let producer = Queue(name: "producer")
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            producer.justDispatch {
                for value in 0..<20_000 { subscriber.putNext(value) }
                subscriber.putCompletion()
            }
        }
        var received: [Int] = []
        for await value in signal.values(bufferingPolicy: policy) {
            received.append(value)
            if received.count % 100 == 0 { await Task.yield() }
        }
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "values stay in order")
        #expect(received.count <= 20_000)
        if policy == .bufferingNewest(8) {
            #expect(received.last == 19_999, "the newest value survives")
        } else {
            #expect(received.first == 0, "the oldest value survives")
        }
        // Disposed on the producer thread after the completion callback that ended the loop returned.
        await eventually { source.isBalanced }
    }

    @Test func cancellationRacingValuesFromAnotherThread() async {
        let source = InstrumentedSource()
        let producer = Queue(name: "producer")
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            producer.justDispatch {
                for value in 0..<50 { subscriber.putNext(value) }
            }
        }
        for _ in 0..<2_000 {
            let task = Task { await collect(signal).count }
            task.cancel()
            _ = await task.value
        }
        await drain(producer)
        #expect(source.isBalanced)
    }
}
