// A small server-style client of the library in Swift 6 mode with complete concurrency checking:
// awaiting signals in tasks, iterating in actors, passing promises and disposables between tasks.
// It must compile with zero warnings and without `@preconcurrency import`.
import Dispatch
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

struct Config: Equatable, Sendable {
    var maxConnections: Int
}

struct Request: Sendable {
    var id: Int
    var path: String
}

enum ServiceError: Error, Equatable {
    case notFound(String)
}

/// Connection state confined to one queue, reachable from async handlers and legacy callbacks.
struct Registry: Sendable {
    var open: Set<Int> = []
    var served = 0
}

final class Service: Sendable {
    let queue = Queue(name: "service")
    let config = ValuePromise(Config(maxConnections: 2), ignoreRepeated: true)
    let requests = ValuePipe<Request>()
    let registry: QueueLocalActor<Registry>
    let subscriptions = DisposableSet()

    init() {
        self.registry = QueueLocalActor(queue: self.queue, value: Registry())
    }

    /// An async lookup exposed to signal code.
    func lookup(_ path: String) -> Signal<String, ServiceError> {
        return Signal(operation: { () async throws(ServiceError) -> String in
            guard path.hasPrefix("/") else { throw ServiceError.notFound(path) }
            return "page at \(path)"
        })
    }

    /// Legacy-style wiring: requests are counted on the service queue.
    func start() {
        let counting = self.registry.subscribe(
            self.requests.signal(),
            next: { registry, request in
                // Isolated to the actor here: its methods are called synchronously.
                _ = registry.withValue { $0.open.insert(request.id) }
            })
        self.subscriptions.add(counting)
    }

    func handle(_ request: Request) async throws -> String {
        let config = await self.config.get().first()
        let open = await self.registry.withValue { $0.open.count }
        if let config, open > config.maxConnections * 100 {
            throw ServiceError.notFound("busy")
        }
        let body = try await (self.lookup(request.path) |> map { $0.uppercased() }).get()
        await self.registry.withValue { $0.served += 1 }
        return body
    }

    deinit {
        self.subscriptions.dispose()
    }
}

actor MetricsCollector {
    private(set) var configs: [Config] = []

    func watch(_ promise: ValuePromise<Config>, until count: Int) async {
        for await config in promise.values {
            self.configs.append(config)
            if self.configs.count == count { break }
        }
    }
}

@Suite struct ServerClientTests {
    @Test func handlersAwaitSignalsConcurrently() async throws {
        let service = Service()
        service.start()
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for id in 0..<20 {
                group.addTask { try await service.handle(Request(id: id, path: "/\(id)")) }
            }
            var bodies: [String] = []
            for try await body in group { bodies.append(body) }
            return bodies
        }
        #expect(bodies.count == 20)
        #expect(await service.registry.withValue { $0.served } == 20)
        await #expect(throws: ServiceError.notFound("nope")) {
            try await service.handle(Request(id: 99, path: "nope"))
        }
    }

    @Test func promisesAndDisposablesCrossTasks() async {
        let service = Service()
        let collector = MetricsCollector()
        let watching = Task { await collector.watch(service.config, until: 2) }
        // The watcher subscribes lazily; keep changing the config until it has seen two values.
        var next = 3
        await eventually {
            service.config.set(Config(maxConnections: next))
            next += 1
            return await collector.configs.count >= 2
        }
        await watching.value
        #expect(await collector.configs.count == 2)

        let received = Atomic(value: 0)
        let subscription = service.requests.signal().start(next: { _ in received.modify { $0 + 1 } })
        let owner = Task {
            await subscription.disposeOnCancellation()
        }
        service.requests.putNext(Request(id: 1, path: "/"))
        owner.cancel()
        await owner.value
        service.requests.putNext(Request(id: 2, path: "/"))
        #expect(received.with { $0 } == 1)
    }

    @Test func asyncSequencesFeedSignalCode() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        for value in 1...5 { continuation.yield(value) }
        continuation.finish()
        let total = await (Signal(stream) |> reduceLeft(value: 0, f: +)).first()
        #expect(total == 15)
    }

    @Test func legacyQueueCodeAndActorShareState() async {
        let service = Service()
        service.start()
        for id in 0..<10 {
            service.requests.putNext(Request(id: id, path: "/"))
        }
        let queued = DispatchSemaphore(value: 0)
        service.queue.async {
            service.registry.withValueOnQueue { $0.open.insert(100) }
            queued.signal()
        }
        #expect(await wait(queued))
        #expect(await service.registry.withValue { $0.open.count } == 11)
    }
}
