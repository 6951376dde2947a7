// The guide's recipe for streaming a database query to an HTTP client: the rows are read at the
// client's pace, so a slow client holds the server to a few hundred rows whatever the result's size.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

// MARK: - Streaming a database query to an HTTP client

/// A row of the query's result.
nonisolated struct ExportedRow: Sendable, Equatable {
    var id: Int
    var name: String
}

/// Streams `rows` to `write` as CSV at the client's pace. `rows` stands for the driver's result, an
/// `AsyncSequence` that reads from the connection as it is iterated (postgres-nio's
/// `PostgresRowSequence`, say); `write` for the response body's writer, which returns once the client
/// has taken the bytes.
nonisolated func streamRows<Rows: AsyncSequence & Sendable>(
    _ rows: Rows, to write: (String) async throws -> Void
) async throws where Rows.Element == ExportedRow, Rows.Failure == any Error {
    // `Signal(rows)` pulls the next row only when the loop below has room for it; `map` passes that
    // on. At most 256 lines wait for the writer, and the driver reads nothing more meanwhile.
    let lines = Signal(rows) |> map { row in "\(row.id),\(row.name)\n" }
    for try await line in lines.values(bufferingPolicy: .bounded(256)) {
        try await write(line)
    }
}

/// The same rows from a driver that needs work of its own per row, in an async body: each row is sent
/// with `waitingForRoom`, which waits while the loop has no room (`send(row)` would never wait).
nonisolated func rowSignal(query: @escaping @Sendable () async throws -> [ExportedRow]) -> Signal<ExportedRow, any Error> {
    return Signal { send in
        for row in try await query() {
            await send.waitingForRoom(row)
        }
    }
}

// MARK: - Tests

/// The integers `1...count` as rows, counting how many were read.
nonisolated struct CountedRows: AsyncSequence, Sendable {
    typealias Element = ExportedRow
    typealias Failure = any Error

    let count: Int
    let read: Atomic<Int>

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let read: Atomic<Int>

        mutating func next() async throws -> ExportedRow? {
            let id = self.read.modify { $0 + 1 }
            return id <= self.count ? ExportedRow(id: id, name: "row \(id)") : nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        return AsyncIterator(count: self.count, read: self.read)
    }
}

@Suite struct RecipesFlowControlTests {
    @Test func aSlowClientHoldsTheQueryToTheRoom() async throws {
        let read = Atomic(value: 0)
        var written: [String] = []
        var lead = 0
        try await streamRows(CountedRows(count: 5_000, read: read)) { line in
            written.append(line)
            lead = max(lead, read.with { $0 } - written.count)
            // A slow client: the writer gives the reader every chance to run ahead.
            for _ in 0..<5 { await Task.yield() }
        }
        #expect(written.count == 5_000)
        #expect(written.first == "1,row 1\n")
        #expect(written.last == "5000,row 5000\n")
        #expect(lead <= 258, "the query was read \(lead) rows ahead of the client")
    }

    @Test func anAsyncBodyWaitsForRoomToo() async throws {
        let rows = rowSignal(query: { (1...1_000).map { ExportedRow(id: $0, name: "row \($0)") } })
        var ids: [Int] = []
        for try await row in rows.values(bufferingPolicy: .bounded(8)) {
            ids.append(row.id)
        }
        #expect(ids == Array(1...1_000))
    }
}
