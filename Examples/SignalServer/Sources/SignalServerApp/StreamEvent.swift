import Foundation
import Hummingbird
import MarketDomain
import SwiftSignalKit

/// One item of a server-sent event stream, before it is written.
enum StreamEvent: Sendable, Equatable {
    /// The subscription is in place; every trade with a larger sequence number will follow.
    case ready(lastSeq: Int)
    /// A trade.
    case trade(Trade)
    /// The trades between the last one sent (or the client's Last-Event-ID) and `lastSeq` will not come;
    /// every trade after `lastSeq` follows.
    case resynced(lastSeq: Int)
    /// The latest quote (nil until there is one) and the heartbeat count so far, for a stream that only
    /// ever needs the newest of these (see ``StreamWriter``).
    case latest(Quote?, beat: Int)
    /// Nothing happened for a while; keeps proxies from closing an idle connection.
    case heartbeat
    /// The stream ends, for the reason given; `lastSeq` is the last trade the stream carried.
    case end(StreamEnd, lastSeq: Int?)
}

/// Why a stream ended.
enum StreamEnd: String, Sendable, Equatable {
    /// The client went away.
    case disconnected
    /// The server is shutting down.
    case shutdown
    /// The trades to resume from could not be read from the shared log now; reconnect with the same
    /// Last-Event-ID later.
    case unavailable
    /// The client read slower than events came: it has every event the server kept for it; reconnect
    /// with the Last-Event-ID of the last trade to resume.
    case behind
}

/// Turns stream events into `text/event-stream` messages. A ``StreamEvent/latest(_:beat:)`` event becomes
/// a quote message when its quote is new and a heartbeat when its count is, so that a stream buffering
/// only the newest event never loses the last price to a heartbeat.
struct StreamWriter {
    private var lastQuote: Quote?
    private var lastBeat = 0
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// The messages for `event`: none, one or two.
    mutating func messages(for event: StreamEvent) -> [String] {
        switch event {
        case .ready(let lastSeq):
            // The id is the number the stream starts after: a client that reconnects before any trade
            // resumes from there.
            return ["event: ready\nid: \(lastSeq)\ndata: {\"lastSeq\":\(lastSeq)}\n\n"]
        case .resynced(let lastSeq):
            return ["event: resynced\nid: \(lastSeq)\ndata: {\"lastSeq\":\(lastSeq)}\n\n"]
        case .trade(let trade):
            return ["event: trade\nid: \(trade.seq)\ndata: \(self.json(trade))\n\n"]
        case .latest(let quote, let beat):
            var messages: [String] = []
            if let quote, quote != self.lastQuote {
                self.lastQuote = quote
                messages.append("event: quote\ndata: \(self.json(quote))\n\n")
            }
            if beat != self.lastBeat {
                self.lastBeat = beat
                messages.append(": heartbeat\n\n")
            }
            return messages
        case .heartbeat:
            return [": heartbeat\n\n"]
        case .end(let reason, let lastSeq):
            let seq = lastSeq.map { ",\"lastSeq\":\($0)" } ?? ""
            return ["event: end\ndata: {\"reason\":\"\(reason.rawValue)\"\(seq)}\n\n"]
        }
    }

    private func json(_ value: some Encodable) -> String {
        // The payloads are plain structs of finite numbers and strings, which always encode.
        return String(decoding: try! self.encoder.encode(value), as: UTF8.self)
    }
}

/// A count every `seconds` on `queue`, starting with 0 at once, until disposed.
func ticks(every seconds: Double, on queue: Queue) -> Signal<Int, NoError> {
    return Signal { subscriber in
        let count = Atomic(value: 0)
        subscriber.putNext(0)
        let timer = Timer(timeout: seconds, repeat: true, completion: { subscriber.putNext(count.modify { $0 + 1 }) }, queue: queue)
        timer.start()
        return ActionDisposable { timer.invalidate() }
    }
}

/// `events` until `end` says why to stop, or until `events` itself sends an end: the end event is sent
/// last, then the stream completes and every subscription behind it is disposed.
func until(_ end: ValuePromise<StreamEnd?>) -> (Signal<StreamEvent, NoError>) -> Signal<StreamEvent, NoError> {
    return { events in
        let ending = end.get() |> filter { $0 != nil } |> map { StreamEvent.end($0!, lastSeq: nil) }
        return merge([events, ending])
            |> take(until: { event in
                if case .end = event { return SignalTakeAction(passthrough: true, complete: true) }
                return SignalTakeAction(passthrough: true, complete: false)
            })
    }
}
