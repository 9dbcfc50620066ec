public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A proxy on loopback for the tests: an HTTP forward proxy, an HTTP `CONNECT` proxy and a SOCKS5
/// proxy on one ephemeral port (a connection whose first byte is 5 speaks SOCKS5). Its
/// ``statistics`` say which requests and tunnels went through it.
///
/// With ``Configuration/credentials`` set, forwarded requests and `CONNECT`s without a matching
/// `Proxy-Authorization` (Basic, or Digest with ``AuthenticationScheme/digest``) get `407` with a
/// `Proxy-Authenticate` challenge for the realm `proxy`, and SOCKS5 clients must authenticate with
/// the user name and password (RFC 1929).
public final class ProxyServer: Sendable {
    /// How the proxy answers `CONNECT`, for the fault tests.
    public enum ConnectBehavior: Sendable {
        /// Opens the tunnel (or answers 502 when the origin cannot be reached).
        case tunnel
        /// Closes the connection without answering.
        case close
        /// Answers with bytes that are not HTTP.
        case garbage
        /// Answers `200` and closes the tunnel as soon as the client sends its first bytes.
        case closeInsideTunnel
    }

    /// How the proxy asks for credentials.
    public enum AuthenticationScheme: Sendable {
        /// `Proxy-Authenticate: Basic realm="proxy"`.
        case basic
        /// `Proxy-Authenticate: Digest realm="proxy", qop="auth", algorithm=MD5` with a fresh nonce.
        case digest
    }

    /// The proxy's settings.
    public struct Configuration: Sendable {
        /// The user name and password the proxy requires (HTTP and SOCKS5 clients); nil requires none.
        public var credentials: (user: String, password: String)?
        /// How it asks for them.
        public var authenticationScheme: AuthenticationScheme
        /// How `CONNECT` is answered.
        public var connectBehavior: ConnectBehavior

        public init(
            credentials: (user: String, password: String)? = nil, authenticationScheme: AuthenticationScheme = .basic,
            connectBehavior: ConnectBehavior = .tunnel
        ) {
            self.credentials = credentials
            self.authenticationScheme = authenticationScheme
            self.connectBehavior = connectBehavior
        }

        /// Whether a request with this `Proxy-Authorization` may pass.
        func accepts(_ authorization: String?, method: String) -> Bool {
            guard let credentials else { return true }
            guard let authorization else { return false }
            switch authenticationScheme {
            case .basic:
                return authorization == "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            case .digest:
                guard authorization.lowercased().hasPrefix("digest ") else { return false }
                let fields = Authentication.parameters(String(authorization.dropFirst("Digest ".count)))
                return fields["realm"] == "proxy"
                    && Authentication.expectedResponse(
                        to: fields, method: method, user: credentials.user, password: credentials.password, algorithm: .md5, body: [])
                        == true
            }
        }

        /// The `Proxy-Authenticate` value of a 407.
        var challenge: String {
            switch authenticationScheme {
            case .basic: "Basic realm=\"proxy\""
            case .digest: "Digest realm=\"proxy\", nonce=\"\(UInt64.random(in: 0...UInt64.max))\", qop=\"auth\", algorithm=MD5"
            }
        }
    }

    /// What went through the proxy.
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted.
        public var connections = 0
        /// The absolute URIs of requests forwarded to their origins.
        public var forwardedRequests: [String] = []
        /// The `host:port` of each `CONNECT` tunnel opened.
        public var tunnels: [String] = []
        /// The targets SOCKS5 clients asked for, as `name:port` for a name (resolved by the proxy) or
        /// `address:port` for an address.
        public var socksTargets: [String] = []
        /// Whether each SOCKS5 target was a name (true) or an address.
        public var socksTargetWasName: [Bool] = []
        /// Requests and `CONNECT`s answered 407.
        public var authenticationChallenges = 0
        /// The `Proxy-Authorization` values received, in order.
        public var authorizations: [String] = []
    }

    /// The port the proxy listens on (127.0.0.1).
    public let port: Int
    /// The proxy's URL for HTTP clients: `http://127.0.0.1:port`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The proxy's URL for SOCKS5 clients; `resolvingRemotely` gives the `socks5h` scheme.
    public func socksURL(resolvingRemotely: Bool) -> URL {
        URL(string: "\(resolvingRemotely ? "socks5h" : "socks5")://127.0.0.1:\(port)")!
    }

    private let channel: any Channel
    private let recorder: ProxyRecorder

    private init(channel: any Channel, recorder: ProxyRecorder) {
        self.channel = channel
        self.recorder = recorder
        port = channel.localAddress?.port ?? 0
    }

    /// Starts a proxy on 127.0.0.1 with an ephemeral port.
    public static func start(_ configuration: Configuration = .init()) async throws -> ProxyServer {
        let recorder = ProxyRecorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                recorder.update { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyProtocolSniffer(configuration: configuration, recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ProxyServer(channel: channel, recorder: recorder)
    }

    /// What has gone through the proxy so far.
    public var statistics: Statistics { recorder.statistics }

    /// Stops listening; open tunnels end when their peers close.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// The proxy's statistics, shared by its connections.
final class ProxyRecorder: Sendable {
    private let box = NIOLockedValueBox(ProxyServer.Statistics())

    func update(_ change: (inout ProxyServer.Statistics) -> Void) {
        box.withLockedValue(change)
    }

    var statistics: ProxyServer.Statistics { box.withLockedValue { $0 } }
}

/// Looks at a connection's first byte: 5 starts SOCKS5, anything else HTTP.
private final class ProxyProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let configuration: ProxyServer.Configuration
    private let recorder: ProxyRecorder

    init(configuration: ProxyServer.Configuration, recorder: ProxyRecorder) {
        self.configuration = configuration
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        do {
            let pipeline = context.pipeline.syncOperations
            if first == 5 {
                try pipeline.addHandler(
                    SOCKSProxyHandler(recorder: recorder, credentials: configuration.credentials), position: .after(self))
            } else {
                let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                try pipeline.addHandler(decoder, position: .after(self))
                try pipeline.addHandler(
                    HTTPProxyHandler(configuration: configuration, recorder: recorder, decoder: decoder), position: .after(decoder))
            }
            context.fireChannelRead(data)
            pipeline.removeHandler(context: context, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }
}

/// Copies what one channel reads to its partner, and closes the partner when it closes.
final class ProxyRelayHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Connects to `host:port` on `eventLoop` with a relay back to `client` in the new channel's
    /// pipeline, and an HTTP request encoder before it when `encodesRequests`.
    static func connect(
        host: String, port: Int, relayingTo client: any Channel, on eventLoop: any EventLoop, encodesRequests: Bool = false
    ) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if encodesRequests { try pipeline.addHandler(HTTPRequestEncoder()) }
                    try pipeline.addHandler(ProxyRelayHandler(partner: client))
                }
            }
            .connect(host: host, port: port)
    }
}

extension ChannelHandlerContext {
    /// Writes `text` as it is (no HTTP encoder is in the proxy's outbound path) and closes if asked.
    func writeRaw(_ text: String, thenClose: Bool) {
        let channel = channel
        let written = channel.writeAndFlush(ByteBuffer(string: text))
        if thenClose { written.whenComplete { _ in channel.close(promise: nil) } }
    }
}
