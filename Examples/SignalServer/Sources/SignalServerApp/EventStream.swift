import Hummingbird
import MarketDomain
import ServiceLifecycle
import SwiftSignalKit
import SwiftSignalKitConcurrency

/// A server-sent event stream of what `makeEvents` sends, with heartbeats, iterated with `for await`
/// under `policy`.
///
/// The stream ends, and its subscription is disposed, when the client disconnects (the request's
/// inbound side closes) or when the server shuts down gracefully; either way an `end` event is sent
/// last if the client is still there.
///
/// - Parameters:
///   - request: The request, to notice when the client disconnects.
///   - policy: What the stream's buffer does when the client reads slower than events come.
///   - makeEvents: The events; called once the response starts.
func eventStream(
    _ request: Request, services: MarketServices, configuration: ServerConfiguration, policy: SignalBufferingPolicy,
    _ makeEvents: @escaping @Sendable () -> Signal<StreamEvent, NoError>
) -> Response {
    let body = ResponseBody { writer in
        services.counters.streams.increment()
        defer { services.counters.streams.decrement() }
        let end = ValuePromise<StreamEnd?>(nil, ignoreRepeated: true)
        let events =
            merge([makeEvents(), heartbeats(every: configuration.heartbeat, on: services.timerQueue)])
            |> until(end)
        func forward() async throws {
            try await withGracefulShutdownHandler {
                for await event in events.values(bufferingPolicy: policy) {
                    try await writer.write(event.encoded())
                }
            } onGracefulShutdown: {
                end.set(.shutdown)
            }
        }
        try await request.body.consumeWithInboundCloseHandler { _ in
            try await forward()
        } onInboundClosed: {
            end.set(.disconnected)
        }
        try await writer.finish(nil)
    }
    return Response(
        status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
}
