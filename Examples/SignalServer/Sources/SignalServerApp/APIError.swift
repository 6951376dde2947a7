import Foundation
import Hummingbird
import MarketDomain

/// An error as the client sees it: a status code and a JSON body `{"error": code, "message": text}`.
public struct APIError: HTTPResponseError, Equatable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable, machine-readable code, such as `unknown_symbol`.
    public var code: String
    /// A sentence for a person.
    public var message: String
    /// Seconds after which the request may succeed, sent as `Retry-After`; nil for none.
    public var retryAfter: Int?

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, code: String, message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// A request the server cannot make sense of.
    public static func badRequest(_ message: String) -> APIError {
        return APIError(.badRequest, code: "bad_request", message: message)
    }

    /// Maps whatever an awaited signal threw to what the client should see.
    public init(_ error: any Error) {
        switch error {
        case let error as APIError:
            self = error
        case let error as MarketError:
            self.init(error)
        default:
            self.init(.internalServerError, code: "internal", message: "unexpected error: \(error)")
        }
    }

    /// Maps a domain failure to a status code.
    public init(_ error: MarketError) {
        switch error {
        case .unknownSymbol(let symbol):
            self.init(.notFound, code: "unknown_symbol", message: "no symbol \(symbol) is listed")
        case .exchangeUnavailable(let symbol):
            self.init(.badGateway, code: "exchange_unavailable", message: "the exchange did not answer for \(symbol)")
        case .invalidTrade(let problem):
            self.init(.unprocessableContent, code: "invalid_trade", message: problem)
        case .closed:
            self.init(.serviceUnavailable, code: "market_closed", message: "the market is shutting down")
        case .timedOut(let seconds):
            self.init(.gatewayTimeout, code: "deadline_exceeded", message: "no answer within \(Int((seconds * 1000).rounded())) ms")
        case .unsupportedCurrency(let currency):
            self.init(.badRequest, code: "unsupported_currency", message: "no rate for \(currency)")
        case .logUnavailable(let problem):
            self.init(.serviceUnavailable, code: "log_unavailable", message: "the trade log did not answer: \(problem)")
        }
    }

    /// The JSON error response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try json(ErrorBody(error: self.code, message: self.message), status: self.status)
        if let retryAfter = self.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }
}

/// The JSON body of every error response.
struct ErrorBody: Codable, Equatable {
    /// The machine-readable code.
    var error: String
    /// The sentence for a person.
    var message: String
}

/// Gives the router's own errors (no such route, a body too large) the same JSON body as the routes'.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as any HTTPResponseError {
            let code: String
            switch error.status {
            case .notFound: code = "not_found"
            case .contentTooLarge: code = "too_large"
            default: code = error.status.code < 500 ? "bad_request" : "internal"
            }
            throw APIError(error.status, code: code, message: (error as? HTTPError)?.body ?? error.status.reasonPhrase)
        } catch {
            throw APIError(error)
        }
    }
}
