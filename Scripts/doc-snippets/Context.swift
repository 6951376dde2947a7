// The names that the Swift blocks of README.md, the DocC catalogues and the sources' doc comments take
// for granted.
//
// Scripts/check-doc-snippets.py compiles this file as the module `SnippetContext`, which every block
// imports (hence `package`: the blocks are modules of the same throwaway package). A block's own
// declarations shadow these. Give each name the type a reader would guess from the blocks that use it;
// the bodies only have to compile.
//
// The types are `nonisolated`, as a module whose default isolation is the main actor declares the values
// its signals carry and the objects that live on a queue (`--approachable` compiles this file so): their
// conformances (`Equatable` for `ValuePromise`) and methods are used off the main actor, where values
// are compared and sent and queue work runs.

import SwiftSignalKit
import SwiftSignalKitConcurrency

// MARK: - An app with users, settings and a status

package nonisolated struct User: Sendable, Equatable, Identifiable {
    package let id: String
    package let name: String
}

package nonisolated struct Settings: Sendable, Equatable {
    package var darkMode = false
}

package nonisolated enum Status: Sendable, Equatable {
    case connecting
    case ready
}

package let userSignal = Signal<User, APIError>.single(User(id: "1", name: "Ada"))
package let settings = Promise<Settings>(Settings())
package let settingsPromise = Promise<Settings>(Settings())
package let statusPromise = ValuePromise<Status>(.connecting)

package func apply(_ settings: Settings) {}

// MARK: - A network API with typed errors

package nonisolated struct Profile: Sendable, Equatable {
    package let user: User
    package let bio: String
}

package nonisolated enum APIError: Error, Equatable {
    case offline
    case notFound
}

package nonisolated final class APIClient: Sendable {
    package func profile(_ id: User.ID) async throws(APIError) -> Profile {
        throw .offline
    }
}

package let api = APIClient()
package let userIDs = Signal<User.ID, APIError>.single("1")
package let id: User.ID = "1"

package func show(_ profile: Profile) {}

// MARK: - Search as you type

package nonisolated struct SearchResult: Sendable, Equatable {
    package let title: String
}

package let query = ValuePromise<String>("")

package func search(_ text: String) -> Signal<[SearchResult], NoError> {
    return .single([SearchResult(title: text)])
}

package func show(_ results: [SearchResult]) {}

/// The search as an async call to a remote index.
package func searchRemote(_ text: String) async throws(APIError) -> [SearchResult] {
    return [SearchResult(title: text)]
}

// MARK: - A database with rows

package nonisolated struct Row: Sendable, Equatable {
    package let id: Int

    package init(id: Int) {
        self.id = id
    }
}

package nonisolated enum DBError: Error, Equatable {
    case closed
}

package nonisolated final class Database: Sendable {
    /// The rows of a table, one by one.
    package func rows() -> AsyncThrowingStream<Row, any Error> {
        return AsyncThrowingStream { $0.finish() }
    }

    package func isVisible(_ row: Row) async -> Bool {
        return true
    }
}

package let db = Database()

// MARK: - State confined to a queue

/// A session of a logged-in user: mutable, not `Sendable`, kept on one queue.
package nonisolated final class Session {
    package var lastSeen: Double = 0

    package init() {}
}

// MARK: - A log file written from a queue

/// An open file; `write` and `close` are called on one queue.
package nonisolated final class LogFile: Sendable {
    package func write(_ line: String) {}
    package func close() {}

    /// The file's lines, read as they are written.
    package var lines: AsyncStream<String> {
        return AsyncStream { $0.finish() }
    }
}

package let file = LogFile()
package let lines = ValuePipe<String>().signal()

/// The code under test of the *Testing with virtual time* article (its first block declares it).
package nonisolated func lookups(
    for text: Signal<String, NoError>, scheduler: some SignalScheduler, clock: some Clock<Duration>
) -> Signal<String, NoError> {
    return text |> mapAsync(.latest) { query in "results for \(query)" }
}

// MARK: - The examples in the sources' doc comments

package nonisolated struct Quote: Sendable, Equatable {
    package let symbol: String
    package let price: Double
}

package nonisolated struct Trade: Sendable, Equatable {
    package let symbol: String
}

package nonisolated struct Request: Sendable, Equatable {
    package let userID: User.ID
}

package nonisolated struct Upload: Sendable, Equatable {}
package nonisolated struct Thumbnail: Sendable {}
package nonisolated struct Token: Sendable {}

package nonisolated struct Item: Sendable, Equatable {
    package let price: Int
}

package nonisolated struct Login: Sendable {
    package let id: String
}

/// The errors of a request with a deadline.
package nonisolated enum RequestError: Error, Equatable {
    case timedOut
    case stalled
}

/// A handler's answer.
package nonisolated enum HTTPResponse: Sendable {
    case ok(Quote)
    case notFound
    case gatewayTimeout
    case clientClosedRequest
}

extension Database {
    package func load(_ request: Request) async throws(DBError) -> Row {
        return Row(id: 1)
    }

    package func loadProfile(_ id: User.ID) async throws(DBError) -> Profile {
        throw .closed
    }
}

extension Session {
    package convenience init(_ login: Login) {
        self.init()
    }
}

/// A client written before typed throws: its errors are `any Error`.
package nonisolated final class LegacyClient: Sendable {
    package func row(_ id: User.ID) async throws -> Row {
        return Row(id: 1)
    }

    package func profile(_ id: User.ID) -> Signal<Profile, APIError> {
        return .fail(.notFound)
    }
}

/// A client with completion handlers, of the kind a `Signal { subscriber in ... }` wraps.
package nonisolated final class CallbackClient: Sendable {
    package final class Request: Sendable {
        package func cancel() {}
    }

    package func fetchUser(id: User.ID, completion: @escaping @Sendable (Result<User, APIError>) -> Void) -> Request {
        completion(.failure(.offline))
        return Request()
    }
}

package let callbackClient = CallbackClient()

package nonisolated final class Exchange: Sendable {
    package func quotes(_ symbol: String) -> Signal<Quote, NoError> {
        return .single(Quote(symbol: symbol, price: 1))
    }

    package func connect() {}
}

package nonisolated final class Renderer: Sendable {
    package func thumbnail(of upload: Upload) async -> Thumbnail {
        return Thumbnail()
    }
}

package nonisolated final class Scanner: Sendable {
    package func isClean(_ upload: Upload) async -> Bool {
        return true
    }
}

package nonisolated final class Auth: Sendable {
    package func session(for token: Token) async throws -> Login? {
        return nil
    }
}

package nonisolated final class Client: Sendable {
    package func write(_ trade: Trade) async throws {}
}

/// An object whose work is confined to a queue, reached through a `QueueLocalObject` (`impl`).
package nonisolated final class Impl {
    package let id = 1

    package func context(for key: String) -> (Disposable, Control)? {
        return nil
    }

    package func start() -> Disposable {
        return EmptyDisposable
    }
}

package nonisolated final class Control: Sendable {
    package let id: Int

    package init(id: Int) {
        self.id = id
    }

    package func attach(_ disposable: Disposable) {}
}

package let updates = ValuePipe<String>().signal()
package let heartbeat = ValuePipe<Int>().signal()
package let firstSignal = ValuePipe<Int>().signal()
package let secondSignal = ValuePipe<Int>().signal()
package let expensiveFeed = ValuePipe<Quote>().signal()
package let remoteProfile = Signal<Profile, APIError>.fail(.offline)
package let cachedProfile = Signal<Profile, APIError>.fail(.notFound)
package let cached = Signal<Profile, APIError>.fail(.notFound)
package let fresh = Signal<Profile, APIError>.fail(.offline)
package let userName = ValuePipe<String>().signal()
package let unreadCount = ValuePipe<Int>().signal()
package let names = ValuePipe<String>().signal()
package let users = Signal<User?, NoError>.single(nil)
package let temperature = ValuePipe<Int>().signal()
package let requests = Signal<Request, DBError>.single(Request(userID: "1"))
package let amounts = ValuePipe<Int>().signal()
package let settingsChanged = ValuePipe<Void>().signal()
package let accountChanged = ValuePipe<Void>().signal()
package let exchange = Exchange()
package let symbol = "ACME"
package let states = statusPromise.get()
package let status = statusPromise.get()
package let searchField = ValuePipe<String>().signal()
package let queries = ValuePipe<String>().signal()
package let downloadProgress = ValuePipe<Double>().signal()
package let request = Signal<String, RequestError>.single("reply")
package let quotes = Signal<Quote, RequestError>.single(Quote(symbol: "ACME", price: 1))
package let feed = ValuePipe<Trade>().signal()
package let client = Client()
package let uploads = ValuePipe<Upload>().signal()
package let renderer = Renderer()
package let scanner = Scanner()
package let tokens = ValuePipe<Token>().signal()
package let auth = Auth()
package let ids = Signal<User.ID, DBError>.single("1")
package let legacyClient = LegacyClient()
package let settingsSignal = settings.get()
package let downloadSignal = Signal<[UInt8], DBError>.single([1])
package let logins = ValuePipe<Login>().signal()
package let sessions = QueueLocalActor(queue: Queue(name: "sessions"), value: [String: Session]())
package let ticks = ValuePipe<Int>().signal()
package let disposables = DisposableSet()
package let uiQueue = Queue.mainQueue()
package let url = "https://example.com/a"
package let impl = QueueLocalObject(queue: Queue(name: "impl"), generate: { Impl() })
package let key = "key"
package let database = Queue(name: "database")
package let cache = Queue(name: "cache")
package let timer = SwiftSignalKit.Timer(timeout: 1, repeat: false, completion: {}, queue: Queue(name: "timer"))

package func download(_ url: String) -> Signal<[UInt8], NoError> {
    return .single([])
}

package func save(_ request: Request) -> Signal<Row, DBError> {
    return .single(Row(id: 1))
}

package func fetch(_ id: User.ID) async throws -> Row {
    return Row(id: 1)
}

package func loadProfile(_ id: User.ID) async throws(DBError) -> Profile {
    throw .closed
}

package func refreshForever() async {}
package func flush() {}
package func render(_ value: some Sendable) {}
package func redraw(_ value: some Sendable) {}
package func record(_ value: some Sendable) {}
package func handle(_ value: some Sendable) {}
package func log(_ value: some Sendable) {}
package func write(_ value: some Sendable) async throws {}
package func fallback(_ outcome: some Sendable) {}

/// A cache that a test refreshes on the timeline.
package actor Catalog {
    package func refresh() {}
}

package let catalog = Catalog()
