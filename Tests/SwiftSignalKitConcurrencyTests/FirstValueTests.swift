import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@Suite struct FirstValueTests {
    @Test func getReturnsTheFirstValueAndDisposes() async throws {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            subscriber.putNext(1)
            subscriber.putNext(2)
        }
        let value = try await signal.get()
        #expect(value == 1)
        #expect(source.starts.value == 1)
        #expect(source.isBalanced)
    }

    @Test func aValueSentWhileStartingWinsOverALaterCancellation() async throws {
        // The value arrives inside `start`, before `get()` would suspend; the task is cancelled right after
        // it. The value came first, so it is the outcome, and the subscription is still disposed.
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            subscriber.putNext(7)
            withUnsafeCurrentTask { $0?.cancel() }
        }
        let value = try await signal.get()
        #expect(value == 7)
        #expect(source.isBalanced)
    }

    @Test func getFromAnotherThread() async throws {
        let source = InstrumentedSource()
        let queue = Queue()
        let signal: Signal<String, TestError> = source.signal { subscriber in
            queue.justDispatch { subscriber.putNext("async") }
        }
        #expect(try await signal.get() == "async")
        #expect(source.isBalanced)
    }

    @Test func getThrowsTheSignalsError() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, TestError> = source.signal { $0.putError(TestError(code: 4)) }
        await #expect(throws: TestError(code: 4)) { try await signal.get() }
        #expect(source.isBalanced)
    }

    @Test func getThrowsOnEmptyCompletion() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putCompletion() }
        await #expect(throws: SignalError.completedWithoutValue) { try await signal.get() }
        #expect(source.isBalanced)
    }

    @Test func theEmptyEndSaysWhatWentWrongInLogs() async throws {
        let signal: Signal<Int, NoError> = .complete()
        let error = try #require(await #expect(throws: SignalError.self) { try await signal.get() })
        // What a log line or `localizedDescription` shows, not "SignalError error 0".
        #expect(String(describing: error).contains("completed without sending a value"))
        #expect(error.localizedDescription.contains("completed without sending a value"))
    }

    @Test func cancellingAWaitOnNeverDisposesAndThrows() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { _ in }
        let task = Task { try await signal.get() }
        await eventually { source.starts.value > 0 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(source.isBalanced)
    }

    @Test func cancelledBeforeTheCallNeverStarts() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await signal.get()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(source.starts.value == 0)
        #expect(source.isBalanced)
    }

    @Test func firstNeedsNoTryForNoError() async {
        let source = InstrumentedSource()
        let value = await (source.signal { $0.putNext(3) } as Signal<Int, NoError>).first()
        #expect(value == 3)
        let empty = await (source.signal { $0.putCompletion() } as Signal<Int, NoError>).first()
        #expect(empty == nil)
        #expect(source.starts.value == 2)
        #expect(source.isBalanced)
    }

    @Test func firstThrowsTypedErrors() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, TestError> = source.signal { $0.putError(TestError(code: 2)) }
        do {
            _ = try await signal.first()
            Issue.record("expected an error")
        } catch {
            // `error` is statically a TestError.
            #expect(error.code == 2)
        }
        #expect(source.isBalanced)
    }

    @Test func firstReturnsNilOnCancellation() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { _ in }
        let task = Task { await signal.first() }
        await eventually { source.starts.value > 0 }
        task.cancel()
        #expect(await task.value == nil)
        #expect(source.isBalanced)
    }

    @Test func nonErrorSignalsAreAwaitedAfterMapError() async throws {
        struct Code: Sendable { let raw: Int }
        struct Wrapped: Error { let code: Code }
        let source = InstrumentedSource()
        let signal: Signal<Int, Code> = source.signal { $0.putNext(5) }
        #expect(try await (signal |> mapError { Wrapped(code: $0) }).get() == 5)
        #expect(source.isBalanced)
    }
}

@Suite struct FirstValueStressTests {
    /// Cancellation racing an emission from another thread, 100,000 times: each wait ends exactly once,
    /// with the value or with CancellationError, and every subscription is disposed once and released.
    @Test func cancellationRacingEmissionResumesExactlyOnce() async {
        let source = InstrumentedSource()
        let emitter = Queue(name: "emitter")
        let signal: Signal<Int, NoError> = source.signal { subscriber in
            emitter.justDispatch { subscriber.putNext(7) }
        }
        var values = 0
        var cancellations = 0
        for _ in 0..<100_000 {
            let task = Task { try await signal.get() }
            task.cancel()
            switch await task.result {
            case .success(let value):
                #expect(value == 7)
                values += 1
            case .failure(let error):
                #expect(error is CancellationError)
                cancellations += 1
            }
        }
        await drain(emitter)
        #expect(values + cancellations == 100_000)
        #expect(source.isBalanced)
    }

    @Test func firstRacingCompletionAndErrorFromThreads() async {
        let source = InstrumentedSource()
        let queues = (0..<3).map { Queue(name: "emitter \($0)") }
        let signal: Signal<Int, TestError> = source.signal { subscriber in
            queues[0].justDispatch { subscriber.putNext(1) }
            queues[1].justDispatch { subscriber.putError(TestError()) }
            queues[2].justDispatch { subscriber.putCompletion() }
        }
        for _ in 0..<10_000 {
            let task = Task { try await signal.first() }
            if Bool.random() { task.cancel() }
            switch await task.result {
            case .success(let value): #expect(value == nil || value == 1)
            case .failure(let error): #expect(error as? TestError == TestError())
            }
        }
        for queue in queues { await drain(queue) }
        #expect(source.isBalanced)
    }
}

/// An actor that runs on a `Queue`, to see where `get()` runs when an actor awaits it.
private actor QueueBoundAwaiter {
    private let executor: QueueExecutor

    init(queue: Queue) {
        self.executor = QueueExecutor(queue: queue)
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        return self.executor.asUnownedSerialExecutor()
    }

    func firstValue(of signal: Signal<Bool, NoError>) async throws -> Bool {
        return try await signal.get()
    }
}

@Suite struct FirstValueIsolationTests {
    /// `get()` inherits the caller's isolation: an actor awaiting it starts the signal on its own executor
    /// instead of hopping to the global one first.
    @Test func getStartsTheSignalOnTheCallingActor() async throws {
        let queue = Queue(name: "awaiter")
        let awaiter = QueueBoundAwaiter(queue: queue)
        let startedOnTheActorsQueue = Signal<Bool, NoError> { subscriber in
            subscriber.putNext(queue.isCurrent())
            return EmptyDisposable
        }
        #expect(try await awaiter.firstValue(of: startedOnTheActorsQueue))
    }
}

@Suite struct ThenAfterTheFirstValueTests {
    /// `cached |> then(remote)` awaited with `get()`: the cached value answers, so the remote request is
    /// never started (it used to be started, then cancelled at once).
    @Test func getDoesNotStartTheNextSignal() async throws {
        let remote = InstrumentedSource()
        let cached = Signal<Int, NoError>.single(1)
        let request: Signal<Int, NoError> = remote.signal { $0.putNext(2) }
        #expect(try await (cached |> then(request)).get() == 1)
        #expect(await (cached |> then(request)).first() == 1)
        #expect(await (cached |> then(request)).first(within: .seconds(1)) == .value(1))
        #expect(remote.starts.value == 0)
    }

    @Test func anEmptySourceStillStartsTheNextSignal() async throws {
        let remote = InstrumentedSource()
        let request: Signal<Int, NoError> = remote.signal { $0.putNext(2) }
        #expect(try await (Signal<Int, NoError>.complete() |> then(request)).get() == 2)
        #expect(remote.starts.value == 1)
        #expect(remote.isBalanced)
    }

    /// `get()` of a value that came while the source's disposable ran and the task was cancelled
    /// meanwhile: the value, not `CancellationError` (it used to throw, and the value was lost).
    @Test func getReturnsAValueThatCameBeforeACancellationDuringTheDisposal() async throws {
        let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
        let waiting = Atomic<Task<Int, any Error>?>(value: nil)
        let started = Counter()
        let signal = Signal<Int, NoError> { subscriber in
            _ = captured.swap(subscriber)
            started.increment()
            return ActionDisposable { waiting.with { $0 }?.cancel() }
        }
        let task = Task { try await signal.get() }
        _ = waiting.swap(task)
        await eventually { started.value == 1 }
        captured.with { $0 }?.putNext(7)
        #expect(try await task.value == 7)
    }

    /// The value and the task's cancellation race from two threads, a thousand times: a subscription
    /// disposed by the value's thread gives the value, one disposed by the cancelling thread gives
    /// `CancellationError`, and `get()` never returns before the disposal has. (A subscription may also
    /// be disposed elsewhere: by the starting task, when the value came before the generator returned
    /// its disposable, or by the task's own cancellation handler, when the cancellation came before the
    /// task began to wait; either outcome is right then.)
    @Test func anAdmittedValueWinsItsRaceWithCancellation() async {
        for round in 0..<1_000 {
            let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
            let disposedOn = Atomic<String?>(value: nil)
            let started = Counter()
            let signal = Signal<Int, NoError> { subscriber in
                _ = captured.swap(subscriber)
                started.increment()
                return ActionDisposable {
                    _ = disposedOn.swap(Thread.current.threadDictionary["role"] as? String ?? "elsewhere")
                }
            }
            let task = Task { () -> Int? in try? await signal.get() }
            await eventually { started.value == 1 }
            await concurrently(2) { index in
                if index == 0 {
                    Thread.current.threadDictionary["role"] = "value"
                    captured.with { $0 }?.putNext(1)
                } else {
                    Thread.current.threadDictionary["role"] = "cancellation"
                    task.cancel()
                }
            }
            let result = await task.value
            let decider = disposedOn.with { $0 }
            #expect(decider != nil, "round \(round): returned before the subscription was disposed")
            switch decider {
            case "value": #expect(result == 1, "round \(round): the value decided, yet it was lost")
            case "cancellation": #expect(result == nil, "round \(round): the cancellation decided")
            default: break
            }
        }
    }
}
