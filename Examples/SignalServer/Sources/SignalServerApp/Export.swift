import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Synchronization

/// One row of `GET /export`: a numbered trade-like record.
struct ExportRow: Sendable, Equatable {
    var seq: Int
    var symbol: String
    var price: Double
    var size: Int

    /// The row as a line of CSV.
    var csvLine: String {
        return "\(self.seq),\(self.symbol),\(self.price),\(self.size)\n"
    }

    /// The row numbered `seq` of the made-up result: the same for a generated export and a database's.
    static func made(_ seq: Int) -> ExportRow {
        let symbols = ["ACME", "GLOBEX", "INITECH"]
        return ExportRow(seq: seq, symbol: symbols[seq % 3], price: Double(100 + seq % 50), size: 1 + seq % 9)
    }
}

/// The rows `1...count`, each made when the iteration asks for it: nothing is made ahead of the reader.
struct GeneratedRows: AsyncSequence, Sendable {
    typealias Element = ExportRow
    typealias Failure = Never

    let count: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        var next = 1

        mutating func next() async -> ExportRow? {
            guard self.next <= self.count else { return nil }
            defer { self.next += 1 }
            return ExportRow.made(self.next)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(count: self.count)
    }
}

/// The rows of an export, once they can be read: sends one signal of the rows, then completes.
///
/// From PostgreSQL when the server has a database (a `generate_series` query, whose rows the driver
/// reads from the socket as they are asked for), generated otherwise. With a database the query is sent,
/// on a connection of the export pool, and the database has described its columns before the rows'
/// signal is sent: a database that is down, or a pool that cannot connect, fails this signal or keeps
/// it waiting, and the route can still answer 503 (``startExport(_:within:on:)``) instead of a 200
/// whose body breaks off. Either way a row is read only when the client's stream has room for it (see
/// ``exportResponse(rows:room:slot:watch:)``).
///
/// The rows' signal reads the one query's rows: the export subscribes to it once.
func exportRows(count: Int, database: PostgresClient?, logger: Logger) -> Signal<Signal<ExportRow, any Error>, any Error> {
    guard let database else {
        return .single(Signal(GeneratedRows(count: count)) |> castError((any Error).self))
    }
    return Signal(operation: { () async throws(any Error) -> Signal<ExportRow, any Error> in
        // Returns once a connection is leased and the query described; the lease goes back when the rows
        // have been read, or when the sequence is dropped unread (the deadline passed meanwhile).
        let rows = try await database.query(
            "SELECT g, (ARRAY['ACME','GLOBEX','INITECH'])[g % 3 + 1], (100 + g % 50)::float8, 1 + g % 9 FROM generate_series(1, \(count)) AS g",
            logger: logger)
        return Signal { (send) throws(any Error) in
            for try await (seq, symbol, price, size) in rows.decode((Int, String, Double, Int).self) {
                await send.waitingForRoom(ExportRow(seq: seq, symbol: symbol, price: price, size: size))
            }
        }
    })
}

/// The rows `start` sends, once it sends them within `seconds`: the export's status is decided here,
/// before the response's head goes out.
///
/// - Throws: ``APIError`` 503 `log_unavailable` when `start` fails, or sends nothing within `seconds`
///   (it is disposed then, which gives its connection back to the pool); `CancellationError` when the
///   request is cancelled meanwhile.
func startExport(
    _ start: Signal<Signal<ExportRow, any Error>, any Error>, within seconds: Double, on timers: Queue
) async throws -> Signal<ExportRow, any Error> {
    let outcome: FirstValueOutcome<Signal<ExportRow, any Error>>
    do {
        outcome = try await start.first(within: .seconds(seconds), scheduler: timers)
    } catch {
        throw APIError(
            .serviceUnavailable, code: "log_unavailable", message: "the export could not start: \(PostgresTradeLog.describe(error))",
            retryAfter: 1)
    }
    switch outcome {
    case .value(let rows):
        return rows
    case .timedOut:
        throw APIError(
            .serviceUnavailable, code: "log_unavailable",
            message: "the export could not start: the database did not answer within \(Int((seconds * 1000).rounded())) ms", retryAfter: 1)
    case .empty:
        throw APIError(.internalServerError, code: "internal", message: "the export had no rows to read")
    case .cancelled:
        throw CancellationError()
    }
}

/// The exports running, at most `limit`: an export takes a slot when it is asked for and gives it back
/// when its response is released, however it ends (read whole, failed, or its client gone).
///
/// Each export holds its rows' producer, and with a database a connection, for as long as its client
/// takes to read; the limit keeps slow clients from taking more than that.
final class ExportGate: Sendable {
    /// A running export's place, given back by ``release()`` or, at the latest, when the slot goes.
    final class Slot: Sendable {
        private let gate: ExportGate
        private let released = Mutex(false)

        fileprivate init(gate: ExportGate) {
            self.gate = gate
        }

        /// Gives the place back; later calls do nothing. An export calls it before it sends its last
        /// bytes, so that a client that has read the whole export finds the place free.
        func release() {
            let first = self.released.withLock { released in
                defer { released = true }
                return !released
            }
            if first { self.gate.running.withLock { $0 -= 1 } }
        }

        deinit {
            self.release()
        }
    }

    /// The most exports that may run at once.
    let limit: Int
    private let running = Mutex(0)

    init(limit: Int) {
        precondition(limit >= 1, "ExportGate: the limit must be at least 1, got \(limit)")
        self.limit = limit
    }

    /// The exports running now.
    var count: Int { self.running.withLock { $0 } }

    /// A slot for one more export, or nil when `limit` are running.
    func enter() -> Slot? {
        let entered = self.running.withLock { running in
            guard running < self.limit else { return false }
            running += 1
            return true
        }
        return entered ? Slot(gate: self) : nil
    }
}

/// `rows` as CSV, written as the client reads: the loop takes a row only when the previous writes have
/// gone out, and the bounded buffer makes the producer wait meanwhile, so a slow client holds the server
/// to about `room` rows and one chunk, whatever the size of the result. The response keeps `slot` until
/// the export is done or the response is released; `watch`, if given, closes the connection of a client
/// whose writes stay pending too long (see ``SlowClientWatch``).
func exportResponse(
    rows: Signal<ExportRow, any Error>, room: Int = 256, slot: ExportGate.Slot? = nil, watch: (@Sendable () -> SlowClientWatch)? = nil
) -> Response {
    let body = ResponseBody { writer in
        let watching = watch?()
        defer { watching?.stop() }
        func send(_ chunk: ByteBuffer) async throws {
            if let watching {
                try await watching.timing { try await writer.write(chunk) }
            } else {
                try await writer.write(chunk)
            }
        }
        var chunk = ByteBuffer()
        chunk.reserveCapacity(16 << 10)
        for try await line in (rows |> map { $0.csvLine }).values(bufferingPolicy: .bounded(room)) {
            chunk.writeString(line)
            if chunk.readableBytes >= 16 << 10 {
                try await send(chunk)
                chunk.clear()
            }
        }
        if chunk.readableBytes > 0 { try await send(chunk) }
        slot?.release()
        try await writer.finish(nil)
    }
    return Response(status: .ok, headers: [.contentType: "text/csv"], body: body)
}
