import Hummingbird
import MarketDomain
import NIOCore
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// The request context of every route: Hummingbird's basic context plus the connection, so that a
/// stream can close the connection of a client that stopped reading.
public struct MarketRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The client's connection.
    public let channel: any Channel

    /// Creates the context for a request on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// How a stream ends on graceful shutdown.
enum ShutdownPolicy: Sendable {
    /// End it at once with `end` `shutdown`.
    case endNow
    /// Close the market: the feed sends every trade already accepted, then `closed`, which ends the
    /// stream. No trade that was acknowledged is missing from it.
    case closeMarket
}

/// A server-sent event stream of what `makeEvents` sends, iterated with `for await` under `policy`.
///
/// The stream ends, and its subscription is disposed, when the client disconnects (the request's
/// inbound side closes) or when the server shuts down gracefully (see ``ShutdownPolicy``); the end event
/// is sent last. A client that stops reading is disconnected, without an end event, when a write stays
/// pending for longer than ``ServerConfiguration/slowClientLimit``. A client that reads slower than
/// events come is ended by the buffering policy: under `.endingWhenFull(n)` its subscription goes as
/// soon as `n` events wait for it (the feed and the other streams go on), it receives the `n` events,
/// then `end` with reason `behind`, and resumes by reconnecting with `Last-Event-ID`. Those two bound
/// what the server holds for one client.
///
/// - Parameters:
///   - heartbeats: Whether to merge heartbeat events into the stream; a stream that makes its own (see
///     ``StreamEvent/latest(_:beat:)``) passes false.
///   - makeEvents: The events; called once the response starts.
func eventStream(
    _ request: Request, context: MarketRequestContext, services: MarketServices, configuration: ServerConfiguration,
    policy: SignalBufferingPolicy, heartbeats: Bool, onShutdown shutdownPolicy: ShutdownPolicy,
    _ makeEvents: @escaping @Sendable () -> Signal<StreamEvent, NoError>
) -> Response {
    let channel = context.channel
    let body = ResponseBody { writer in
        services.counters.streams.increment()
        defer { services.counters.streams.decrement() }
        let end = ValuePromise<StreamEnd?>(nil, ignoreRepeated: true)
        var sources = [makeEvents()]
        if heartbeats {
            sources.append(ticks(every: configuration.heartbeat, on: services.timerQueue) |> filter { $0 > 0 } |> map { _ in .heartbeat })
        }
        let events = merge(sources) |> until(end)

        // A client that does not read leaves our write pending: close its connection after the limit.
        let watch = SlowClientWatch(channel: channel, limit: configuration.slowClientLimit, queue: services.timerQueue)
        defer { watch.stop() }

        try await request.body.consumeWithInboundCloseHandler { _ in
            try await withGracefulShutdownHandler {
                var stream = StreamWriter()
                var lastSeq: Int?
                let values = events.values(bufferingPolicy: policy)
                for await event in values {
                    if case .trade(let trade) = event { lastSeq = trade.seq }
                    for message in stream.messages(for: event) {
                        try await watch.timing { try await writer.write(ByteBuffer(string: message)) }
                    }
                }
                // Why the loop ended: the client fell behind (`.endingWhenFull`), rather than the stream's end.
                if values.endReason == .fellBehind {
                    services.counters.streamsBehind.increment()
                    for message in stream.messages(for: .end(.behind, lastSeq: lastSeq)) {
                        try await watch.timing { try await writer.write(ByteBuffer(string: message)) }
                    }
                }
            } onGracefulShutdown: {
                switch shutdownPolicy {
                case .endNow: end.set(.shutdown)
                case .closeMarket: services.market.close()
                }
            }
        } onInboundClosed: {
            end.set(.disconnected)
        }
        try await writer.finish(nil)
    }
    return Response(
        status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
}

/// Closes a client's connection when one of the server's writes to it stays pending for longer than
/// `limit` seconds (``ServerConfiguration/slowClientLimit``): a client that stops reading would otherwise
/// keep what its response holds (a subscription, an export's place and producer) for as long as it keeps
/// the connection open. Watches from when it is made until ``stop()``.
final class SlowClientWatch: Sendable {
    private let pending = PendingWrite()
    private let timer: Timer

    init(channel: any Channel, limit: Double, queue: Queue) {
        let pending = self.pending
        self.timer = Timer(
            timeout: max(limit / 4, 0.01), repeat: true,
            completion: {
                if pending.isOlder(than: limit) { channel.close(promise: nil) }
            }, queue: queue)
        self.timer.start()
    }

    /// Runs `write`, a write to the client, as a watched one.
    func timing(_ write: () async throws -> Void) async throws {
        self.pending.begin()
        defer { self.pending.end() }
        try await write()
    }

    func stop() {
        self.timer.invalidate()
    }

    deinit {
        self.timer.invalidate()
    }
}

/// When the write in progress began, if one is.
final class PendingWrite: Sendable {
    private let since = Atomic<ContinuousClock.Instant?>(value: nil)

    func begin() {
        _ = self.since.swap(.now)
    }

    func end() {
        _ = self.since.swap(nil)
    }

    /// Whether a write has been pending for longer than `seconds`.
    func isOlder(than seconds: Double) -> Bool {
        guard let since = self.since.with({ $0 }) else { return false }
        return ContinuousClock.now - since > .seconds(seconds)
    }
}
