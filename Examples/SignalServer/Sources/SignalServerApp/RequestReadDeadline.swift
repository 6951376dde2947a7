import NIOCore
import NIOHTTPTypes

/// Closes a connection that stops sending in the middle of a request: its head has come, and the rest
/// of its body does not come within the limit of the last part.
///
/// Without it, a client that sent part of a `POST` body and then nothing kept the handler waiting for the
/// rest, so the connection stayed open for good, and a graceful shutdown, which lets requests in
/// progress finish, waited for its backstop. A connection idle between requests is left alone (the
/// shutdown closes those at once), and so is a response in progress, a stream or an export, whose
/// writes have a watch of their own.
final class RequestReadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head, .body:
            // Each part the client sends gives it the limit again.
            self.deadline?.cancel()
            let channel = context.channel
            self.deadline = context.eventLoop.scheduleTask(in: self.limit) {
                channel.close(promise: nil)
            }
        case .end:
            self.cancel()
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.cancel()
    }

    private func cancel() {
        self.deadline?.cancel()
        self.deadline = nil
    }
}
