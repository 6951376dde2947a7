// The names that the Swift blocks of README.md and the DocC catalogues take for granted.
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
}

package let file = LogFile()
package let lines = ValuePipe<String>().signal()

/// The code under test of the *Testing with virtual time* article (its first block declares it).
package nonisolated func lookups(
    for text: Signal<String, NoError>, scheduler: some SignalScheduler, clock: some Clock<Duration>
) -> Signal<String, NoError> {
    return text |> mapAsync(.latest) { query in "results for \(query)" }
}
