import Foundation
import Hummingbird
import MarketDomain
import SwiftSignalKit

/// One message of a server-sent event stream.
enum StreamEvent: Sendable, Equatable {
    /// The subscription is in place; every trade with a larger sequence number will follow.
    case ready(lastSeq: Int)
    /// A trade.
    case trade(Trade)
    /// A quote.
    case quote(Quote)
    /// Nothing happened for a while; keeps proxies from closing an idle connection.
    case heartbeat
    /// The stream ends, for the reason given.
    case end(StreamEnd)

    /// The event in the `text/event-stream` format.
    func encoded() -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func json(_ value: some Encodable) -> String {
            // The payloads are plain structs of numbers and strings, which always encode.
            return String(decoding: try! encoder.encode(value), as: UTF8.self)
        }
        let text: String
        switch self {
        case .ready(let lastSeq):
            text = "event: ready\ndata: {\"lastSeq\":\(lastSeq)}\n\n"
        case .trade(let trade):
            text = "event: trade\nid: \(trade.seq)\ndata: \(json(trade))\n\n"
        case .quote(let quote):
            text = "event: quote\ndata: \(json(quote))\n\n"
        case .heartbeat:
            text = ": heartbeat\n\n"
        case .end(let reason):
            text = "event: end\ndata: {\"reason\":\"\(reason.rawValue)\"}\n\n"
        }
        return ByteBuffer(string: text)
    }
}

/// Why a stream ended.
enum StreamEnd: String, Sendable, Equatable {
    /// The client went away.
    case disconnected
    /// The server is shutting down.
    case shutdown
}

/// A heartbeat every `seconds`, on `queue`, until disposed.
func heartbeats(every seconds: Double, on queue: Queue) -> Signal<StreamEvent, NoError> {
    return Signal { subscriber in
        let timer = Timer(timeout: seconds, repeat: true, completion: { subscriber.putNext(.heartbeat) }, queue: queue)
        timer.start()
        return ActionDisposable { timer.invalidate() }
    }
}

/// `events` until `end` says why to stop: the end event is sent last, then the stream completes and
/// every subscription behind it is disposed.
func until(_ end: ValuePromise<StreamEnd?>) -> (Signal<StreamEvent, NoError>) -> Signal<StreamEvent, NoError> {
    return { events in
        let ending = end.get() |> filter { $0 != nil } |> map { StreamEvent.end($0!) }
        return merge([events, ending])
            |> take(until: { event in
                if case .end = event { return SignalTakeAction(passthrough: true, complete: true) }
                return SignalTakeAction(passthrough: true, complete: false)
            })
    }
}
