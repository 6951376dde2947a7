import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

/// A promise replays its current value at subscription, synchronously, as the original does: from
/// inside the promise's own callbacks and while another thread is delivering, with no value reordered
/// or duplicated for any subscriber.
@Suite struct ReplayRealUseTests {
    /// The helper users write to read a promise's current value synchronously.
    static func currentValue<T: Sendable>(_ signal: Signal<T, NoError>) -> T? {
        let value = Atomic<T?>(value: nil)
        let done = DispatchSemaphore(value: 0)
        (signal |> take(1)).start(next: { next in
            _ = value.swap(next)
            done.signal()
        })
        _ = blockingWait(done, seconds: 2 * hangLimit)
        return value.with { $0 }
    }

    @Test func aValuePromiseReplaysInsideItsOwnCallback() {
        let state = ValuePromise(1)
        let inner = Log<Int>()
        let outer = state.get().start(next: { value in
            (state.get() |> take(1)).start(next: { inner.append($0) })
            // Synchronous: already there when `start` returns.
            inner.append(-value)
        })
        state.set(2)
        #expect(inner.entries == [1, -1, 2, -2])
        outer.dispose()
    }

    @Test func aPromiseReplaysInsideItsOwnCallback() {
        let state = Promise<String>("a")
        let inner = Log<String>()
        let outer = state.get().start(next: { value in
            let read = Atomic<String?>(value: nil)
            (state.get() |> take(1)).start(next: { _ = read.swap($0) })
            inner.append("\(value)=\(read.with { $0 } ?? "nil")")
        })
        state.set(.single("b"))
        #expect(inner.entries == ["a=a", "b=b"])
        outer.dispose()
    }

    /// The semaphore-based helper, called inside a callback of the same promise, hung while the replay
    /// waited for the outer callback to return.
    @Test func aSemaphoreBasedReadInsideACallbackOfTheSamePromiseReturns() async {
        let finished = await finishes {
            let state = ValuePromise(10)
            let reads = Log<Int?>()
            let subscription = state.get().start(next: { _ in
                reads.append(Self.currentValue(state.get()))
            })
            state.set(11)
            #expect(reads.entries == [10, 11])
            subscription.dispose()
        }
        #expect(finished)
    }

    /// Another thread is inside a callback of the promise (so it is the one delivering); a new
    /// subscriber on this thread still gets the current value before `start` returns.
    @Test func aNewSubscriberGetsTheReplayWhileAnotherThreadDelivers() async {
        let finished = await finishes {
            let state = ValuePromise(0)
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let first = state.get().start(next: { value in
                if value == 1 {
                    entered.signal()
                    _ = blockingWait(release, seconds: 2 * hangLimit)
                }
            })
            let setterDone = DispatchSemaphore(value: 0)
            Thread {
                state.set(1)
                setterDone.signal()
            }.start()
            _ = blockingWait(entered, seconds: 2 * hangLimit)
            let seen = Log<Int>()
            let second = state.get().start(next: { seen.append($0) })
            #expect(seen.entries == [1], "the replay arrives before start returns")
            // Published while the other thread is still delivering 1: reaches the new subscriber once,
            // after its replay.
            Thread { state.set(2) }.start()
            release.signal()
            _ = blockingWait(setterDone, seconds: 2 * hangLimit)
            blockingSpin(until: { seen.entries.count >= 2 })
            #expect(seen.entries == [1, 2])
            first.dispose()
            second.dispose()
        }
        #expect(finished)
    }

    /// A publisher thread sets increasing values while other threads subscribe and unsubscribe: every
    /// subscriber sees its replay at once and then strictly increasing values, none twice.
    @Test func replaysUnderConcurrentPublishingKeepEverySubscribersOrder() async {
        let finished = await finishes {
            let state = ValuePromise(0)
            let stop = Atomic(value: false)
            let publisherDone = DispatchSemaphore(value: 0)
            Thread {
                var next = 1
                while !stop.with({ $0 }) {
                    state.set(next)
                    next += 1
                }
                publisherDone.signal()
            }.start()
            let violations = Count()
            let subscribersDone = DispatchSemaphore(value: 0)
            for _ in 0..<3 {
                Thread {
                    for _ in 0..<300 {
                        let seen = Log<Int>()
                        let subscription = state.get().start(next: { seen.append($0) })
                        if seen.entries.isEmpty { violations.increment() }
                        for _ in 0..<10 { yieldProcessor() }
                        subscription.dispose()
                        let entries = seen.entries
                        if zip(entries, entries.dropFirst()).contains(where: { $0 >= $1 }) { violations.increment() }
                    }
                    subscribersDone.signal()
                }.start()
            }
            for _ in 0..<3 { _ = blockingWait(subscribersDone, seconds: 2 * hangLimit) }
            _ = stop.swap(true)
            _ = blockingWait(publisherDone, seconds: 2 * hangLimit)
            #expect(violations.value == 0, "a replay was late, or a value was reordered or repeated")
        }
        #expect(finished)
    }

    /// Sets each of `values` on a thread of its own, and returns once all are set.
    static func publishOnAnotherThread(_ values: ClosedRange<Int>, to state: ValuePromise<Int>) {
        let published = DispatchSemaphore(value: 0)
        Thread {
            for value in values { state.set(value) }
            published.signal()
        }.start()
        _ = blockingWait(published, seconds: 2 * hangLimit)
    }

    /// Another thread publishes many values while this thread delivers a new subscriber's replay (so
    /// they queue up in its backlog): `start` delivers only a bounded number of them and returns; the
    /// rest still reach the subscriber, in order.
    @Test func subscribingDoesNotKeepItsCallerDeliveringAnotherThreadsValues() async {
        let deliveredByCaller = Atomic(value: -1)
        let received = Log<Int>()
        let finished = await finishes {
            let state = ValuePromise(0)
            let insideStart = ThreadFlag()
            let allReceived = DispatchSemaphore(value: 0)
            insideStart.begin()
            let subscription = state.get().start(next: { value in
                if value == 0 {
                    Self.publishOnAnotherThread(1...1_000, to: state)
                } else {
                    insideStart.countIfSet()
                    received.append(value)
                    if value == 1_000 { allReceived.signal() }
                }
            })
            _ = deliveredByCaller.swap(insideStart.end())
            _ = blockingWait(allReceived, seconds: 2 * hangLimit)
            subscription.dispose()
        }
        #expect(finished)
        #expect(
            deliveredByCaller.with { $0 } <= 2 * ReplayingFanOutAllowance.value,
            "start delivered \(deliveredByCaller.with { $0 }) of another thread's values")
        #expect(received.entries == Array(1...1_000), "every value arrives once, in order")
    }

    /// Another thread publishes many values while this thread is delivering (so they queue up behind
    /// it): this thread's `set` delivers only a bounded number of them and returns; the rest still reach
    /// the subscriber, in order, from elsewhere.
    @Test func setDoesNotKeepItsCallerDeliveringAnotherThreadsValues() async {
        let deliveredByCaller = Atomic(value: -1)
        let received = Log<Int>()
        let finished = await finishes {
            let state = ValuePromise(0)
            let insideSet = ThreadFlag()
            let allReceived = DispatchSemaphore(value: 0)
            let subscription = state.get().start(next: { value in
                if value == -1 {
                    // This thread delivers its own value; meanwhile another thread publishes 1,000
                    // values, which queue up behind it.
                    Self.publishOnAnotherThread(1...1_000, to: state)
                } else if value > 0 {
                    insideSet.countIfSet()
                    received.append(value)
                    if value == 1_000 { allReceived.signal() }
                }
            })
            insideSet.begin()
            state.set(-1)
            _ = deliveredByCaller.swap(insideSet.end())
            _ = blockingWait(allReceived, seconds: 2 * hangLimit)
            subscription.dispose()
        }
        #expect(finished)
        #expect(
            deliveredByCaller.with { $0 } <= ReplayingFanOutAllowance.value,
            "set() delivered \(deliveredByCaller.with { $0 }) of another thread's values")
        #expect(received.entries == Array(1...1_000), "every value arrives once, in order")
    }
}

/// The fan-out's allowance, restated: the test must not depend on library internals.
enum ReplayingFanOutAllowance {
    static let value = 64
}

/// Marks one thread as "inside set" and counts the values delivered on it meanwhile.
final class ThreadFlag: @unchecked Sendable {
    // Safe: `thread` and `count` are guarded by `lock`.
    private let lock = UserLock()
    private var thread: Thread?
    private var count = 0

    func begin() {
        self.lock.locked {
            self.thread = Thread.current; self.count = 0
        }
    }
    func end() -> Int {
        self.lock.locked {
            self.thread = nil; return self.count
        }
    }
    func countIfSet() { self.lock.locked { if self.thread == Thread.current { self.count += 1 } } }
}
