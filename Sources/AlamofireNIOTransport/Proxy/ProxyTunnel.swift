import Foundation
package import NIOCore
package import NIOHTTP1

// A connection through a proxy is a socket to the proxy, then (for an `https` origin behind an
// HTTP proxy, and for any origin behind a SOCKS5 proxy) a tunnel to the origin, then the origin's
// TLS and HTTP as on a direct connection. An `http` origin behind an HTTP proxy needs no tunnel:
// its requests go to the proxy in absolute form.

/// Opens the tunnel to the origin on a channel connected to its proxy.
enum ProxyTunnel {
    /// Whether connections to `origin` through `proxy` need a tunnel.
    static func isNeeded(for origin: Origin, through proxy: TransportProxy) -> Bool {
        origin.isTLS || origin.isWebSocket || !proxy.isHTTP
    }

    /// Sends `CONNECT` (HTTP proxy) or runs the SOCKS5 handshake, and returns once the channel
    /// carries bytes to and from the origin, with the handlers it used removed.
    /// `authorization` is the `Proxy-Authorization` a `CONNECT` carries.
    static func open(
        on channel: any Channel, to origin: Origin, through proxy: TransportProxy, authorization: String?,
        socksTarget: SOCKS5Handshake.Target?
    ) async throws {
        let result = channel.eventLoop.makePromise(of: Void.self)
        let installed = channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            guard channel.isActive else { throw TransportError.connectionLost("the proxy \(proxy) closed the connection") }
            switch proxy.kind {
            case .http:
                var headers = HTTPHeaders([("Host", origin.authority)])
                if let authorization { headers.add(name: "Proxy-Authorization", value: authorization) }
                let connect = ConnectTunnelHandler(authority: origin.authority, headers: headers, proxy: proxy, result: result)
                try RequestHeadValidation.check(connect.head)
                try pipeline.addHandler(HTTPRequestEncoder())
                try pipeline.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)))
                try pipeline.addHandler(connect)
            case .socks5:
                guard let socksTarget else { throw TransportError(.unknown, "a SOCKS tunnel needs its target") }
                try pipeline.addHandler(SOCKS5TunnelHandler(target: socksTarget, proxy: proxy, result: result))
            }
        }
        // A promise is never left pending: the handlers settle it, or the failure to install them does.
        installed.whenFailure { result.fail($0) }
        do {
            try await installed.get()
            try await result.futureResult.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        // The proxy may close the connection between its answer and this step.
        do {
            try await removeHandlers(of: proxy, from: channel)
        } catch {
            channel.close(promise: nil)
            throw TransportError.connectionLost("the tunnel through \(proxy) closed as it opened", error)
        }
    }

    /// Removes the handlers that opened the tunnel; the HTTP decoder hands on any bytes it holds
    /// past the proxy's answer.
    private static func removeHandlers(of proxy: TransportProxy, from channel: any Channel) async throws {
        try await channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            switch proxy.kind {
            case .http:
                try pipeline.removeHandler(pipeline.handler(type: ConnectTunnelHandler.self), promise: nil)
                try pipeline.removeHandler(pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self), promise: nil)
                try pipeline.removeHandler(pipeline.handler(type: HTTPRequestEncoder.self), promise: nil)
            case .socks5:
                // It hands on any bytes the origin sent after the proxy's reply.
                try pipeline.removeHandler(pipeline.handler(type: SOCKS5TunnelHandler.self), promise: nil)
            }
        }.get()
    }
}

extension Origin {
    /// `host:port`, IPv6 in brackets: the target of a `CONNECT`.
    var authority: String {
        let name = host.bracketedIfIPv6
        return "\(name):\(port)"
    }
}

/// A proxy's 407 to `CONNECT`, with its `Proxy-Authenticate` challenges: the underlying error of the
/// request's `.userAuthenticationRequired`.
struct ProxyAuthenticationChallenge: Error {
    let challenges: [String]
}

/// Sends `CONNECT` and reads the proxy's answer: any 2xx opens the tunnel, a 407 asks for
/// credentials, anything else refuses. The answer is never taken for the origin's.
package final class ConnectTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias OutboundIn = Never
    package typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        case idle
        case awaitingHead
        /// A 2xx arrived; the tunnel opens at the end of the head.
        case awaitingEnd
        case finished
    }

    private var state = State.idle
    /// The `CONNECT` it sends.
    let head: HTTPRequestHead
    private let proxy: TransportProxy
    private let result: EventLoopPromise<Void>

    package init(authority: String, headers: HTTPHeaders, proxy: TransportProxy, result: EventLoopPromise<Void>) {
        self.head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: authority, headers: headers)
        self.proxy = proxy
        self.result = result
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        guard case .idle = state else { return }
        state = .awaitingHead
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (state, unwrapInboundIn(data)) {
        case (.awaitingHead, .head(let head)) where (200..<300).contains(head.status.code):
            state = .awaitingEnd
        case (.awaitingHead, .head(let head)) where head.status == .proxyAuthenticationRequired:
            let how = self.head.headers.contains(name: "Proxy-Authorization") ? "with the credentials given" : "without credentials"
            let challenge = ProxyAuthenticationChallenge(challenges: head.headers["Proxy-Authenticate"])
            fail(
                TransportError(
                    .userAuthenticationRequired, "the proxy \(proxy) refused the tunnel to \(self.head.uri) \(how) (407)",
                    underlyingError: challenge), context)
        case (.awaitingHead, .head(let head)):
            fail(
                TransportError(.cannotConnectToHost, "the proxy \(proxy) refused the tunnel to \(self.head.uri) (\(head.status.code))"),
                context
            )
        case (.awaitingEnd, .end):
            state = .finished
            result.succeed()
        case (.awaitingEnd, .body):
            fail(TransportError.badResponse("the proxy \(proxy) sent a body with its answer to CONNECT"), context)
        default:
            break
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(TransportError.badResponse("the proxy \(proxy) answered CONNECT with what is not HTTP", error), context)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        fail(TransportError.connectionLost("the proxy \(proxy) closed the connection before the tunnel to \(head.uri) opened"), context)
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        fail(TransportError.connectionLost("the tunnel to \(head.uri) was abandoned before the proxy answered"), context)
    }

    private func fail(_ error: TransportError, _ context: ChannelHandlerContext) {
        switch state {
        case .awaitingHead, .awaitingEnd, .idle:
            state = .finished
            result.fail(error)
            context.close(promise: nil)
        case .finished:
            break
        }
    }
}

/// Runs the SOCKS5 handshake (``SOCKS5Handshake``) on a channel connected to the proxy. Bytes that
/// arrive after the proxy's reply are kept, and handed on when the handler is removed, to the
/// handlers set up for the origin.
final class SOCKS5TunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: SOCKS5Handshake
    private var finished = false
    private var heldBack: [UInt8] = []
    private let proxy: TransportProxy
    private let result: EventLoopPromise<Void>

    init(target: SOCKS5Handshake.Target, proxy: TransportProxy, result: EventLoopPromise<Void>) {
        self.handshake = SOCKS5Handshake(target: target, credentials: proxy.credentials)
        self.proxy = proxy
        self.result = result
    }

    func handlerAdded(context: ChannelHandlerContext) {
        perform(handshake.start(), context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data).readableBytesView
        if finished {
            heldBack.append(contentsOf: bytes)
        } else {
            perform(handshake.receive(bytes), context)
        }
    }

    private func perform(_ action: SOCKS5Handshake.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .send(let bytes):
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .wait:
            break
        case .established(let leftOver):
            finished = true
            heldBack = leftOver
            result.succeed()
        case .failed(let failure):
            fail(error(for: failure), context)
        }
    }

    private func error(for failure: SOCKS5Handshake.Failure) -> TransportError {
        switch failure {
        case .noAcceptableMethod:
            let what = proxy.credentials == nil ? "requires credentials" : "accepts neither no authentication nor a user name and password"
            return TransportError(.userAuthenticationRequired, "the SOCKS proxy \(proxy) \(what)")
        case .authenticationFailed:
            return TransportError(.userAuthenticationRequired, "the SOCKS proxy \(proxy) refused the user name and password")
        case .refused(let reply):
            return TransportError(.cannotConnectToHost, "the SOCKS proxy \(proxy) could not connect to the origin (reply \(reply))")
        case .malformed:
            return TransportError.badResponse("the SOCKS proxy \(proxy) answered what is not SOCKS5")
        case .tooLong(.hostName):
            return TransportError(.badURL, "the host name is longer than the 255 bytes a SOCKS proxy can be sent")
        case .tooLong(let field):
            let name = field == .userName ? "user name" : "password"
            return TransportError(.userAuthenticationRequired, "the SOCKS proxy's \(name) is longer than the 255 bytes SOCKS5 can send")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(TransportError.connectionLost("the SOCKS proxy \(proxy) failed", error), context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(TransportError.connectionLost("the SOCKS proxy \(proxy) closed the connection before the tunnel opened"), context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(TransportError.connectionLost("the SOCKS tunnel was abandoned before it opened"), context)
        guard !heldBack.isEmpty else { return }
        let bytes = heldBack
        heldBack = []
        context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: bytes)))
        context.fireChannelReadComplete()
    }

    private func fail(_ error: TransportError, _ context: ChannelHandlerContext) {
        guard !finished else { return }
        finished = true
        result.fail(error)
        context.close(promise: nil)
    }
}
