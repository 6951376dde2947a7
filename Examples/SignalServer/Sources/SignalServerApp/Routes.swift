import Foundation
import HTTPTypes
import Hummingbird
import MarketDomain
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Adds every route. Each handler is new async code; everything behind it is signal code.
func addRoutes(to router: Router<MarketRequestContext>, services: MarketServices, configuration: ServerConfiguration) {
    router.add(middleware: JSONErrorMiddleware())
    router.get("health") { _, _ in "ok\n" }

    // Await the first value of a legacy signal, with a per-request deadline.
    router.get("quotes/:symbol") { request, context -> Response in
        let symbol = try symbolParameter(context)
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        let quote = services.loader.firstQuote(symbol)
        return try await json(firstAnswer(quote, within: deadline, on: services.timerQueue))
    }

    // New async code (the rates service) inside the old chain: bridged into a signal and combined.
    router.get("quotes/:symbol/in/:currency") { request, context -> Response in
        let symbol = try symbolParameter(context)
        let currency = try symbolParameter(context, "currency")
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        let quote = services.loader.quote(symbol, in: currency, rates: services.rate(to: currency))
        return try await json(firstAnswer(quote, within: deadline, on: services.timerQueue))
    }

    router.post("trades") { request, context -> Response in
        let body: TradeRequest
        do {
            body = try await request.decode(as: TradeRequest.self, context: context)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError(.contentTooLarge, code: "too_large", message: "the body is larger than \(context.maxUploadSize) bytes")
        } catch {
            throw APIError.badRequest("the body must be JSON like {\"symbol\": \"ACME\", \"price\": 101.5, \"size\": 10}")
        }
        let trade = try body.trade(symbol: try validSymbol(body.symbol))
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        let published =
            services.log.publish(trade)
            |> failingAfterShutdown(
                services.market.whenClosed(), grace: configuration.shutdownGrace, on: services.timerQueue,
                with: { MarketError.logUnavailable($0) })
        return try await json(firstAnswer(published, within: deadline, on: services.timerQueue), status: .created)
    }

    // Queue-confined state, read from async code through the actor.
    router.get("symbols/:symbol/stats") { _, context -> Response in
        let symbol = try symbolParameter(context)
        guard services.exchange.lists(symbol) else { throw APIError(MarketError.unknownSymbol(symbol)) }
        return try json(await services.ledger.withValue { $0.stats(for: symbol) })
    }

    // Every trade, lossless: a client that reads slower than trades come gets what was kept for it (at
    // most the backlog limit), then `end` `behind`; one that stops reading altogether is disconnected
    // after the slow-client limit. A client that reconnects with Last-Event-ID resumes after that
    // trade, on this instance or any other that shares the log.
    router.get("events") { request, context -> Response in
        let symbol = try request.uri.queryParameters.get("symbol").map(validSymbol)
        if let symbol, !services.exchange.lists(symbol) { throw APIError(MarketError.unknownSymbol(symbol)) }
        let resumeAfter = try lastEventID(of: request)
        return eventStream(
            request, context: context, services: services, configuration: configuration,
            policy: .endingWhenFull(configuration.maximumBacklog), heartbeats: true,
            onShutdown: .closeMarket
        ) {
            resumableFeed(services.market.feed(), after: resumeAfter, log: services.log)
                |> filter { event in
                    guard case .trade(let trade) = event, let symbol else { return true }
                    return trade.symbol == symbol
                }
                |> map { event -> StreamEvent in
                    switch event {
                    case .ready(let lastSeq): return .ready(lastSeq: lastSeq)
                    case .trade(let trade): return .trade(trade)
                    case .resynced(let lastSeq): return .resynced(lastSeq: lastSeq)
                    case .closed(let lastSeq): return .end(.shutdown, lastSeq: lastSeq)
                    }
                }
                // The history could not be read: end the stream, so the client comes back with its id.
                |> `catch` { _ in .single(.end(.unavailable, lastSeq: nil)) }
        }
    }

    // The latest price only: a slow client skips to the newest quote instead of queueing old ones. The
    // quote and the heartbeat count travel together (combineLatest), so the one buffered event is always
    // the newest of both.
    router.get("quotes/:symbol/stream") { request, context -> Response in
        let symbol = try symbolParameter(context)
        guard services.exchange.lists(symbol) else { throw APIError(MarketError.unknownSymbol(symbol)) }
        return eventStream(
            request, context: context, services: services, configuration: configuration, policy: .bufferingNewest(1),
            heartbeats: false, onShutdown: .endNow
        ) {
            latestQuoteEvents(symbol, services: services, ticks: ticks(every: configuration.heartbeat, on: services.timerQueue))
        }
    }

    // A large result streamed at the client's pace: rows from PostgreSQL (with --database) or generated,
    // each read only when the client has room for it, so memory does not grow with the result.
    // At most `exportLimit` at once; with a database, through a pool of their own. The status waits
    // until the rows can be read (at most the request's deadline), so a database that is down is a 503,
    // not a 200 whose body breaks off. A client that stops reading is cut off after the slow-client
    // limit, which gives its place back.
    router.get("export") { request, context -> Response in
        let count = try rowCount(of: request)
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        guard let slot = services.exports.enter() else {
            throw APIError(
                .serviceUnavailable, code: "export_busy",
                message: "\(services.exports.limit) exports are running, the most this server runs at once; try again later",
                retryAfter: 1)
        }
        let rows: Signal<ExportRow, any Error>
        do {
            let start =
                exportRows(
                    count: count, database: services.postgres?.exportPool, pageLimit: configuration.slowClientLimit,
                    timers: services.timerQueue, logger: services.logger)
                |> failingAfterShutdown(
                    services.market.whenClosed(), grace: configuration.shutdownGrace, on: services.timerQueue,
                    with: {
                        APIError(.serviceUnavailable, code: "log_unavailable", message: "the export could not start: \($0)", retryAfter: 1)
                    })
            rows = try await startExport(start, within: deadline, on: services.timerQueue)
        } catch {
            slot.release()
            throw error
        }
        return exportResponse(
            rows: rows, room: configuration.exportRoom, slot: slot,
            watch: { [channel = context.channel] in
                SlowClientWatch(channel: channel, limit: configuration.slowClientLimit, queue: services.timerQueue)
            })
    }

    router.get("metrics") { _, _ -> Response in
        let counters = services.counters
        return try json(
            Metrics(
                subscriptions: counters.subscriptions.value, bridgedTasks: counters.bridgedTasks.value,
                streams: counters.streams.value, streamsBehind: counters.streamsBehind.value, exports: services.exports.count,
                tradesPublished: services.market.lastSeq, residentBytes: residentBytes(),
                exchangeRequests: services.exchange.requests, databaseSessions: services.postgres?.sessions.with { $0 }))
    }
}

/// `feed` (a market's ``Market/feed()``) for a client that already has every trade through `after`:
/// the trades after it, then the live ones, with none missing and none twice.
///
/// When the market is ahead of the client, the trades between come from `log`; when the client is ahead
/// (it saw them on an instance further along), the live trades up to its number are skipped. Either way
/// the stream starts with `ready(after)`. When the log cannot supply the trades between, or does not
/// know `after`, the stream starts with `resynced` at the market's number instead: the client must
/// rebuild what it keeps. When the log cannot be read now, the result fails: the client should come
/// back later with the same number. Without `after`, `feed` as it is.
func resumableFeed(_ feed: Signal<Market.FeedEvent, NoError>, after: Int?, log: any TradeLog) -> Signal<Market.FeedEvent, MarketError> {
    guard let after else { return feed |> castError(MarketError.self) }
    // Trades numbered up to here are skipped; set once the history is in, before any live trade is
    // looked at (`queue` starts each inner signal after the one before has completed).
    let skipThrough = Atomic(value: after)
    return feed
        |> castError(MarketError.self)
        |> map { event -> Signal<Market.FeedEvent, MarketError> in
            switch event {
            case .ready(let lastSeq):
                return log.history(after: after, through: lastSeq)
                    |> mapToSignal { history -> Signal<Market.FeedEvent, MarketError> in
                        guard let history else {
                            _ = skipThrough.swap(lastSeq)
                            return .single(.resynced(lastSeq: lastSeq))
                        }
                        _ = skipThrough.swap(max(after, lastSeq))
                        return Signal { subscriber in
                            subscriber.putNext(.ready(lastSeq: after))
                            for trade in history { subscriber.putNext(.trade(trade)) }
                            subscriber.putCompletion()
                            return EmptyDisposable
                        }
                    }
            case .trade(let trade):
                return Signal { subscriber in
                    if trade.seq > skipThrough.with({ $0 }) { subscriber.putNext(.trade(trade)) }
                    subscriber.putCompletion()
                    return EmptyDisposable
                }
            case .resynced, .closed:
                return .single(event)
            }
        }
        |> queue
}

/// The `rows` parameter of `/export`: 1,000,000 when absent.
///
/// - Throws: ``APIError/badRequest(_:)`` for a value that is not a whole number from 0 to 100,000,000.
func rowCount(of request: Request) throws(APIError) -> Int {
    guard let text = request.uri.queryParameters.get("rows") else { return 1_000_000 }
    guard let count = Int(text), (0...100_000_000).contains(count) else {
        let shown = text.count > 24 ? "\(text.prefix(24))…" : text
        throw APIError.badRequest("rows must be a whole number from 0 to 100000000, got \(shown)")
    }
    return count
}

/// The process's resident memory in bytes, from `/proc/self/statm`; 0 where it cannot be read.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The `Last-Event-ID` header as a trade number, if there is one.
///
/// - Throws: ``APIError/badRequest(_:)`` for a value that is not a whole number from 0 up.
func lastEventID(of request: Request) throws(APIError) -> Int? {
    // A valid field name, so the force unwrap cannot fail.
    guard let text = request.headers[HTTPField.Name("Last-Event-ID")!] else { return nil }
    guard let seq = Int(text.trimmingCharacters(in: .whitespaces)), seq >= 0 else {
        let shown = text.count > 24 ? "\(text.prefix(24))…" : text
        throw APIError.badRequest("Last-Event-ID must be the id of a trade event (a whole number from 0), got \(shown)")
    }
    return seq
}

/// The events of `/quotes/:symbol/stream`: the symbol's latest quote with the heartbeat count, each time
/// either changes. The first subscriber of a symbol nobody has asked for also loads its quote.
///
/// - Parameter ticks: The heartbeat count; must send a first value at once.
func latestQuoteEvents(_ symbol: String, services: MarketServices, ticks: Signal<Int, NoError>) -> Signal<StreamEvent, NoError> {
    let stored = services.store.quotes() |> map { $0.quotes[symbol] } |> distinctUntilChanged
    // Loads the quote into the store; its value arrives through `stored`.
    let load =
        services.loader.quote(symbol)
        |> take(1)
        |> `catch` { _ in Signal<Quote, NoError>.complete() }
        |> filter { _ in false }
        |> map { _ in Quote?.none }
    return combineLatest(merge([stored, load]), ticks)
        |> map { quote, beat in StreamEvent.latest(quote, beat: beat) }
        |> tracked(services.counters.subscriptions)
}

/// What `/metrics` answers.
struct Metrics: Codable, Equatable {
    /// Live subscriptions to domain signals.
    var subscriptions: Int
    /// Async operations bridged into signals that are still running.
    var bridgedTasks: Int
    /// Open event streams.
    var streams: Int
    /// Streams ended so far because their client read slower than events came (`end` `behind`).
    var streamsBehind: Int
    /// Exports running now (at most `--export-limit`).
    var exports: Int
    /// The last trade this instance's market has: published here, or, with a shared log, published
    /// by any instance and received.
    var tradesPublished: Int
    /// The server's resident memory, in bytes (Linux; 0 where it cannot be read).
    var residentBytes: Int
    /// Requests the exchange has received.
    var exchangeRequests: Int
    /// With a shared log: connections to it opened so far for following it, the first included (more
    /// than one means it reconnected). Absent for a server that runs alone.
    var databaseSessions: Int?
}

/// The body of `POST /trades`.
struct TradeRequest: Decodable {
    var symbol: String
    /// Nil when the JSON number has no `Double` (`1e400`): a number, but not a price any market takes.
    var price: Double?
    /// Nil when the JSON number is not an `Int` (`1.5`, `1e30`, `9223372036854775808`).
    var size: Int?

    private enum CodingKeys: String, CodingKey {
        case symbol, price, size
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.symbol = try container.decode(String.self, forKey: .symbol)
        self.price = try Self.number(Double.self, .price, in: container)
        self.size = try Self.number(Int.self, .size, in: container)
    }

    /// The number at `key`, or nil for a JSON number that `N` cannot hold; anything else that is not a
    /// number (a string, a missing key) still fails to decode, a malformed request.
    private static func number<N: Decodable>(
        _ type: N.Type, _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> N? {
        do {
            return try container.decode(N.self, forKey: key)
        } catch let error as DecodingError {
            throw error  // not a number, or no such key
        } catch {
            // Foundation reports a JSON number that `N` cannot hold with an error of its own
            // (`numberIsNotRepresentableInSwift`), not a `DecodingError`.
            return nil
        }
    }

    /// The trade, or ``MarketError/invalidTrade(_:)`` (422) for a number outside what a trade can hold,
    /// whatever its JSON spelling: the same answer as for any other out-of-range number.
    func trade(symbol: String) throws(APIError) -> Trade {
        guard let price = self.price else {
            throw APIError(MarketError.invalidTrade("price must be a positive number up to \(Int(Market.maximumPrice))"))
        }
        guard let size = self.size else {
            throw APIError(MarketError.invalidTrade("size must be a whole number from 1 to \(Market.maximumSize)"))
        }
        return Trade(symbol: symbol, price: price, size: size)
    }
}

/// The path parameter `name` as a symbol: percent-decoded, upper case, 1 to 12 letters or digits.
func symbolParameter(_ context: MarketRequestContext, _ name: String = "symbol") throws -> String {
    let raw = try context.parameters.require(name)
    return try validSymbol(raw.removingPercentEncoding ?? raw)
}

/// `text` upper-cased, if it is 1 to 12 ASCII letters or digits.
///
/// - Throws: ``APIError/badRequest(_:)`` otherwise, without echoing a long input back.
func validSymbol(_ text: String) throws(APIError) -> String {
    // Checked before upper-casing: Unicode case mapping would turn "ınıtech" into "INITECH".
    let isLetterOrDigit = { (byte: UInt8) in (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) }
    guard (1...12).contains(text.utf8.count), text.utf8.allSatisfy(isLetterOrDigit) else {
        let shown = text.count > 24 ? "\(text.prefix(24))… (\(text.utf8.count) bytes)" : text
        throw APIError.badRequest("a symbol is 1 to 12 letters or digits, got \(shown)")
    }
    return text.uppercased()
}

/// The first value of `signal`, at most `seconds` later, as a route's answer.
///
/// `first(within:)` tells the four outcomes apart, so each gets its own answer: the signal's error and
/// a timeout become the client's error (504 for the timeout), a signal that ends empty a 502, and a
/// request whose client went away ends with `CancellationError`, never counted as a timeout.
func firstAnswer<T: Sendable>(_ signal: Signal<T, MarketError>, within seconds: Double, on timers: Queue) async throws -> T {
    let outcome: FirstValueOutcome<T>
    do {
        outcome = try await signal.first(within: .seconds(seconds), scheduler: timers)
    } catch {
        throw APIError(error)
    }
    switch outcome {
    case .value(let value):
        return value
    case .timedOut:
        throw APIError(MarketError.timedOut(seconds))
    case .empty:
        throw APIError(.badGateway, code: "no_answer", message: "the service ended without an answer")
    case .cancelled:
        throw CancellationError()
    }
}

/// For an answer awaited with `first(within:)`: `answer`, unless the market has been closed (the server
/// is shutting down) for `grace` seconds before it sends anything; then the failure that `failure`
/// makes of a sentence saying so, and `answer` is disposed.
///
/// A request that waits for a database that does not answer (a trade to publish, an export to start)
/// would otherwise hold the graceful shutdown up for the rest of its deadline, up to a minute, past the
/// service group's backstop, which then cancels it without an answer. A trade without a value by then
/// may still be recorded, as after any failure to publish.
func failingAfterShutdown<T, E: Error>(
    _ closed: Signal<Int, NoError>, grace: Double, on timers: some SignalScheduler, with failure: @escaping @Sendable (String) -> E
) -> (Signal<T, E>) -> Signal<T, E> {
    return { answer in
        let cutOff: Signal<T, E> =
            closed
            |> take(1)
            |> castError(E.self)
            |> mapToSignal { _ in
                // `delay` delays the subscription: the failure starts `grace` after the close.
                Signal<T, E>.fail(failure("no answer \(Int((grace * 1000).rounded())) ms after the server began shutting down"))
                    |> delay(grace, scheduler: timers)
            }
        // The first event wins: `firstAnswer` disposes both once it has one.
        return merge([answer, cutOff])
    }
}

/// The `deadline_ms` query parameter in seconds, or `fallback` without one.
func deadline(of request: Request, default fallback: Double) throws(APIError) -> Double {
    guard let text = request.uri.queryParameters.get("deadline_ms") else { return fallback }
    guard let milliseconds = Int(text), (1...60_000).contains(milliseconds) else {
        throw APIError.badRequest("deadline_ms must be a whole number of milliseconds from 1 to 60000, got \(text)")
    }
    return Double(milliseconds) / 1000
}

/// `value` as a JSON response.
func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return Response(
        status: status, headers: [.contentType: "application/json; charset=utf-8"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
}
