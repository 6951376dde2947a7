import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// An async sequence of 0..<count that fails with `TestError(code: count)` at the end if `fails`.
struct Numbers: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = TestError
    let count: Int
    let fails: Bool

    struct AsyncIterator: AsyncIteratorProtocol {
        typealias Failure = TestError
        var next = 0
        let count: Int
        let fails: Bool

        mutating func next() async throws(TestError) -> Int? {
            if self.next < self.count {
                defer { self.next += 1 }
                return self.next
            }
            if self.fails && self.next == self.count {
                self.next += 1
                throw TestError(code: self.count)
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(count: self.count, fails: self.fails)
    }
}

/// Starts `signal` and waits (without blocking a thread) for its terminal event.
func run<T: Sendable, E: Error>(_ signal: Signal<T, E>, onNext: @escaping @Sendable (T) -> Void) async -> E? {
    await withCheckedContinuation { (continuation: CheckedContinuation<E?, Never>) in
        _ = signal.start(
            next: onNext,
            error: { continuation.resume(returning: $0) },
            completed: { continuation.resume(returning: nil) }
        )
    }
}

@Suite struct AsyncSequenceToSignalTests {
    @Test func deliversEveryElementInOrderThenCompletes() async {
        // The next expected element, and whether every element so far came in order.
        let progress = Atomic(value: (next: 0, inOrder: true))
        let error = await run(Signal(Numbers(count: 100_000, fails: false))) { value in
            progress.modify { ($0.next + 1, $0.inOrder && value == $0.next) }
        }
        #expect(error == nil)
        let (count, inOrder) = progress.with { $0 }
        #expect(count == 100_000)
        #expect(inOrder)
    }

    @Test func typedFailureBecomesTheSignalsError() async {
        let received = Counter()
        let error = await run(Signal(Numbers(count: 3, fails: true))) { _ in received.increment() }
        #expect(error == TestError(code: 3))
        #expect(received.value == 3)
    }

    /// A dispose that lands between two elements, here from the value callback, still tells the stream:
    /// the task pulls once more in its cancelled state, which is how an `AsyncStream` learns that its
    /// iteration ended and runs `onTermination`. (Returning without that pull left the stream's producer
    /// running for ever.)
    @Test func disposingBetweenTwoElementsStillEndsTheStream() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = Atomic(value: false)
        continuation.onTermination = { _ in terminated.swap(true) }
        let subscription = MetaDisposable()
        let received = Counter()
        subscription.set(
            Signal(stream).start(next: { _ in
                received.increment()
                subscription.dispose()
            }))
        continuation.yield(1)
        await eventually { terminated.with { $0 } }
        #expect(received.value == 1)
        continuation.finish()
    }

    @Test func disposeStopsTheTaskAndNothingArrivesAfterwards() async {
        let terminated = DispatchSemaphore(value: 0)
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        continuation.onTermination = { _ in terminated.signal() }
        let feeder = Task {
            var value = 0
            while !Task.isCancelled {
                if case .terminated = continuation.yield(value) { return }
                value += 1
                await Task.yield()  // blocking-check: a producer, not a wait; it ends when the stream does
            }
        }
        let received = Counter()
        // 0 before `dispose()` returns, 1 after, 2 once the stream has terminated. A delivery that the
        // iterating task had already begun may still enter the callback after `dispose()` returns (the
        // documented contract: disposal does not wait for another thread); one the task began after
        // that may not, and nothing at all may enter once the stream has terminated.
        let phase = Atomic(value: 0)
        let enteredAfterDispose = Counter()
        let enteredAfterTermination = Counter()
        let subscription = Signal(stream).start(next: { _ in
            switch phase.with({ $0 }) {
            case 1: enteredAfterDispose.increment()
            case 2: enteredAfterTermination.increment()
            default: break
            }
            received.increment()
        })
        await eventually { received.value >= 100 }
        subscription.dispose()
        phase.swap(1)
        let stopped = await wait(terminated)
        phase.swap(2)
        #expect(stopped, "the iterating task was cancelled and the stream terminated")
        #expect(enteredAfterDispose.value <= 1, "only the delivery already under way may finish after dispose()")
        #expect(enteredAfterTermination.value == 0)
        feeder.cancel()
    }
}

@Suite struct AsyncOperationTests {
    @Test func sendsTheResultThenCompletes() async {
        let received = Atomic(value: [String]())
        let error = await run(Signal<String, TestError>(operation: { "done" })) { value in
            received.modify { $0 + [value] }
        }
        #expect(error == nil)
        #expect(received.with { $0 } == ["done"])
    }

    @Test func thrownErrorIsTheSignalsError() async {
        let error = await run(Signal<Int, TestError>(operation: { () async throws(TestError) -> Int in throw TestError(code: 8) })) { _ in }
        #expect(error == TestError(code: 8))
    }

    @Test func noErrorOperationNeedsNoTryAndBridgesBack() async {
        let value = await Signal<Int, NoError>(operation: { 21 * 2 }).first()
        #expect(value == 42)
    }

    /// A subscription disposed before its task first runs never starts the work. On one timeline the
    /// task runs only after the run's body has disposed it; the subscription kept shows that such
    /// tasks do run before `run` returns. (The operation ran, cancelled, in 200 runs of 200: a request
    /// made and at once given up was still sent. Found by a probe on 2026-11-30.)
    @Test func disposedBeforeItsTaskRunsTheWorkNeverStarts() async throws {
        let scheduler = VirtualTimeScheduler()
        let ranDisposed = Counter()
        let ranKept = Counter()
        let kept = try await scheduler.run {
            Signal<Int, NoError>(operation: {
                ranDisposed.increment()
                return 1
            }).start().dispose()
            Signal<Int, NoError> { send in
                ranDisposed.increment()
                send(1)
            }.start().dispose()
            return Signal<Int, NoError>(operation: {
                ranKept.increment()
                return 1
            }).start()
        }
        #expect(ranDisposed.value == 0, "work started for a subscription already disposed")
        #expect(ranKept.value == 1)
        kept.dispose()
    }

    @Test func disposeCancelsTheTask() async {
        let cancelled = DispatchSemaphore(value: 0)
        let started = Counter()
        let signal = Signal<Int, NoError>(operation: {
            started.increment()
            await ActionDisposable { cancelled.signal() }.disposeOnCancellation()
            return 0
        })
        let received = Counter()
        let subscription = signal.start(next: { _ in received.increment() })
        await eventually { started.value > 0 }
        subscription.dispose()
        let wasCancelled = await wait(cancelled)
        #expect(wasCancelled)
        #expect(received.value == 0, "the result after dispose is dropped")
    }
}

@Suite struct LifetimeTests {
    @Test func taskDisposableCancelsTheTask() async {
        let task = Task { () -> Bool in
            await ActionDisposable {}.disposeOnCancellation()
            return Task.isCancelled
        }
        let disposable = task.asDisposable()
        disposable.dispose()
        disposable.dispose()
        #expect(await task.value)
    }

    @Test func disposeOnCancellationTiesASubscriptionToATask() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { _ in }
        let task = Task {
            await signal.start().disposeOnCancellation()
        }
        await eventually { source.starts.value > 0 }
        #expect(source.disposals.value == 0)
        task.cancel()
        await task.value
        #expect(source.isBalanced)
    }

    @Test func alreadyCancelledTaskDisposesAtOnce() async {
        let disposals = Counter()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await ActionDisposable { disposals.increment() }.disposeOnCancellation()
        }
        await task.value
        #expect(disposals.value == 1)
    }
}

@Suite struct HotSourceTests {
    @Test func promiseReplaysItsLatestValueToALateLoop() async {
        let promise = Promise<Int>(1)
        promise.set(.single(2))
        var iterator = promise.values.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        promise.set(.single(3))
        #expect(await iterator.next() == 3)
        #expect(await promise.get().first() == 3)
    }

    @Test func valuePromiseReplaysAndIgnoresRepeats() async {
        let promise = ValuePromise("a", ignoreRepeated: true)
        var iterator = promise.values.makeAsyncIterator()
        #expect(await iterator.next() == "a")
        promise.set("a")
        promise.set("b")
        #expect(await iterator.next() == "b")
    }

    @Test func valuePipeDoesNotReplay() async {
        let pipe = ValuePipe<Int>()
        pipe.putNext(0)
        let finished = Atomic(value: false)
        let task = Task { () -> Int? in
            var iterator = pipe.values.makeAsyncIterator()
            let first = await iterator.next()
            finished.swap(true)
            return first
        }
        // The sequence is made inside the task; keep sending until the loop has a value.
        var next = 1
        await eventually {
            pipe.putNext(next)
            next += 1
            return finished.with { $0 }
        }
        let first = await task.value
        #expect(first != nil)
        #expect(first != 0, "a value put before iterating is not seen")
    }
}

/// A sequence over an `AsyncStream` that runs `afterPull` each time its stream gives an element, before
/// it hands the element on (a sequence that does some work per element: decoding, logging), and
/// `beforePull` before each pull.
struct WorkingSequence: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = Never

    let base: AsyncStream<Int>
    let beforePull: @Sendable () -> Void
    let afterPull: @Sendable () -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Int>.Iterator
        let beforePull: @Sendable () -> Void
        let afterPull: @Sendable () -> Void

        mutating func next() async -> Int? {
            self.beforePull()
            let element = await self.base.next()
            if element != nil { self.afterPull() }
            return element
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(base: self.base.makeAsyncIterator(), beforePull: self.beforePull, afterPull: self.afterPull)
    }
}

/// `Signal(sequence)` gives the sequence its end whenever the subscription is disposed: the iterator is
/// pulled once more in the cancelled task, so an `AsyncStream` below runs its `onTermination` and its
/// producer learns that nobody reads any more.
@Suite struct SequenceEndTests {
    /// A stream whose termination signals `terminated`.
    private func stream() -> (AsyncStream<Int>, AsyncStream<Int>.Continuation, DispatchSemaphore) {
        let terminated = DispatchSemaphore(value: 0)
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        continuation.onTermination = { _ in terminated.signal() }
        return (stream, continuation, terminated)
    }

    @Test func disposedBeforeTheFirstPull() async {
        let (stream, _, terminated) = self.stream()
        Signal(stream).start().dispose()
        #expect(await wait(terminated), "the stream terminated")
    }

    @Test func disposedDuringAPull() async {
        let (stream, _, terminated) = self.stream()
        let pulls = Counter()
        let signal = Signal(WorkingSequence(base: stream, beforePull: { pulls.increment() }, afterPull: {}))
        let subscription = signal.start()
        await eventually { pulls.value == 1 }
        subscription.dispose()
        #expect(await wait(terminated), "the stream terminated")
    }

    /// The case that used to leave the stream running for ever: the element came back, and the
    /// subscription was disposed before the task handed it on.
    @Test func disposedJustAfterAnElementCameBack() async {
        for _ in 0..<20 {
            let (stream, continuation, terminated) = self.stream()
            let subscription = Atomic<Disposable?>(value: nil)
            let signal = Signal(
                WorkingSequence(base: stream, beforePull: {}, afterPull: { subscription.with { $0 }?.dispose() }))
            _ = subscription.swap(signal.start())
            continuation.yield(1)
            #expect(await wait(terminated), "the stream terminated")
            // `AsyncStream` runs `onTermination` before it stops taking elements, so a yield just after
            // the handler began may still be enqueued; the stream refuses them once its end is recorded.
            // Without the last pull it never is, and this waits until `eventually` gives up.
            await eventually {
                if case .terminated = continuation.yield(2) { return true }
                return false
            }
        }
    }

    @Test func disposedWhileWaitingForRoom() async {
        let (stream, continuation, terminated) = self.stream()
        continuation.yield(1)
        continuation.yield(2)
        do {
            // A rendezvous that nobody waits at: the task takes the first element, then waits for room.
            let values = Signal(stream).startValues(bufferingPolicy: .bounded(0))
            withExtendedLifetime(values) {}
        }
        #expect(await wait(terminated), "the stream terminated")
    }

    /// A producer on its own thread and a dispose at a random moment (after 0 to 3 values), many times:
    /// the stream terminates every time.
    @Test func disposedAtARandomMoment() async {
        for round in 0..<200 {
            let (stream, continuation, terminated) = self.stream()
            let received = Counter()
            let consumed = DispatchSemaphore(value: 0)
            let producer = Thread {
                var value = 0
                // Bounded, so that a stream that never terminates cannot take the machine's memory; and
                // at most 16 values ahead of the subscriber (it waits for one, or a millisecond), so that
                // it is still sending when the dispose comes, but a round that waits long for its turn
                // on the pool (a parallel `swift test`) does not pump 100,000 values through it: that
                // was a tenth of such a run's processor time.
                while value < 100_000, case .enqueued = continuation.yield(value) {
                    value += 1
                    if value >= received.value + 16 { _ = blockingWait(consumed, seconds: 0.001) }
                }
            }
            producer.start()
            let subscription = Signal(stream).start(next: { _ in
                received.increment()
                consumed.signal()
            })
            let after = round % 4
            if after > 0 { await eventually { received.value >= after } }
            subscription.dispose()
            #expect(await wait(terminated), "round \(round): the stream terminated")
        }
    }
}
