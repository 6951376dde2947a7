// The migration guide, "Recipes for bridging signals and async code": queue-confined state shared with
// actors, cancelling from either side, and delivering to the main queue, the main actor, or (on a server)
// neither.

import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

// MARK: - Sharing queue-confined state with actors

/// Sessions that legacy code keeps on `queue`, now an actor on the same queue: async code awaits its
/// methods, and code already running on the queue calls it without `await`.
actor SessionRegistry {
    nonisolated let queue: Queue
    private let executor: QueueExecutor
    private var sessions: Set<UserID> = []

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        return self.executor.asUnownedSerialExecutor()
    }

    init(queue: Queue) {
        self.queue = queue
        self.executor = QueueExecutor(queue: queue)
    }

    func login(_ id: UserID) {
        self.sessions.insert(id)
    }

    func count() -> Int {
        return self.sessions.count
    }

    /// For legacy code that runs on the queue (a `queue.async` block, a `deliverOn(queue)` callback).
    nonisolated func countOnQueue() -> Int {
        return self.assumeIsolated { registry in registry.sessions.count }
    }
}

/// Logins that a signal delivers, kept in a `QueueLocalActor`: the handler runs isolated to it.
func recordLogins(_ logins: Signal<UserID, NoError>, into seen: QueueLocalActor<Set<UserID>>) -> Disposable {
    return seen.subscribe(
        logins,
        next: { seen, id in
            seen.withValueOnQueue { $0.insert(id) }
        })
}

// MARK: - Cancelling from either side

/// The task owns the subscription: cancelling the task disposes it.
func followStatus(of connection: Connection, into log: Atomic<[ConnectionStatus]>) -> Task<Void, Never> {
    return Task {
        let subscription = connection.status.get().start(next: { status in
            log.modify { $0 + [status] }
        })
        await subscription.disposeOnCancellation()
    }
}

/// The signal side owns the task: disposing the set cancels it.
nonisolated final class Refresher: Sendable {
    private let disposables = DisposableSet()

    func start(
        every period: Duration, clock: some Clock<Duration> = ContinuousClock(), _ refresh: @escaping @Sendable () async -> Void
    ) {
        let task = Task {
            while !Task.isCancelled {
                await refresh()
                try? await clock.sleep(for: period)
            }
        }
        self.disposables.add(task.asDisposable())
    }

    func stop() {
        self.disposables.dispose()
    }
}

// MARK: - The main queue, the main actor, and servers

@MainActor final class StatusLabel {
    var text = ""
}

/// The loop body runs on the main actor, because the function does.
@MainActor func show(_ updates: SignalValues<ConnectionStatus, NoError>, in label: StatusLabel, count: Int) async {
    var shown = 0
    for await status in updates {
        label.text = "\(status)"
        shown += 1
        if shown == count { break }
    }
}

/// Legacy UI code keeps `deliverOnMainQueue`; the callback runs on the main actor's thread.
@MainActor func bind(_ connection: Connection, to label: StatusLabel) -> Disposable {
    return (connection.status.get() |> deliverOnMainQueue).start(next: { status in
        MainActor.assumeIsolated { label.text = "\(status)" }
    })
}

/// A server runs no main queue: deliver to a queue of its own.
func serverStatusLog(_ connection: Connection, queue: Queue, into log: Atomic<[ConnectionStatus]>) -> Disposable {
    return (connection.status.get() |> deliverOn(queue)).start(next: { status in
        log.modify { $0 + [status] }
    })
}

@Suite struct RecipesActorsTests {
    @Test func asyncCodeAndQueueCodeShareTheActor() async {
        let queue = Queue(name: "sessions")
        let registry = SessionRegistry(queue: queue)
        await registry.login("ada")
        let countSeenOnQueue = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: registry.countOnQueue()) }
        }
        #expect(countSeenOnQueue == 1)
        #expect(await registry.count() == 1)
    }

    @Test func aSignalFeedsAQueueLocalActor() async {
        let queue = Queue(name: "logins")
        let seen = QueueLocalActor(queue: queue, value: Set<UserID>())
        let logins = ValuePipe<UserID>()
        let subscription = recordLogins(logins.signal(), into: seen)
        logins.putNext("ada")
        logins.putNext("grace")
        await eventually { await seen.withValue { $0.count } == 2 }
        subscription.dispose()
        #expect(await seen.withValue { $0 } == ["ada", "grace"])
    }

    @Test func cancellingTheTaskDisposesTheSubscription() async {
        let connection = Connection()
        let log = Atomic<[ConnectionStatus]>(value: [])
        let follower = followStatus(of: connection, into: log)
        await eventually { log.with { $0 } == [.connecting] }
        follower.cancel()
        await follower.value
        connection.status.set(.ready)
        #expect(log.with { $0 } == [.connecting])
    }

    @Test func disposingTheSetCancelsTheTask() async {
        let refreshes = Atomic<Int>(value: 0)
        let cancelled = Atomic<Bool>(value: false)
        let refresher = Refresher()
        refresher.start(every: .seconds(10)) {
            refreshes.modify { $0 + 1 }
            await untilCancelled()
            _ = cancelled.swap(Task.isCancelled)
        }
        await eventually { refreshes.with { $0 } == 1 }
        refresher.stop()
        await eventually { cancelled.with { $0 } }
        #expect(refreshes.with { $0 } == 1)
    }

    /// The period is measured on the clock the caller passes: a test passes virtual time, not a wait.
    @Test func refreshesOncePerPeriodOnATestClock() async {
        let scheduler = VirtualTimeScheduler()
        let refreshes = Atomic<Int>(value: 0)
        let refresher = Refresher()
        refresher.start(every: .seconds(10), clock: scheduler.clock) {
            refreshes.modify { $0 + 1 }
        }
        for expected in 1...3 {
            await scheduler.waitUntilScheduled(1)  // the loop sleeps after refresh `expected`
            #expect(refreshes.with { $0 } == expected)
            scheduler.advance(by: 9.9)
            #expect(scheduler.scheduledActionCount == 1, "still asleep before the period is over")
            scheduler.advance(by: 0.1)
        }
        await scheduler.waitUntilScheduled(1)
        #expect(refreshes.with { $0 } == 4)
        refresher.stop()
    }

    @Test @MainActor func theLoopBodyRunsOnTheMainActor() async {
        let connection = Connection()
        let label = StatusLabel()
        let shown = Task { @MainActor in await show(connection.statusUpdates, in: label, count: 2) }
        await eventually { label.text == "connecting" }
        connection.status.set(.ready)
        await shown.value
        #expect(label.text == "ready")
    }

    @Test @MainActor func legacyUICodeDeliversOnTheMainQueue() async {
        let connection = Connection()
        let label = StatusLabel()
        let binding = bind(connection, to: label)
        connection.status.set(.ready)
        await eventually { label.text == "ready" }
        binding.dispose()
    }

    @Test func aServerDeliversOnItsOwnQueue() async {
        let connection = Connection()
        let log = Atomic<[ConnectionStatus]>(value: [])
        let subscription = serverStatusLog(connection, queue: Queue(name: "status"), into: log)
        connection.status.set(.ready)
        await eventually { log.with { $0 } == [.connecting, .ready] }
        subscription.dispose()
    }
}
