import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP side of the test proxy: forwards absolute-form requests to their origins (one upstream
/// connection per client connection, replaced when the origin changes) and opens `CONNECT`
/// tunnels. Answers it makes itself are written as raw bytes: no encoder sits in its outbound path,
/// so that an origin's answers can be relayed as they come.
final class HTTPProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private enum State {
        case idle
        /// Forwarding a request's parts to the origin over `upstream`.
        case forwarding
        /// A refused request's body is read and dropped.
        case discarding
        /// A `CONNECT` was accepted; its end opens the tunnel.
        case connecting(host: String, port: Int)
        case tunnelling
    }

    private let configuration: ProxyServer.Configuration
    private let recorder: ProxyRecorder
    private let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    private var state = State.idle
    /// The connection to the current origin, and which origin it is.
    private var upstream: (authority: String, channel: EventLoopFuture<any Channel>)?

    init(configuration: ProxyServer.Configuration, recorder: ProxyRecorder, decoder: ByteToMessageHandler<HTTPRequestDecoder>) {
        self.configuration = configuration
        self.recorder = recorder
        self.decoder = decoder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (state, unwrapInboundIn(data)) {
        case (.idle, .head(let head)):
            received(head, context: context)
        case (.forwarding, .body(let chunk)):
            forward(.body(.byteBuffer(chunk)))
        case (.forwarding, .end(let trailers)):
            forward(.end(trailers))
            state = .idle
        case (.discarding, .end):
            state = .idle
        case (.connecting(let host, let port), .end):
            openTunnel(host: host, port: port, context: context)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.channel.whenSuccess { $0.close(promise: nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func received(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        if let authorization = head.headers.first(name: "Proxy-Authorization") {
            recorder.update { $0.authorizations.append(authorization) }
        }
        if !configuration.accepts(head.headers.first(name: "Proxy-Authorization"), method: head.method.rawValue) {
            recorder.update { $0.authenticationChallenges += 1 }
            let isConnect = head.method == .CONNECT
            state = isConnect ? .idle : .discarding
            context.writeRaw(
                "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: \(configuration.challenge)\r\nContent-Length: 0\r\n\r\n",
                thenClose: isConnect)
            return
        }
        if head.method == .CONNECT {
            connect(head, context: context)
        } else {
            startForwarding(head, context: context)
        }
    }

    // MARK: Forwarding

    private func startForwarding(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let url = URLComponents(string: head.uri), url.scheme?.lowercased() == "http", let host = url.host else {
            state = .discarding
            context.writeRaw("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", thenClose: false)
            return
        }
        recorder.update { $0.forwardedRequests.append(head.uri) }
        let port = url.port ?? 80
        let authority = "\(host):\(port)"
        if upstream?.authority != authority {
            upstream?.channel.whenSuccess { $0.close(promise: nil) }
            let client = context.channel
            let channel = ProxyRelayHandler.connect(
                host: host, port: port, relayingTo: client, on: context.eventLoop, encodesRequests: true)
            channel.whenFailure { _ in
                client.writeAndFlush(ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                    .whenComplete { _ in client.close(promise: nil) }
            }
            upstream = (authority, channel)
        }
        var forwarded = head
        forwarded.uri = (url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath) + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        forwarded.headers.remove(name: "Proxy-Authorization")
        forwarded.headers.remove(name: "Proxy-Connection")
        state = .forwarding
        forward(.head(forwarded))
    }

    private func forward(_ part: HTTPClientRequestPart) {
        upstream?.channel.whenSuccess { $0.writeAndFlush(part, promise: nil) }
    }

    // MARK: Tunnels

    private func connect(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        switch configuration.connectBehavior {
        case .close:
            context.close(promise: nil)
            return
        case .garbage:
            context.writeRaw("THIS IS NOT HTTP\r\n\r\n", thenClose: false)
            return
        case .tunnel, .closeInsideTunnel:
            break
        }
        guard let separator = head.uri.lastIndex(of: ":"), let port = Int(head.uri[head.uri.index(after: separator)...]) else {
            context.writeRaw("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", thenClose: true)
            return
        }
        var host = String(head.uri[..<separator])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        state = .connecting(host: host, port: port)
    }

    private func openTunnel(host: String, port: Int, context: ChannelHandlerContext) {
        state = .tunnelling
        let client = context.channel
        let upstream = ProxyRelayHandler.connect(host: host, port: port, relayingTo: client, on: context.eventLoop)
        upstream.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .failure:
                context.writeRaw("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", thenClose: true)
            case .success(let upstream):
                recorder.update { $0.tunnels.append("\(host):\(port)") }
                context.writeRaw("HTTP/1.1 200 Connection Established\r\n\r\n", thenClose: false)
                do {
                    // From here on bytes are relayed as they are, both ways.
                    let pipeline = context.pipeline.syncOperations
                    let relay: any ChannelHandler =
                        configuration.connectBehavior == .closeInsideTunnel
                        ? ClosingHandler(partner: upstream) : ProxyRelayHandler(partner: upstream)
                    try pipeline.addHandler(relay)
                    pipeline.removeHandler(context: context, promise: nil)
                    pipeline.removeHandler(decoder, promise: nil)
                } catch {
                    upstream.close(promise: nil)
                    client.close(promise: nil)
                }
            }
        }
    }
}

/// Closes the tunnel, both ends, at the first byte it reads: a tunnel that dies once used.
private final class ClosingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.close(promise: nil)
        context.close(promise: nil)
    }
}
