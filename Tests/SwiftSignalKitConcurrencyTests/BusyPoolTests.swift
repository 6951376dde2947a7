import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// The bridges make progress on a busy pool. A server's task pool is often busy: every thread but one
/// may be inside slow synchronous work (a blocking driver call, a long computation) for seconds. The
/// bridges must then still move on the one thread left, which they can only if none of their own jobs
/// ever waits for another job of theirs while holding a thread.
///
/// Each test takes every thread of the pool but one with tasks that block until the test ends (that
/// blocking is what these tests are about), then drives a bridge to its end, which must come within
/// the hang bound.
@Suite(.serialized) struct BusyPoolTests {
    /// The width of the cooperative pool: one thread per core.
    static let poolWidth = ProcessInfo.processInfo.activeProcessorCount

    @Test func mapAsyncMovesOnTheOneThreadLeft() async {
        let finished = await Self.withAllButOnePoolThreadBusy {
            let pipe = ValuePipe<Int>()
            let serial = Recording<Int, NoError>()
            let concurrent = Recording<Int, NoError>()
            let first = serial.start(
                pipe.signal()
                    |> mapAsync { value in
                        await Task.yield()
                        return value * 2
                    })
            let second = concurrent.start(
                pipe.signal()
                    |> mapAsync(.concurrent(max: 4, ordered: true)) { value in
                        await Task.yield()
                        return value + 1
                    })
            for value in 0..<200 { pipe.putNext(value) }
            await eventually { serial.valueList.count == 200 && concurrent.valueList.count == 200 }
            #expect(serial.valueList == (0..<200).map { $0 * 2 })
            #expect(concurrent.valueList == (0..<200).map { $0 + 1 })
            first.dispose()
            second.dispose()
        }
        #expect(finished)
    }

    @Test func forAwaitOverValuesMovesOnTheOneThreadLeft() async {
        let finished = await Self.withAllButOnePoolThreadBusy {
            // Each subscription starts a thread outside the pool that sends 10,000 values and completes.
            let numbers = Signal<Int, NoError> { subscriber in
                Thread {
                    for value in 0..<10_000 { subscriber.putNext(value) }
                    subscriber.putCompletion()
                }.start()
                return EmptyDisposable
            }
            var unbounded: [Int] = []
            for await value in numbers.values { unbounded.append(value) }
            #expect(unbounded == Array(0..<10_000))
            var newest: [Int] = []
            for await value in numbers.values(bufferingPolicy: .bufferingNewest(1)) { newest.append(value) }
            #expect(newest.last == 9_999, "the newest value is kept")
        }
        #expect(finished)
    }

    @Test func getAndFirstMoveOnTheOneThreadLeft() async throws {
        let finished = await Self.withAllButOnePoolThreadBusy {
            let queue = Queue(name: "busy pool")
            let fromQueue = try? await (Signal<Int, NoError>.single(1) |> deliverOn(queue)).get()
            #expect(fromQueue == 1)
            let fromOperation = await Signal<Int, NoError>(operation: {
                await Task.yield()
                return 2
            }).first()
            #expect(fromOperation == 2)
            let promise = ValuePromise<Int>()
            Thread { promise.set(3) }.start()
            #expect(await promise.get().first() == 3)
        }
        #expect(finished)
    }

    @Test func anAsyncGeneratorMovesOnTheOneThreadLeft() async {
        let finished = await Self.withAllButOnePoolThreadBusy {
            let numbers = Signal<Int, NoError> { send in
                for value in 0..<1_000 {
                    send(value)
                    if value % 10 == 0 { await Task.yield() }
                }
            }
            var received: [Int] = []
            for await value in numbers.values {
                received.append(value)
            }
            #expect(received == Array(0..<1_000))
        }
        #expect(finished)
    }

    /// How long a busy-pool scenario may take before it counts as hung: minutes, so that a loaded
    /// machine never fails it; a hung bridge never finishes at all. (The mapAsync scenario took 135 s
    /// once, with the suite beside two busy processes and a third program's stress runs on two cores.)
    static let hangBound: Double = 240

    /// Occupies every thread of the pool but one with a task that blocks until `body` has returned,
    /// then runs `body` in a task of its own. Returns true once `body` has returned, false when it had
    /// not within ``hangBound`` seconds (then the blocked tasks are released all the same).
    static func withAllButOnePoolThreadBusy(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        await takingTurnsToBlockThePool { await Self.occupyingAllButOne(body) }
    }

    private static func occupyingAllButOne(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        let busy = Self.poolWidth - 1
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<busy {
            Task.detached {
                entered.signal()
                // Released by the test once the outcome is known; the bound only keeps a failed run from
                // holding the threads for good.
                _ = release.wait(timeout: .now() + 2 * hangBound)  // blocking-check: the busy pool under test
            }
        }
        for _ in 0..<busy {
            #expect(await wait(entered, seconds: hangBound), "a blocking task did not start")
        }
        let finished = await finishesBeforeDeadline(seconds: hangBound, body)
        for _ in 0..<busy { release.signal() }
        return finished
    }
}
