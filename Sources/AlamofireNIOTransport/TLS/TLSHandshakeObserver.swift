import NIOConcurrencyHelpers
import NIOCore
import NIOTLS

/// Completes a promise with the protocol ALPN chose when the TLS handshake is done, or fails it if
/// the channel errs or closes first. After the handshake it records the first error and holds back
/// what the server sends (an HTTP/2 server's SETTINGS come at once) until the connection's handlers
/// are in place and it is removed, when it hands the held bytes on to them. Touched only on its
/// channel's event loop.
final class TLSHandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let promise: EventLoopPromise<String?>
    private var handshakeCompleted = false
    private var heldBack: [NIOAny] = []
    /// The first error after the handshake, such as an alert refusing the client's certificate.
    private let errorAfterHandshake: NIOLockedValueBox<(any Error)?>

    init(promise: EventLoopPromise<String?>, errorAfterHandshake: NIOLockedValueBox<(any Error)?>) {
        self.promise = promise
        self.errorAfterHandshake = errorAfterHandshake
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event {
            handshakeCompleted = true
            promise.succeed(negotiated)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if handshakeCompleted {
            heldBack.append(data)
        } else {
            context.fireChannelRead(data)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if heldBack.isEmpty { context.fireChannelReadComplete() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if handshakeCompleted {
            errorAfterHandshake.withLockedValue { $0 = $0 ?? error }
        } else {
            promise.fail(error)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !handshakeCompleted {
            promise.fail(TransportError.connectionLost("the server closed the connection during the TLS handshake"))
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !handshakeCompleted { promise.fail(TransportError.connectionLost("the connection was set up without a TLS handshake")) }
        let held = heldBack
        heldBack = []
        for data in held { context.fireChannelRead(data) }
        if !held.isEmpty { context.fireChannelReadComplete() }
    }
}
