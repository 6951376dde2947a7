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
/// From PostgreSQL when the server has a database, generated otherwise. The database's rows are read a
/// page at a time (``exportPage``), each page a query of its own, read while the client's stream
/// takes the page before (``pagedRows(count:pageSize:read:)``): the first page is read before the
/// rows' signal is sent, so a
/// database that is down, or a pool that cannot connect, fails this signal or keeps it waiting, and the
/// route can still answer 503 (``startExport(_:within:on:)``) instead of a 200 whose body breaks off.
/// Either way a row is sent only when the client's stream has room for it (see
/// ``exportResponse(rows:room:slot:watch:)``).
///
/// Pages rather than one query streamed for the whole export: an export that ends early (its client
/// gone or cut off, its deadline passed) leaves at most one page's query to finish, where one streamed
/// query went on reading its rows on the connection to the end, holding the connection and a core
/// while the export's place was free again. And the driver (postgres-nio 1.33.2) stops the process
/// when the database goes away while a streamed query waits for its reader (a precondition in its row
/// stream); a page is read at once, whole.
///
/// A later page that does not come within `pageLimit` seconds (the database went away during the
/// export, and the pool waits to reconnect) ends the export with an error, which cuts its body off, as
/// a client that stops reading is cut off.
func exportRows(
    count: Int, database: PostgresClient?, pageLimit: Double = 10, timers: Queue = .concurrentDefaultQueue(), logger: Logger
) -> Signal<Signal<ExportRow, any Error>, any Error> {
    guard let database else {
        return .single(Signal(GeneratedRows(count: count)) |> castError((any Error).self))
    }
    return pagedRows(count: count) { from, through in
        let page = Signal(operation: { () async throws(any Error) -> [ExportRow] in
            try await exportPage(database, from: from, through: through, logger: logger)
        })
        switch try await page.first(within: .seconds(pageLimit), scheduler: timers) {
        case .value(let rows): return rows
        case .timedOut: throw ExportPageTimedOut(from: from, seconds: pageLimit)
        case .empty, .cancelled: throw CancellationError()
        }
    }
}

/// The database did not give an export's page in time.
struct ExportPageTimedOut: Error, CustomStringConvertible {
    var from: Int
    var seconds: Double

    var description: String {
        return "no rows from \(self.from) on within \(Int((self.seconds * 1000).rounded())) ms"
    }
}

/// The rows `1...count`, read with `read` a page of `pageSize` at a time: the first page before the
/// rows' signal is sent, each later one while the subscriber takes the page before (one page ahead, so
/// that the client is not kept waiting while a page is read), none once the subscriber has gone.
func pagedRows(
    count: Int, pageSize: Int = exportPageSize, read: @escaping @Sendable (_ from: Int, _ through: Int) async throws -> [ExportRow]
) -> Signal<Signal<ExportRow, any Error>, any Error> {
    precondition(pageSize >= 1, "pagedRows: the page size must be at least 1, got \(pageSize)")
    return Signal(operation: { () async throws(any Error) -> Signal<ExportRow, any Error> in
        let first = count >= 1 ? try await read(1, min(count, pageSize)) : []
        return Signal { (send) throws(any Error) in
            var page = first
            var next = min(count, pageSize) + 1
            while true {
                let from = next
                let through = min(count, from + pageSize - 1)
                next = through + 1
                async let following = from <= through ? read(from, through) : []
                for row in page { await send.waitingForRoom(row) }
                // Disposed (the client is gone): the waits above return at once, and leaving cancels the
                // page being read; no later page is read.
                guard from <= through, !Task.isCancelled else { return }
                page = try await following
            }
        }
    })
}

/// Rows an export reads from the database with one query.
let exportPageSize = 1_000

/// The rows numbered `from...through` (none when `through < from`), read whole with one query on a
/// connection of `database`, which goes back to the pool as the query ends.
func exportPage(_ database: PostgresClient, from: Int, through: Int, logger: Logger) async throws -> [ExportRow] {
    guard from <= through else { return [] }
    let rows = try await database.query(
        "SELECT g, (ARRAY['ACME','GLOBEX','INITECH'])[g % 3 + 1], (100 + g % 50)::float8, 1 + g % 9 FROM generate_series(\(from), \(through)) AS g",
        logger: logger)
    var page: [ExportRow] = []
    page.reserveCapacity(through - from + 1)
    for try await (seq, symbol, price, size) in rows.decode((Int, String, Double, Int).self) {
        page.append(ExportRow(seq: seq, symbol: symbol, price: price, size: size))
    }
    return page
}

/// The rows `start` sends, once it sends them within `seconds`: the export's status is decided here,
/// before the response's head goes out.
///
/// - Throws: The ``APIError`` `start` fails with; ``APIError`` 503 `log_unavailable` when it fails
///   otherwise, or sends nothing within `seconds` (it is disposed then, which cancels its read);
///   `CancellationError` when the request is cancelled meanwhile.
func startExport(
    _ start: Signal<Signal<ExportRow, any Error>, any Error>, within seconds: Double, on timers: Queue
) async throws -> Signal<ExportRow, any Error> {
    let outcome: FirstValueOutcome<Signal<ExportRow, any Error>>
    do {
        outcome = try await start.first(within: .seconds(seconds), scheduler: timers)
    } catch let error as APIError {
        throw error
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
/// to about `room` rows and one chunk (and what the producer holds: two pages of a database's rows),
/// whatever the size of the result. The response keeps `slot` until
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
