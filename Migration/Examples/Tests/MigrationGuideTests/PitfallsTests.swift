// The migration guide, "Pitfalls of a mixed codebase": each reproduction and each fix, with a test that
// shows the symptom and one that shows the fix working.

import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

// MARK: - A forgotten disposable

/// Wrong: nothing keeps the subscription, so nothing ends it; it lives as long as the promise.
func startAuditing(_ connection: Connection, into log: Atomic<[ConnectionStatus]>) {
    _ = connection.status.get().start(next: { status in log.modify { $0 + [status] } })
}

/// Right: the owner keeps the subscription and ends it when it goes away.
nonisolated final class StatusAuditor: Sendable {
    private let subscription = MetaDisposable()

    init(_ connection: Connection, into log: Atomic<[ConnectionStatus]>) {
        self.subscription.set(connection.status.get().start(next: { status in log.modify { $0 + [status] } }))
    }

    deinit {
        self.subscription.dispose()
    }
}

// MARK: - Awaiting a signal that never sends

/// Wrong: if no event ever comes, this waits until the task is cancelled.
func nextEvent(_ events: ValuePipe<String>) async -> String? {
    return await events.signal().first()
}

/// Right: a deadline turns "never" into an error, and a caller that has gone is not a timeout.
func nextEvent(_ events: ValuePipe<String>, within limit: Duration) async throws(APIError) -> String? {
    let signal = events.signal() |> castError(APIError.self)
    switch try await signal.first(within: limit) {
    case .value(let event): return event
    case .timedOut: throw .timedOut
    case .empty, .cancelled: return nil  // a cancelled caller has gone: nobody reads the answer
    }
}

// MARK: - A callback still running after dispose() returned

/// Right: deliver on a serial queue, and end the subscription on that queue.
nonisolated final class PriceBoard: Sendable {
    let queue = Queue(name: "PriceBoard")
    private let subscription = MetaDisposable()
    private let latest = Atomic<Int?>(value: nil)

    var latestPrice: Int? {
        return self.latest.with { $0 }
    }

    func show(_ prices: Signal<Int, NoError>) {
        let latest = self.latest
        self.subscription.set((prices |> deliverOn(self.queue)).start(next: { price in _ = latest.swap(price) }))
    }

    /// Returns once no callback runs, and none will.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            self.queue.async {
                self.subscription.dispose()
                continuation.resume()
            }
        }
    }
}

// MARK: - A callback entered from two threads at once

/// Wrong: `map` passes each value on, on the thread that sent it, so with several producers the callback
/// runs on two threads at once, and a count it keeps in a plain variable loses updates.
func orderNumbers(_ orders: Signal<Int, NoError>) -> Signal<Int, NoError> {
    return orders |> map { $0 }
}

/// Right: `scan` serialises. The fold and its results run one value at a time, in the order the values
/// arrived, whatever threads the orders come from, so the count is exact and arrives in order.
func runningCount(_ orders: Signal<Int, NoError>) -> Signal<Int, NoError> {
    return orders |> scan(0) { count, _ in count + 1 }
}

// MARK: - Queue.sync and actors

/// Wrong: code on the queue waits for an actor that runs on the same queue. The actor's job runs only
/// after this block ends, so the wait cannot succeed; here it gives up at `deadline` instead of hanging.
nonisolated func loginAndWait(_ registry: SessionRegistry, id: UserID, deadline: DispatchTime) -> DispatchTimeoutResult {
    var result = DispatchTimeoutResult.success
    registry.queue.sync {
        let done = DispatchSemaphore(value: 0)
        Task {
            await registry.login(id)
            done.signal()
        }
        result = done.wait(timeout: deadline)  // blocking-check: the pitfall shown
    }
    return result
}

extension SessionRegistry {
    /// Right: code on the queue is already isolated to the actor, so it calls in without waiting.
    nonisolated func loginOnQueue(_ id: UserID) {
        self.assumeIsolated { registry in registry.login(id) }
    }
}

// MARK: - Sendable errors when legacy types cross into tasks

/// A legacy class: mutable, not `Sendable`.
nonisolated final class ReportBuilder {
    var lines: [String] = []
}

/// Fix 1: hand the object over with `sending`; the caller cannot touch it afterwards.
func exportReport(_ builder: sending ReportBuilder) -> Task<[String], Never> {
    return Task {
        builder.lines.append("exported")
        return builder.lines
    }
}

/// Fix 2: the state becomes an actor's, so every task may call it.
actor Report {
    private(set) var lines: [String] = []

    func append(_ line: String) {
        self.lines.append(line)
    }
}

/// Fix 3: a signal's values go, in order, to state on a queue-bound actor.
func collect(_ lines: Signal<String, NoError>, into report: QueueLocalActor<[String]>) -> Disposable {
    return report.subscribe(
        lines,
        next: { report, line in
            report.withValueOnQueue { $0.append(line) }
        })
}

/// Fix 4: the bridges need `Sendable` values; await a `Sendable` part of a value that is not.
func lineCount(of reports: Signal<ReportBuilder, NoError>) async -> Int? {
    return await (reports |> map { report in report.lines.count }).first()
}

// MARK: - Values lost from a hot source: a sequence made too late

/// Right: the sequence subscribes when it is made, and keeps the values until the loop takes them.
/// Call this before the producer starts.
func connectionEvents(_ events: ValuePipe<String>) -> SignalValues<String, Never> {
    let named = events.signal() |> map { "event: \($0)" }
    return named.values
}

// MARK: - get() now needs try

/// Where a missing value will do: `first()`, with no `try` on a `NoError` signal.
func currentTheme(_ theme: Signal<String, NoError>) async -> String {
    return await theme.first() ?? "light"  // nil: completed without a value, or the task was cancelled
}

/// Where a missing value is an error: `try get()`.
func requiredTheme(_ theme: Signal<String, NoError>) async throws -> String {
    return try await theme.get()
}

@Suite struct PitfallsTests {
    @Test func aForgottenSubscriptionOutlivesItsCaller() {
        let connection = Connection()
        let log = Atomic<[ConnectionStatus]>(value: [])
        startAuditing(connection, into: log)
        connection.status.set(.ready)  // still heard, and will be for as long as `connection` lives
        #expect(log.with { $0 } == [.connecting, .ready])
    }

    @Test func anOwnedSubscriptionEndsWithItsOwner() {
        let connection = Connection()
        let log = Atomic<[ConnectionStatus]>(value: [])
        var auditor: StatusAuditor? = StatusAuditor(connection, into: log)
        #expect(auditor != nil)
        auditor = nil
        connection.status.set(.ready)
        #expect(log.with { $0 } == [.connecting])
    }

    @Test func aWaitForASilentSignalEndsOnlyByCancellation() async {
        let events = ValuePipe<String>()
        let waiting = Task { await nextEvent(events) }
        waiting.cancel()
        #expect(await waiting.value == nil)
    }

    @Test func aDeadlineEndsTheWait() async throws {
        let events = ValuePipe<String>()
        await #expect(throws: APIError.timedOut) { try await nextEvent(events, within: .milliseconds(50)) }
    }

    @Test func aCallerThatWentAwayIsNotATimeout() async throws {
        let events = ValuePipe<String>()
        let waiting = Task { try await nextEvent(events, within: .seconds(60)) }
        waiting.cancel()
        #expect(try await waiting.value == nil)
    }

    @Test func aFastProducerFillsAnUnboundedBuffer() async {
        // A producer much faster than its consumer: a thousand prices at once.
        let prices = Signal<Int, NoError> { subscriber in
            for price in 1...1000 {
                subscriber.putNext(price)
            }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        var everyPrice: [Int] = []
        for await price in prices.values {  // keeps all 1,000 until the loop takes them
            everyPrice.append(price)
        }
        var newestPrices: [Int] = []
        for await price in prices.values(bufferingPolicy: .bufferingNewest(1)) {  // keeps one
            newestPrices.append(price)
        }
        #expect(everyPrice.count == 1000)
        #expect(newestPrices == [1, 1000])
    }

    @Test func aCallbackCanStillRunAfterDisposeReturned() async {
        // Blocking code, as legacy code is: on a thread of the test's own, not on one of the task pool's.
        let (finishedThen, finished) = await onThread { () -> (Bool, Atomic<Bool>) in
            let inCallback = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let finished = Atomic<Bool>(value: false)
            let ticks = ValuePipe<Int>()
            let subscription = ticks.signal().start(next: { _ in
                inCallback.signal()
                _ = release.wait(timeout: .now() + 60)  // blocking-check: on the producer thread, which the test started
                _ = finished.swap(true)
            })
            let producer = Thread { ticks.putNext(1) }
            producer.start()
            _ = inCallback.wait(timeout: .now() + 60)  // blocking-check: on a thread of onThread's
            subscription.dispose()  // returns at once, while the callback is still running on `producer`
            let finishedThen = finished.with { $0 }  // false: the callback has not returned
            release.signal()
            return (finishedThen, finished)
        }
        #expect(finishedThen == false)
        await eventually { finished.with { $0 } }
    }

    @Test func stoppingOnTheDeliveryQueueWaitsForTheCallback() async {
        let board = PriceBoard()
        let prices = ValuePipe<Int>()
        board.show(prices.signal())
        prices.putNext(1)
        await board.stop()
        prices.putNext(2)
        await withCheckedContinuation { continuation in board.queue.async { continuation.resume() } }
        #expect(board.latestPrice == 1)
    }

    @Test func aPassingOperatorLetsTwoThreadsIntoTheCallback() async {
        let orders = ValuePipe<Int>()
        let inside = Atomic<Int>(value: 0)
        let bothInside = Atomic<Bool>(value: false)
        let subscription = orderNumbers(orders.signal()).start(next: { _ in
            _ = inside.modify { $0 + 1 }
            // Each producer waits in the callback for the other to be in it too: with `map`, it comes.
            var checks = 0
            while inside.with({ $0 }) < 2 && checks < 10_000_000 {
                checks += 1
                sched_yield()  // blocking-check: in the callback, on a producer thread of concurrently's
            }
            if inside.with({ $0 }) == 2 {
                _ = bothInside.swap(true)
            }
        })
        await concurrently(2) { order in
            orders.putNext(order)
        }
        subscription.dispose()
        #expect(bothInside.with { $0 }, "map does not serialise: both producers were in the callback at once")
    }

    @Test func aSerialisingOperatorCountsExactlyAndInOrder() async {
        let orders = ValuePipe<Int>()
        let counts = Atomic<[Int]>(value: [])
        let subscription = runningCount(orders.signal()).start(next: { count in counts.modify { $0 + [count] } })
        await concurrently(4) { _ in
            for order in 0..<500 { orders.putNext(order) }
        }
        // Past 64 values from other threads, delivery may continue on a Dispatch thread for a moment.
        await eventually { counts.with { $0.count } == 2_000 }
        subscription.dispose()
        #expect(counts.with { $0 } == Array(1...2_000))
    }

    @Test func waitingOnTheQueueForAnActorOnTheSameQueueDeadlocks() async {
        let registry = SessionRegistry(queue: Queue(name: "sessions"))
        // It blocks its thread (that is the pitfall): a thread of the test's, not one of the task pool's.
        let result = await onThread { loginAndWait(registry, id: "ada", deadline: .now() + 0.2) }
        #expect(result == .timedOut)
        await eventually { await registry.count() == 1 }  // the job ran once the block had ended
    }

    @Test func callingTheActorFromItsQueueNeedsNoWait() async {
        let registry = SessionRegistry(queue: Queue(name: "sessions"))
        registry.queue.sync { registry.loginOnQueue("ada") }
        #expect(await registry.count() == 1)
    }

    @Test func legacyObjectsCrossIntoTasksSafely() async {
        let builder = ReportBuilder()
        builder.lines.append("queued")
        #expect(await exportReport(builder).value == ["queued", "exported"])

        let report = Report()
        await Task { await report.append("exported") }.value
        #expect(await report.lines == ["exported"])

        let queue = Queue(name: "report")
        let collected = QueueLocalActor(queue: queue, value: [String]())
        let lines = ValuePipe<String>()
        let subscription = collect(lines.signal(), into: collected)
        for index in 0..<100 {
            lines.putNext("line \(index)")
        }
        await eventually { await collected.withValue { $0.count } == 100 }
        #expect(await collected.withValue { $0 } == (0..<100).map { "line \($0)" })
        subscription.dispose()
    }

    @Test func aSendablePartOfALegacyValueCrossesTheBridge() async {
        let reports = Signal<ReportBuilder, NoError> { subscriber in
            let report = ReportBuilder()
            report.lines = ["a", "b"]
            subscriber.putNext(report)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        #expect(await lineCount(of: reports) == 2)
    }

    @Test func valuesPutBeforeTheLoopSubscribesAreLost() async {
        let firstSeen = Atomic<String?>(value: nil)
        let events = ValuePipe<String>()
        let named = events.signal() |> map { "event: \($0)" }
        events.putNext("connected")  // no sequence yet: nobody is listening, lost
        let sequence = named.values  // subscribed here: sees what is sent from now on
        let loop = Task {
            for await event in sequence {
                _ = firstSeen.swap(event)
                break
            }
        }
        await eventually {
            events.putNext("later")  // until the loop has subscribed and taken one
            return firstSeen.with { $0 } != nil
        }
        await loop.value
        #expect(firstSeen.with { $0 } == "event: later")
    }

    @Test func startingTheValuesFirstKeepsEveryValue() async {
        let events = ValuePipe<String>()
        let sequence = connectionEvents(events)
        events.putNext("connected")
        events.putNext("ready")
        var seen: [String] = []
        for await event in sequence {
            seen.append(event)
            if seen.count == 2 { break }
        }
        #expect(seen == ["event: connected", "event: ready"])
    }

    @Test func aPipesOwnValuesSubscribeWhenMade() async {
        let events = ValuePipe<String>()
        let sequence = events.values  // subscribed here
        events.putNext("connected")
        var iterator = sequence.makeAsyncIterator()
        #expect(await iterator.next() == "connected")
    }

    @Test func firstAndGetSayWhatAMissingValueMeans() async throws {
        #expect(await currentTheme(.single("dark")) == "dark")
        #expect(await currentTheme(.complete()) == "light")
        #expect(try await requiredTheme(.single("dark")) == "dark")
        await #expect(throws: SignalError.completedWithoutValue) { try await requiredTheme(.complete()) }
    }
}
