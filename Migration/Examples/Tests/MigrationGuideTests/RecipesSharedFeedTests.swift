// The guide's recipe for a feed that a database announces (PostgreSQL LISTEN/NOTIFY, say): the driver's
// notifications as a signal, followed across lost connections with no gap and no repeat.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

// MARK: - Following a database's notifications across reconnects

/// An event the database numbered: 1, 2, 3, … with no hole.
nonisolated struct NumberedEvent: Sendable, Equatable {
    var seq: Int
    var body: String
}

/// What a driver gives for one connection: the events after a number, read once the connection
/// listens, and the notifications from then on.
nonisolated struct FeedConnection: Sendable {
    var missed: [NumberedEvent]
    var notifications: AsyncThrowingStream<NumberedEvent, any Error>
}

/// A connection that closed without an error: for a feed that never ends, a lost connection.
nonisolated struct FeedConnectionClosed: Error {}

/// Follows the feed into `apply`, in number order, each event once, until the result is disposed.
///
/// `connect(after)` stands for the driver: it connects, starts listening, then reads the events after
/// `after`. Listening first means nothing committed in between is missed; what comes twice (read and
/// notified) is dropped here by number.
func followFeed(
    connect: @escaping @Sendable (_ after: Int) async throws -> FeedConnection,
    apply: @escaping @Sendable (NumberedEvent) -> Void
) -> any Disposable {
    let applied = Atomic(value: 0)
    // One connection's life as a signal: the async-body bridge runs it in a task, which disposing
    // cancels, and which ends (closing the connection) when the notifications fail.
    let connection = deferred {
        let after = applied.with { $0 }
        return Signal<NumberedEvent, any Error> { send in
            let connection = try await connect(after)
            for event in connection.missed { send(event) }
            for try await event in connection.notifications { send(event) }
        }
            |> then(.fail(FeedConnectionClosed()))
    }
    // Each retry starts a new connection from the last event applied, after a jittered wait.
    let followed = connection |> retry(.exponential(initial: .milliseconds(50), maxDelay: .seconds(2)), maxAttempts: .max)
    return followed.start(next: { event in
        // Events come one at a time, so reading and then writing `applied` is safe here.
        guard event.seq > applied.with({ $0 }) else { return }
        _ = applied.swap(event.seq)
        apply(event)
    })
}

// MARK: - Tests

@Suite struct RecipesSharedFeedTests {
    /// A database of `count` events whose connections each deliver a few notifications and then drop.
    nonisolated final class FlakyDatabase: Sendable {
        let events: [NumberedEvent]
        let connections = Atomic<[Int]>(value: [])

        init(count: Int) {
            self.events = (1...count).map { NumberedEvent(seq: $0, body: "event \($0)") }
        }

        /// Reads up to two events after `after`, notifies three more, then fails; the connection that
        /// reaches the end stays open.
        func connect(after: Int) -> FeedConnection {
            self.connections.modify { $0 + [after] }
            let missed = Array(self.events.dropFirst(after).prefix(2))
            let notified = Array(self.events.dropFirst(after + missed.count).prefix(3))
            let isLast = after + missed.count + notified.count >= self.events.count
            let notifications = AsyncThrowingStream<NumberedEvent, any Error> { continuation in
                for event in notified { continuation.yield(event) }
                if !isLast { continuation.finish(throwing: FeedConnectionClosed()) }
            }
            return FeedConnection(missed: missed, notifications: notifications)
        }
    }

    @Test func everyEventArrivesOnceAndInOrderAcrossLostConnections() async {
        let database = FlakyDatabase(count: 12)
        let received = Atomic<[Int]>(value: [])
        let following = followFeed(connect: { database.connect(after: $0) }, apply: { event in received.modify { $0 + [event.seq] } })
        await eventually { received.with { $0.count } == 12 }
        following.dispose()
        #expect(received.with { $0 } == Array(1...12))
        // Each connection started from the last event applied.
        #expect(database.connections.with { $0 }.count >= 3)
        #expect(database.connections.with { $0 } == database.connections.with { $0 }.sorted())
    }

    @Test func aRepeatedEventIsAppliedOnce() async {
        // The connection reads event 1 and is also notified of it (it committed while the read ran).
        let received = Atomic<[Int]>(value: [])
        let event = NumberedEvent(seq: 1, body: "event 1")
        let following = followFeed(
            connect: { _ in
                FeedConnection(
                    missed: [event],
                    notifications: AsyncThrowingStream { continuation in
                        continuation.yield(event)
                        continuation.yield(NumberedEvent(seq: 2, body: "event 2"))
                    })
            }, apply: { event in received.modify { $0 + [event.seq] } })
        await eventually { received.with { $0.count } >= 2 }
        following.dispose()
        #expect(received.with { $0 } == [1, 2])
    }
}
