public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket server on loopback for the tests, on plain SwiftNIO (so that it can also misbehave),
/// over plain TCP or TLS. Paths under `/websocket/`:
///
/// - `echo`: every message comes back as sent; a ping gets its pong; a close is echoed.
/// - `close?code=N&reason=R`: sends the text `closing`, then closes with `N` (1000) and `R`.
/// - `stream?count=N&size=S`: sends `N` binary messages of `S` bytes (or the texts `message i`
///   when `S` is absent) as fast as the connection takes them, then closes with 1000.
/// - `headers`: sends the handshake's header fields as one JSON text message, then echoes.
/// - `protocol`: chooses the first subprotocol offered, then echoes; `wrong-protocol` chooses one
///   never offered.
/// - `fragmented`: sends `hello, world` in three fragments with a ping between them, then closes.
/// - `silent`: accepts and then never answers anything, pings and closes included.
/// - `deflate`: accepts permessage-deflate when offered, sends RFC 7692's compressed `Hello`, then
///   reports how the client's first message was framed (`rsv1=… payload=<hex>`) and closes.
/// - `invalid-utf8`, `reserved-opcode`, `masked`, `long-ping`, `truncated`, `drop`: break the
///   protocol in the way their names say (`drop` closes the TCP connection without a close frame).
/// - `refuse`: answers 403 with a body, `redirect`: 302 to `echo`, `bad-accept`: a 101 with a
///   wrong `Sec-WebSocket-Accept`, `flaky?key=K`: 503 the first time `K` is seen, then `echo`.
public final class WebSocketTestServer: Sendable {
    private let channel: any Channel
    /// Where to connect: `ws://127.0.0.1:port` or `wss://localhost:port`.
    public let baseURL: URL

    private init(channel: any Channel, baseURL: URL) {
        self.channel = channel
        self.baseURL = baseURL
    }

    /// The URL of a path under `/websocket/`, with `query` if given.
    public func url(_ path: String, query: String? = nil) -> URL {
        URL(string: baseURL.absoluteString + "/websocket/" + path + (query.map { "?" + $0 } ?? ""))!
    }

    /// Starts a server on an ephemeral port of 127.0.0.1; with `certificates`, over TLS (the
    /// valid leaf, for `localhost`).
    public static func start(tls certificates: TestCertificates? = nil) async throws -> WebSocketTestServer {
        var sslContext: NIOSSLContext?
        if let certificates {
            let leaf = certificates.leaf(for: .valid)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(try NIOSSLCertificate(bytes: leaf.certificateDER, format: .der))],
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem)))
            configuration.applicationProtocols = ["http/1.1"]
            sslContext = try NIOSSLContext(configuration: configuration)
        }
        let flaky = FlakyKeys()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [sslContext] channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext { try pipeline.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 24, automaticErrorHandling: false,
                        shouldUpgrade: { channel, head in
                            channel.eventLoop.makeSucceededFuture(WebSocketBehavior.upgradeHeaders(for: head, flaky: flaky))
                        },
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture { try WebSocketBehavior.install(on: channel, for: head) }
                        })
                    try pipeline.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }), withErrorHandling: true)
                    try pipeline.addHandler(WebSocketRefusalHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        let base = certificates == nil ? "ws://127.0.0.1:\(port)" : "wss://localhost:\(port)"
        return WebSocketTestServer(channel: channel, baseURL: URL(string: base)!)
    }

    /// Stops accepting connections.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// The keys `flaky` has seen.
final class FlakyKeys: Sendable {
    private let seen = NIOLockedValueBox<Set<String>>([])

    /// Whether `key` is seen for the first time.
    func firstSighting(of key: String) -> Bool {
        seen.withLockedValue { $0.insert(key).inserted }
    }
}

/// Answers the handshakes the upgrader declined (refusals, redirects, a bad accept key, unknown paths).
final class WebSocketRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = WebSocketBehavior.path(of: head.uri)
        var headers = HTTPHeaders()
        var status = HTTPResponseStatus.notFound
        var body = "not found"
        switch path {
        case "refuse":
            (status, body) = (.forbidden, "no WebSockets here")
        case "redirect":
            (status, body) = (.found, "")
            headers.add(name: "Location", value: "/websocket/echo")
        case "flaky":
            (status, body) = (.serviceUnavailable, "try again")
        case "bad-accept":
            (status, body) = (.switchingProtocols, "")
            headers.add(name: "Upgrade", value: "websocket")
            headers.add(name: "Connection", value: "Upgrade")
            headers.add(name: "Sec-WebSocket-Accept", value: "bm90IHRoZSByaWdodCBrZXk=")
        default:
            break
        }
        if status != .switchingProtocols { headers.add(name: "Content-Length", value: String(body.utf8.count)) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
