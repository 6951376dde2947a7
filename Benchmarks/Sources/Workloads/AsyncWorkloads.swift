import AsyncAlgorithms
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// A1: a producer thread pushes 1,000,000 values; the consumer iterates them with `for await`.
func a1ForAwait() -> [Workload] {
    var workloads: [Workload] = []
    let count = million
    let name = "A1 producer thread into for await per element"
    let expected = sumBelow(count)
    workloads.append(
        asyncWorkload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let signal = Signal<Int, NoError> { subscriber in
                            Thread {
                                for value in 0..<count { subscriber.putNext(value) }
                                subscriber.putCompletion()
                            }.start()
                            return EmptyDisposable
                        }
                        var sum = 0
                        for await value in signal.values { sum &+= value }
                        blackHole(sum)
                        checkResult(name, .signalKit, expected: expected, actual: sum)
                    }
                ),
                (
                    .asyncStream,
                    { _ in
                        let stream = AsyncStream<Int> { continuation in
                            Thread {
                                for value in 0..<count { continuation.yield(value) }
                                continuation.finish()
                            }.start()
                        }
                        var sum = 0
                        for await value in stream { sum &+= value }
                        blackHole(sum)
                        checkResult(name, .asyncStream, expected: expected, actual: sum)
                    }
                ),
                (
                    .asyncChannel,
                    { _ in
                        // A channel's producer must await every send, so it runs in a task, not a thread.
                        let channel = AsyncChannel<Int>()
                        let producer = Task {
                            for value in 0..<count { await channel.send(value) }
                            channel.finish()
                        }
                        var sum = 0
                        for await value in channel { sum &+= value }
                        await producer.value
                        blackHole(sum)
                        checkResult(name, .asyncChannel, expected: expected, actual: sum)
                    }
                ),
            ]
        ))
    return workloads
}

/// A2: awaiting a value that is already there.
func a2AwaitAvailable() -> [Workload] {
    var workloads: [Workload] = []
    let available = Signal<Int, NoError>.single(1)
    let name = "A2 await an available value per await"
    // Each await returns 1.
    let expected = thousand
    workloads.append(
        asyncWorkload(
            name,
            operations: thousand,
            [
                (
                    .signalKit,
                    { (benchmark: any MeasurementWindow) in
                        var sum = 0
                        for _ in 0..<thousand {
                            sum &+= (try? await available.get()) ?? 0
                        }
                        blackHole(sum)
                        checkResult(name, .signalKit, expected: expected, actual: sum)
                    }
                ),
                (
                    // The reference: the fastest correct hand-written await, a continuation resumed at
                    // once. Per await: a suspension and a resumption, no allocation. `get()` suspends
                    // on the same kind of continuation.
                    .unsafeContinuation,
                    { (benchmark: any MeasurementWindow) in
                        var sum = 0
                        for _ in 0..<thousand {
                            sum &+= await withUnsafeContinuation { $0.resume(returning: 1) }
                        }
                        blackHole(sum)
                        checkResult(name, .unsafeContinuation, expected: expected, actual: sum)
                    }
                ),
                (
                    // For comparison: the checked form (A2's reference until 2026-11-30), which also
                    // allocates the checking box per await.
                    .checkedContinuation,
                    { (benchmark: any MeasurementWindow) in
                        var sum = 0
                        for _ in 0..<thousand {
                            sum &+= await withCheckedContinuation { $0.resume(returning: 1) }
                        }
                        blackHole(sum)
                        checkResult(name, .checkedContinuation, expected: expected, actual: sum)
                    }
                ),
                (
                    .task,
                    { (benchmark: any MeasurementWindow) in
                        var sum = 0
                        for _ in 0..<thousand {
                            sum &+= await Task { 1 }.value
                        }
                        blackHole(sum)
                        checkResult(name, .task, expected: expected, actual: sum)
                    }
                ),
            ]
        ))
    return workloads
}

/// A3: an `AsyncSequence` of 1,000,000 elements turned into a signal and consumed, against iterating
/// the same sequence directly.
func a3AsyncSequenceSource() -> [Workload] {
    var workloads: [Workload] = []
    let count = million
    let name = "A3 AsyncSequence as a Signal per element"
    let expected = sumBelow(count)
    workloads.append(
        asyncWorkload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let sum = Sum()
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            Signal<Int, NoError>((0..<count).async).start(
                                next: { sum.value &+= $0 },
                                completed: { done.resume() }
                            )
                        }
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .limit,
                    { _ in
                        // The floor: the same sequence iterated in a task, each element through one stage.
                        let sum = Sum()
                        let stage = LimitStage { sum.value &+= $0 }
                        await Task {
                            for await value in (0..<count).async { stage.push(value) }
                        }.value
                        blackHole(sum.value)
                        checkResult(name, .limit, expected: expected, actual: sum.value)
                    }
                ),
            ]
        ))
    return workloads
}

/// The async transform of A4 and A5: an async function the optimiser cannot see into.
@inline(never)
func asyncIncrement(_ value: Int) async -> Int {
    return value &+ 1
}

/// A producer thread that sends `count` values, then completes.
func producerThreadSignal(count: Int) -> Signal<Int, NoError> {
    return Signal { subscriber in
        Thread {
            for value in 0..<count { subscriber.putNext(value) }
            subscriber.putCompletion()
        }.start()
        return EmptyDisposable
    }
}

/// A stream fed by a producer thread with `count` values.
func producerThreadStream(count: Int) -> AsyncStream<Int> {
    return AsyncStream<Int> { continuation in
        Thread {
            for value in 0..<count { continuation.yield(value) }
            continuation.finish()
        }.start()
    }
}

/// A4: a producer thread pushes 1,000,000 values through an async transform, one at a time, in order.
func a4MapAsyncSerial() -> [Workload] {
    let count = million
    let name = "A4 mapAsync serial per value"
    // Every value comes back incremented.
    let expected = sumBelow(count) + count
    return [
        asyncWorkload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let sum = Sum()
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            (producerThreadSignal(count: count) |> mapAsync { await asyncIncrement($0) }).start(
                                next: { sum.value &+= $0 },
                                completed: { done.resume() }
                            )
                        }
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .asyncStream,
                    { _ in
                        // By hand: the values into an AsyncStream, transformed in a for await loop.
                        var sum = 0
                        for await value in producerThreadStream(count: count) {
                            sum &+= await asyncIncrement(value)
                        }
                        blackHole(sum)
                        checkResult(name, .asyncStream, expected: expected, actual: sum)
                    }
                ),
            ]
        )
    ]
}

/// A5: a producer thread pushes 1,000,000 values through an async transform, at most 8 at once, results
/// in completion order.
func a5MapAsyncConcurrent() -> [Workload] {
    let count = million
    let name = "A5 mapAsync concurrent(max: 8) per value"
    // Every value comes back incremented; the order varies, the sum does not.
    let expected = sumBelow(count) + count
    return [
        asyncWorkload(
            name,
            operations: million,
            [
                (
                    .signalKit,
                    { _ in
                        let sum = Sum()
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            let transformed =
                                producerThreadSignal(count: count)
                                |> mapAsync(.concurrent(max: 8, ordered: false)) { await asyncIncrement($0) }
                            transformed.start(next: { sum.value &+= $0 }, completed: { done.resume() })
                        }
                        blackHole(sum.value)
                        checkResult(name, .signalKit, expected: expected, actual: sum.value)
                    }
                ),
                (
                    .task,
                    { _ in
                        // By hand: a task group with a sliding window of 8 child tasks over the stream.
                        var sum = 0
                        await withTaskGroup(of: Int.self) { group in
                            var values = producerThreadStream(count: count).makeAsyncIterator()
                            var running = 0
                            while running < 8, let value = await values.next() {
                                group.addTask { await asyncIncrement(value) }
                                running += 1
                            }
                            while let result = await group.next() {
                                sum &+= result
                                if let value = await values.next() {
                                    group.addTask { await asyncIncrement(value) }
                                }
                            }
                        }
                        blackHole(sum)
                        checkResult(name, .task, expected: expected, actual: sum)
                    }
                ),
            ]
        )
    ]
}

/// The bridges' workloads.
func asyncWorkloads() -> [Workload] {
    return a1ForAwait() + a2AwaitAvailable() + a3AsyncSequenceSource() + a4MapAsyncSerial() + a5MapAsyncConcurrent()
}
