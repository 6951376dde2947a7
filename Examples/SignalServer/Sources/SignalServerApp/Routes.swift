import Foundation
import Hummingbird
import MarketDomain
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// Adds every route. Each handler is new async code; everything behind it is signal code.
func addRoutes(to router: Router<BasicRequestContext>, services: MarketServices, configuration: ServerConfiguration) {
    router.get("health") { _, _ in "ok\n" }

    // Await the first value of a legacy signal, with a per-request deadline.
    router.get("quotes/:symbol") { request, context -> Response in
        let symbol = try context.parameters.require("symbol").uppercased()
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        let quote = services.loader.quote(symbol) |> within(deadline, on: services.timerQueue)
        return try await json(awaitFirst(quote))
    }

    // New async code (the rates service) inside the old chain: bridged into a signal and combined.
    router.get("quotes/:symbol/in/:currency") { request, context -> Response in
        let symbol = try context.parameters.require("symbol").uppercased()
        let currency = try context.parameters.require("currency").uppercased()
        let deadline = try deadline(of: request, default: configuration.defaultDeadline)
        let quote =
            services.loader.quote(symbol, in: currency, rates: services.rate(to: currency))
            |> within(deadline, on: services.timerQueue)
        return try await json(awaitFirst(quote))
    }

    router.post("trades") { request, context -> Response in
        let body: TradeRequest
        do {
            body = try await request.decode(as: TradeRequest.self, context: context)
        } catch {
            throw APIError.badRequest("the body must be JSON like {\"symbol\": \"ACME\", \"price\": 101.5, \"size\": 10}")
        }
        let trade = Trade(symbol: body.symbol.uppercased(), price: body.price, size: body.size)
        return try await json(awaitFirst(services.market.publish(trade)), status: .created)
    }

    // Queue-confined state, read from async code through the actor.
    router.get("symbols/:symbol/stats") { _, context -> Response in
        let symbol = try context.parameters.require("symbol").uppercased()
        guard services.exchange.lists(symbol) else { throw APIError(MarketError.unknownSymbol(symbol)) }
        return try json(await services.ledger.withValue { $0.stats(for: symbol) })
    }

    // Every trade, lossless: the buffer grows rather than drop a trade for a slow client.
    router.get("events") { request, _ -> Response in
        let symbol = request.uri.queryParameters.get("symbol")?.uppercased()
        if let symbol, !services.exchange.lists(symbol) { throw APIError(MarketError.unknownSymbol(symbol)) }
        let trades = services.market.trades() |> filter { symbol == nil || $0.symbol == symbol } |> map { StreamEvent.trade($0) }
        return eventStream(request, services: services, configuration: configuration, policy: .unbounded) {
            // `ready` is sent after the trades subscription is in place: every later trade follows it.
            merge([trades, deferred { .single(.ready(lastSeq: services.market.lastSeq)) }])
        }
    }

    // The latest price only: a slow client skips to the newest quote instead of queueing old ones.
    router.get("quotes/:symbol/stream") { request, context -> Response in
        let symbol = try context.parameters.require("symbol").uppercased()
        guard services.exchange.lists(symbol) else { throw APIError(MarketError.unknownSymbol(symbol)) }
        let quotes =
            services.store.quotes()
            |> filter { $0.quotes[symbol] != nil }
            |> map { StreamEvent.quote($0.quotes[symbol]!) }
            |> distinctUntilChanged
            |> tracked(services.counters.subscriptions)
        return eventStream(request, services: services, configuration: configuration, policy: .bufferingNewest(1)) { quotes }
    }

    router.get("metrics") { _, _ -> Response in
        let counters = services.counters
        return try json(
            Metrics(
                subscriptions: counters.subscriptions.value, bridgedTasks: counters.bridgedTasks.value,
                streams: counters.streams.value, tradesPublished: services.market.lastSeq,
                exchangeRequests: services.exchange.requests))
    }
}

/// What `/metrics` answers.
struct Metrics: Codable, Equatable {
    /// Live subscriptions to domain signals.
    var subscriptions: Int
    /// Async operations bridged into signals that are still running.
    var bridgedTasks: Int
    /// Open event streams.
    var streams: Int
    /// Trades published so far.
    var tradesPublished: Int
    /// Requests the exchange has received.
    var exchangeRequests: Int
}

/// The body of `POST /trades`.
struct TradeRequest: Decodable {
    var symbol: String
    var price: Double
    var size: Int
}

/// Fails with ``MarketError/timedOut(_:)`` when the signal sends nothing within `seconds`.
func within<T>(_ seconds: Double, on queue: Queue) -> (Signal<T, MarketError>) -> Signal<T, MarketError> {
    return timeout(seconds, queue: queue, alternate: .fail(.timedOut(seconds)))
}

/// The first value of `signal`, with its failure turned into an ``APIError``.
func awaitFirst<T: Sendable>(_ signal: Signal<T, MarketError>) async throws(APIError) -> T {
    do {
        return try await signal.get()
    } catch {
        throw APIError(error)
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
