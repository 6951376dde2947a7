// A client module built as new Swift 6.2 targets are: default isolation on the main actor, nonisolated
// async functions running on their caller's actor, isolated conformances inferred (see Package.swift).
// Every declaration here without an annotation is on the main actor, as in such an app or server
// module. Each entry point a main-actor client touches is used as that client writes it.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

struct Profile: Equatable, Sendable {
    var name: String
}

enum LoadError: Error, Equatable {
    case offline
}

/// Main-actor state, as a view model is.
final class ProfileScreen {
    var title = ""
    var updates: [String] = []

    func load(_ profile: Signal<Profile, LoadError>) async throws {
        self.title = try await profile.get().name
    }

    func loadIfAny(_ profile: Signal<Profile, NoError>) async {
        self.title = await profile.first()?.name ?? "nobody"
    }

    func loadWithin(_ profile: Signal<Profile, NoError>, scheduler: some SignalScheduler) async -> FirstValueOutcome<Profile> {
        return await profile.first(within: .seconds(1), scheduler: scheduler)
    }

    func follow(_ names: Signal<String, NoError>, count: Int) async {
        for await name in names.values {
            self.updates.append(name)
            if self.updates.count == count { break }
        }
    }
}

/// Async functions of this module, which are `nonisolated(nonsending)` (its upcoming feature), and a
/// body for `Signal { send in ... }` written as one.
nonisolated func loadDisplayName() async -> String { "ada" }

nonisolated func sendDisplayNames(_ send: sending SignalSender<String, NoError>) async {
    send("grace")
}

@Suite struct MainActorClientTests {
    @Test func awaitingFromMainActorState() async throws {
        let screen = ProfileScreen()
        try await screen.load(.single(Profile(name: "Ada")))
        #expect(screen.title == "Ada")
        await screen.loadIfAny(.complete())
        #expect(screen.title == "nobody")
        await #expect(throws: LoadError.offline) { try await screen.load(.fail(.offline)) }
        #expect(await screen.loadWithin(.single(Profile(name: "Bo")), scheduler: VirtualTimeScheduler()) == .value(Profile(name: "Bo")))
    }

    @Test func iteratingValuesOnTheMainActor() async {
        let screen = ProfileScreen()
        let names = ValuePipe<String>()
        let values = names.values
        names.putNext("a")
        names.putNext("b")
        var received: [String] = []
        for await name in values {
            received.append(name)
            if received.count == 2 { break }
        }
        #expect(received == ["a", "b"])
        await screen.follow(.single("c"), count: 1)
        #expect(screen.updates == ["c"])
    }

    @Test func asyncWorkBecomesSignals() async throws {
        let operation = Signal<Int, NoError>(operation: { 42 })
        #expect(try await operation.get() == 42)
        let generated = Signal<Int, NoError> { send in
            for value in 1...3 { send(value) }
        }
        var values: [Int] = []
        for await value in generated.values { values.append(value) }
        #expect(values == [1, 2, 3])
        let untyped = Signal(operation: { () async throws -> Int in throw LoadError.offline }) |> mapError { _ in LoadError.offline }
        await #expect(throws: LoadError.offline) { try await untyped.get() }
    }

    @Test func anAsyncSignalBodyOnTheMainActor() async {
        let screen = ProfileScreen()
        let names = Signal<String, NoError> { @MainActor send in
            for name in ["a", "b", "c"] {
                screen.updates.append(name)
                await send.waitingForRoom(name)
            }
        }
        var received: [String] = []
        for await name in names.values(bufferingPolicy: .bounded(1)) { received.append(name) }
        #expect(received == ["a", "b", "c"])
        #expect(screen.updates == ["a", "b", "c"])
    }

    /// A body on the main actor that never awaits, written with `async` as the documentation says.
    @Test func anAsyncSignalBodyOnTheMainActorThatNeverAwaits() async {
        let screen = ProfileScreen()
        let names = Signal<String, NoError> { @MainActor send async in
            screen.updates.append("a")
            send("a")
        }
        var received: [String] = []
        for await name in names.values { received.append(name) }
        #expect(received == ["a"])
        #expect(screen.updates == ["a"])
    }

    /// Function values of this module's async types, which are `nonisolated(nonsending)`, are taken by
    /// both initialisers. (Parameters made `@isolated(any)` for a day refused all four: a probe found
    /// it, and the change was undone; an overload cannot differ by that attribute alone.)
    @Test func functionValuesOfThisModulesAsyncTypesAreTaken() async {
        let stored: @Sendable () async -> String = { "lin" }
        let storedBody: @Sendable (sending SignalSender<String, NoError>) async -> Void = { send in send("hopper") }
        #expect(await Signal<String, NoError>(operation: loadDisplayName).first() == "ada")
        #expect(await Signal<String, NoError>(operation: stored).first() == "lin")
        #expect(await Signal<String, NoError>(sendDisplayNames).first() == "grace")
        #expect(await Signal<String, NoError>(storedBody).first() == "hopper")
    }

    @Test func mainActorWorkInsideAPipeline() async throws {
        let screen = ProfileScreen()
        let titled =
            Signal<String, NoError>.single("Ada")
            |> mapAsync { @MainActor name in
                screen.title = name
                return name.count
            }
        #expect(try await titled.get() == 3)
        #expect(screen.title == "Ada")
    }

    @Test func queueConfinedStateFromTheMainActor() async {
        let queue = Queue(name: "sessions")
        let sessions = QueueLocalActor(queue: queue, value: [String: Int]())
        let name = "ada"
        await sessions.withValue { $0[name] = 1 }
        let count = await sessions.withValue { $0.count }
        #expect(count == 1)
        let logins = ValuePipe<String>()
        let subscription = sessions.subscribe(logins.signal(), next: { actor, login in actor.withValue { $0[login] = 2 } })
        logins.putNext("bo")
        await drainQueue(queue)
        #expect(await sessions.withValue { $0["bo"] } == 2)
        subscription.dispose()
    }

    @Test func anActorOnAQueueExecutor() async {
        let counter = QueueCounter(queue: Queue(name: "counter"))
        await counter.increment()
        #expect(await counter.count == 1)
    }

    @Test func deliveringOnTheMainQueueReachesMainActorState() async {
        let screen = ProfileScreen()
        let delivered: Void = await withCheckedContinuation { done in
            _ = (Signal<String, NoError>.single("main") |> deliverOnMainQueue).start(next: { name in
                MainActor.assumeIsolated { screen.updates.append(name) }
                done.resume()
            })
        }
        _ = delivered
        #expect(screen.updates == ["main"])
    }

    @Test func promisesFromTheMainActor() async {
        let status = ValuePromise("connecting")
        var iterator = status.values.makeAsyncIterator()
        status.set("ready")
        #expect(await iterator.next() == "connecting")
        #expect(await iterator.next() == "ready")
        let settings = Promise<Int>(1)
        #expect(await settings.get().first() == 1)
    }

    @Test func virtualTimeFromTheMainActor() {
        let scheduler = VirtualTimeScheduler()
        let typing = ValuePipe<String>()
        let searches = SignalRecorder(typing.signal() |> debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)
        typing.putNext("sw")
        scheduler.advance(by: .milliseconds(300))
        #expect(searches.values == ["sw"])
        searches.dispose()
    }
}

/// A main-actor module's test of mixed code on the virtual timeline: the body written here is not on the
/// main actor (it would stall the run), and its result comes back to main-actor code.
@Suite struct MainActorTimelineTests {
    @Test func aRunFromMainActorCodeStaysOnTheTimeline() async throws {
        let scheduler = VirtualTimeScheduler()
        let screen = ProfileScreen()
        let names = try await scheduler.run { () -> [String] in
            let slowNames = ValuePipe<String>()
            let staged =
                slowNames.signal()
                |> mapAsync { (name: String) -> String in
                    try? await scheduler.clock.sleep(for: .seconds(2))
                    return name.uppercased()
                }
                |> debounce(1, scheduler: scheduler)
            let values = staged.values(bufferingPolicy: .unbounded)  // subscribes: before the first value
            slowNames.putNext("ada")
            _ = scheduler.schedule(after: 5) { slowNames.putNext("grace") }
            var names: [String] = []
            for await name in values {
                names.append("\(scheduler.now) \(name)")
                if names.count == 2 { break }
            }
            return names
        }
        screen.updates = names
        #expect(screen.updates == ["3.0 ADA", "8.0 GRACE"])
    }
}

/// An actor whose executor is a queue, as legacy state moves into actors.
actor QueueCounter {
    private let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { self.executor.asUnownedSerialExecutor() }
    var count = 0

    init(queue: Queue) {
        self.executor = QueueExecutor(queue: queue)
    }

    func increment() {
        self.count += 1
    }
}

/// Returns once the work queued on `queue` before the call has run.
nonisolated func drainQueue(_ queue: Queue) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        queue.async { done.resume() }
    }
}
