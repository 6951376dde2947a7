import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One server-sent event as the client parsed it: a heartbeat comment has the name "heartbeat".
struct SSEEvent: Equatable, Sendable {
    var name: String
    var data: String
}

/// A client reading a server-sent event stream in a task of its own. ``disconnect()`` cancels the
/// request, which closes the connection, as a browser tab that is closed would.
final class EventStream: Sendable {
    let status: Task<Int, any Error>
    private let reader: Task<Void, any Error>
    private let events: AsyncThrowingStream<SSEEvent, any Error>

    /// Opens `url`, sending `headers` with the request.
    init(url: String, headers: [(String, String)] = []) {
        let (events, sink) = AsyncThrowingStream<SSEEvent, any Error>.makeStream()
        let (statuses, statusSink) = AsyncStream<Int>.makeStream()
        self.events = events
        self.reader = Task {
            do {
                var request = HTTPClientRequest(url: url)
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
                statusSink.yield(Int(response.status.code))
                statusSink.finish()
                var pending = ""
                for try await buffer in response.body {
                    pending += String(buffer: buffer)
                    while let end = pending.range(of: "\n\n") {
                        let block = pending[..<end.lowerBound]
                        pending.removeSubrange(..<end.upperBound)
                        sink.yield(SSEEvent(block))
                    }
                }
                sink.finish()
            } catch {
                statusSink.finish()
                sink.finish(throwing: error)
            }
        }
        self.status = Task {
            for await status in statuses { return status }
            return 0
        }
    }

    /// The next event that is not a heartbeat; nil when the stream has ended.
    func next(skippingHeartbeats: Bool = true) async throws -> SSEEvent? {
        var iterator = self.events.makeAsyncIterator()
        while let event = try await iterator.next() {
            if skippingHeartbeats && event.name == "heartbeat" { continue }
            return event
        }
        return nil
    }

    /// Every event up to the end of the stream, heartbeats left out.
    func rest() async throws -> [SSEEvent] {
        var events: [SSEEvent] = []
        while let event = try await self.next() { events.append(event) }
        return events
    }

    /// Closes the connection.
    func disconnect() {
        self.reader.cancel()
    }
}

extension SSEEvent {
    /// Parses one block of `event:`/`data:` lines; a comment line is a heartbeat.
    init(_ block: Substring) {
        var name = "message"
        var data: [Substring] = []
        for line in block.split(separator: "\n") {
            if line.hasPrefix(":") {
                name = "heartbeat"
            } else if line.hasPrefix("event: ") {
                name = String(line.dropFirst("event: ".count))
            } else if line.hasPrefix("data: ") {
                data.append(line.dropFirst("data: ".count))
            }
        }
        self.init(name: name, data: data.joined(separator: "\n"))
    }
}
