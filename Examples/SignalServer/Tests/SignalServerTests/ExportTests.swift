import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Testing

@testable import SignalServerApp

/// `GET /export`: a large result streamed at the client's pace.
@Suite struct ExportTests {
    @Test func theExportIsEveryRowInOrder() async throws {
        try await withServer { server in
            let reply = try await server.get("export?rows=20000")
            #expect(reply.status == 200)
            let lines = reply.body.split(separator: "\n")
            #expect(lines.count == 20_000)
            #expect(lines.first == "1,GLOBEX,101.0,2")
            #expect(lines.map { Int($0.prefix { $0 != "," }) } == Array(1...20_000))
            #expect(try await server.get("export?rows=0").body == "")
        }
    }

    @Test func aRowCountThatIsNotOneIs400() async throws {
        try await withServer { server in
            for bad in ["-1", "abc", "100000001", "1.5"] {
                let reply = try await server.get("export?rows=\(bad)")
                #expect(reply.status == 400, "rows=\(bad)")
                #expect(reply.body.contains("rows must be a whole number from 0 to 100000000"))
            }
        }
    }

    /// At most `exportLimit` exports run at once: one more is refused at once with 503 `export_busy` and
    /// `Retry-After`, and an export's place comes back when its client goes, although it never read.
    @Test func exportsBeyondTheLimitAreRefusedUntilOneEnds() async throws {
        try await withServer({ $0.exportLimit = 1 }) { server in
            var stalled: StalledClient? = try StalledClient(port: server.port, path: "/export?rows=100000000")
            try await eventually("the stalled export is running") { try await server.metrics().exports == 1 }
            let refused = try await server.get("export?rows=10")
            #expect(refused.status == 503)
            #expect(try refused.decoded(ErrorBody.self).error == "export_busy")
            #expect(refused.retryAfter == "1")
            #expect(try await server.metrics().exports == 1, "a refused export takes no place")

            stalled = nil
            try await eventually("the stalled export's place is given back") { try await server.metrics().exports == 0 }
            let served = try await server.get("export?rows=10")
            #expect(served.status == 200)
            #expect(served.body.split(separator: "\n").count == 10)
            withExtendedLifetime(stalled) {}
        }
    }

    /// A client that stops reading is cut off after the slow-client limit, like a stream's, and its
    /// place comes back although it keeps its end of the connection open.
    @Test func aClientThatStopsReadingIsCutOffAndGivesItsPlaceBack() async throws {
        try await withServer({
            $0.exportLimit = 1
            $0.slowClientLimit = 0.2
        }) { server in
            let stalled = try StalledClient(port: server.port, path: "/export?rows=100000000")
            try await eventually("the stalled export is running") { try await server.metrics().exports == 1 }
            try await eventually("the stalled client is cut off") { try await server.metrics().exports == 0 }
            #expect(try await server.get("export?rows=10").status == 200)
            withExtendedLifetime(stalled) {}
        }
    }

    /// An export gives its place back before it sends its last bytes, so a client that asks again as
    /// soon as it has read one, on a new connection, finds the place free. (Given back when the response
    /// was released, it was still taken for a few milliseconds after: 4 to 8 in 100 such requests got 503.)
    @Test func anExportGivesItsPlaceBackBeforeItsLastBytes() async throws {
        let gate = ExportGate(limit: 1)
        let response = exportResponse(rows: Signal(GeneratedRows(count: 10)) |> castError((any Error).self), slot: gate.enter())
        let writer = FinishRecorder { gate.count }
        try await response.body.write(writer)
        #expect(writer.runningAtFinish.with { $0 } == 0)
        #expect(writer.bytes.with { $0 } > 0)
    }

    @Test func theExportLimitIsANumberFromOneToOneThousand() throws {
        #expect(try ServerConfiguration(arguments: ["--export-limit", "50"]).exportLimit == 50)
        #expect(ServerConfiguration().exportLimit == 8)
        for bad in ["0", "-1", "1001", "x", "1.5"] {
            #expect(throws: ConfigurationError("--export-limit needs a number from 1 to 1000, got \(bad)")) {
                try ServerConfiguration(arguments: ["--export-limit", bad])
            }
        }
    }

    /// The rows are made only as the client takes them: with a client that has not read, the generator
    /// is held at the response's room plus what the socket buffers, not at the end of the result.
    @Test func rowsAreMadeAtTheClientsPace() async throws {
        let made = GeneratedRowsProbe()
        let rows = Signal(GeneratedRows(count: 1_000_000)) |> beforeNext { _ in made.count.modify { $0 + 1 } }
        let response = exportResponse(rows: rows |> castError((any Error).self), room: 16)
        let writer = SlowWriter()
        let task = Task { try await response.body.write(writer) }
        try await eventually("the second chunk waits for the client") { writer.chunks.with { $0 } >= 2 }
        for _ in 0..<50 { await Task.yield() }
        let whileStalled = made.count.with { $0 }
        // The writer holds the second write: the loop cannot take more rows, so the generator waits
        // once the response's room of 16 is full. Two 16 KiB chunks are about 1,800 rows.
        #expect(whileStalled < 4_000, "\(whileStalled) rows were made for a client that read one chunk")
        writer.release()
        try await task.value
        #expect(made.count.with { $0 } == 1_000_000)
    }
}

/// A response body writer that records what `running` says when the response finishes.
final class FinishRecorder: ResponseBodyWriter, Sendable {
    let running: @Sendable () -> Int
    let runningAtFinish = Atomic<Int?>(value: nil)
    let bytes = Atomic(value: 0)

    init(running: @escaping @Sendable () -> Int) {
        self.running = running
    }

    func write(_ buffer: ByteBuffer) async throws {
        self.bytes.modify { $0 + buffer.readableBytes }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {
        _ = self.runningAtFinish.swap(self.running())
    }
}

/// Counts the rows a generator made.
final class GeneratedRowsProbe: Sendable {
    let count = Atomic(value: 0)
}

/// A response body writer whose first write completes at once and whose later writes wait until
/// ``release()``: a client that read one chunk and stopped.
final class SlowWriter: ResponseBodyWriter, Sendable {
    /// Writes begun so far.
    let chunks = Atomic(value: 0)
    private let gate = ValuePromise<Bool>(false)

    func write(_ buffer: ByteBuffer) async throws {
        if self.chunks.modify({ $0 + 1 }) > 1 {
            _ = try await (self.gate.get() |> filter { $0 }).get()
        }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}

    func release() {
        self.gate.set(true)
    }
}

/// `GET /export` decides its status once the rows can be read: a database that is down is a 503, not a
/// 200 whose body breaks off a minute later.
@Suite struct ExportStartTests {
    /// An export whose rows never become readable (the export pool cannot connect) is answered 503
    /// `log_unavailable` at its deadline, and what was starting it is disposed, giving its connection
    /// request back.
    @Test func rowsThatNeverBecomeReadableAre503AtTheDeadline() async throws {
        let disposed = Atomic(value: false)
        let start = Signal<Signal<ExportRow, any Error>, any Error>.never() |> afterDisposed { disposed.swap(true) }
        let error = try await #require(throws: APIError.self) { try await startExport(start, within: 0.05, on: Queue()) }
        #expect(error.status == .serviceUnavailable)
        #expect(error.code == "log_unavailable")
        #expect(error.message == "the export could not start: the database did not answer within 50 ms")
        #expect(error.retryAfter == 1)
        try await eventually("the start is disposed") { disposed.with { $0 } }
    }

    struct Refused: Error {}

    /// A start that fails (the database refused the query, or the pool gave up connecting) is a 503
    /// naming the failure.
    @Test func aStartThatFailsIs503() async throws {
        let start = Signal<Signal<ExportRow, any Error>, any Error>.fail(Refused())
        let error = try await #require(throws: APIError.self) { try await startExport(start, within: 5, on: Queue()) }
        #expect(error.status == .serviceUnavailable)
        #expect(error.code == "log_unavailable")
        #expect(error.message.hasPrefix("the export could not start: database: Refused"))
    }

    /// Rows that can be read are the export's rows, read as the client takes them.
    @Test func readableRowsAreTheExport() async throws {
        let start = exportRows(count: 3, database: nil, logger: Logger(label: "test"))
        let rows = try await startExport(start, within: 5, on: Queue())
        var seqs: [Int] = []
        for try await row in rows.values(bufferingPolicy: .unbounded) { seqs.append(row.seq) }
        #expect(seqs == [1, 2, 3])
    }

    /// A database's rows come a page (one query) at a time, every row once, in order, whatever the count.
    @Test(arguments: [0, 1, 999, 1000, 1001, 2500])
    func pagesCoverEveryRowOnce(_ count: Int) async throws {
        let pages = Atomic<[ClosedRange<Int>]>(value: [])
        let start = pagedRows(count: count) { from, through in
            pages.modify { $0 + [from...through] }
            return (from...through).map(ExportRow.made)
        }
        let rows = try await startExport(start, within: 60, on: Queue())
        var seqs: [Int] = []
        for try await row in rows.values(bufferingPolicy: .bounded(16)) { seqs.append(row.seq) }
        #expect(seqs == Array(0..<count).map { $0 + 1 })
        let expected = stride(from: 1, through: count, by: 1000).map { $0...min(count, $0 + 999) }
        #expect(pages.with { $0 } == expected)
    }

    /// The first page is read before the export starts: a first read that fails is a 503, and so is one
    /// that does not return by the deadline.
    @Test func theFirstPageDecidesTheStatus() async throws {
        let failing = pagedRows(count: 10) { _, _ in throw Refused() }
        let failed = try await #require(throws: APIError.self) { try await startExport(failing, within: 60, on: Queue()) }
        #expect(failed.code == "log_unavailable")
        let (never, _) = AsyncStream<Void>.makeStream()
        let hanging = pagedRows(count: 10) { _, _ in
            for await _ in never {}
            throw CancellationError()
        }
        let late = try await #require(throws: APIError.self) { try await startExport(hanging, within: 0.05, on: Queue()) }
        #expect(late.message == "the export could not start: the database did not answer within 50 ms")
    }

    /// An export waiting to start when the server shuts down is answered after the shutdown grace, with
    /// the failure the route gives it, not held to its deadline.
    @Test func anExportWaitingAtShutdownIsAnsweredAfterTheGrace() async throws {
        let closed = ValuePromise<Int>(3)
        let start =
            Signal<Signal<ExportRow, any Error>, any Error>.never()
            |> failingAfterShutdown(
                closed.get(), grace: 0.01, on: Queue(),
                with: {
                    APIError(.serviceUnavailable, code: "log_unavailable", message: "the export could not start: \($0)", retryAfter: 1)
                })
        let error = try await #require(throws: APIError.self) { try await startExport(start, within: 60, on: Queue()) }
        #expect(error.message == "the export could not start: no answer 10 ms after the server began shutting down")
        #expect(error.status == .serviceUnavailable)
    }

    /// Over HTTP: the deadline is the request's `deadline_ms`, checked like a quote's.
    @Test func theExportsDeadlineIsCheckedLikeAQuotes() async throws {
        try await withServer { server in
            #expect(try await server.get("export?rows=3&deadline_ms=5000").body == "1,GLOBEX,101.0,2\n2,INITECH,102.0,3\n3,ACME,103.0,4\n")
            let refused = try await server.get("export?rows=3&deadline_ms=0")
            #expect(refused.status == 400)
            #expect(refused.body.contains("deadline_ms must be a whole number of milliseconds from 1 to 60000, got 0"))
            #expect(try await server.metrics().exports == 0, "a refused export takes no place")
        }
    }
}
