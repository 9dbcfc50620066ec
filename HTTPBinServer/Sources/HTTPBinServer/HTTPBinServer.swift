public import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import HummingbirdWebSocket
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// An httpbin.org-compatible server on loopback, started in-process by tests, benchmarks and demos.
///
/// ```swift
/// let server = try await HTTPBinServer.start()
/// // GET server.url("/get") ...
/// try await server.shutdown()
/// ```
///
/// It binds an ephemeral port unless told otherwise, so any number of servers can run at once. With
/// `tls` on, it also opens one HTTPS listener per ``TLSVariant``, each presenting a certificate from
/// ``certificates`` (the configuration's, or fresh ones); those listeners offer HTTP/2 and HTTP/1.1 over ALPN. The plain listener accepts
/// WebSocket upgrades at `/websocket/echo`.
public final class HTTPBinServer: Sendable {
    /// How to start a server.
    public struct Configuration: Sendable {
        /// The address to listen on.
        public var host: String
        /// The plain HTTP port; 0 picks a free one.
        public var port: Int
        /// Whether to open the HTTPS listeners, one per ``TLSVariant``, each on a free port.
        public var tls: Bool
        /// How long an idle keep-alive connection stays open; nil keeps it until the client closes it.
        public var idleTimeout: Duration?
        /// Where the server logs; quiet (errors only) by default.
        public var logger: Logger
        /// The certificates the HTTPS listeners present when `tls` is on; nil generates fresh ones.
        /// Tests that need certificates made in advance (naming an OCSP responder, say) pass them here.
        public var certificates: TestCertificates?

        /// - Parameters:
        ///   - host: the address to listen on, `127.0.0.1` by default.
        ///   - port: the plain HTTP port; 0 (the default) picks a free one.
        ///   - tls: whether to open the HTTPS listeners too.
        ///   - idleTimeout: how long idle keep-alive connections stay open.
        ///   - logger: where the server logs.
        ///   - certificates: what the HTTPS listeners present; nil (the default) generates fresh certificates.
        public init(
            host: String = "127.0.0.1", port: Int = 0, tls: Bool = false, idleTimeout: Duration? = nil, logger: Logger? = nil,
            certificates: TestCertificates? = nil
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.idleTimeout = idleTimeout
            self.logger = logger ?? Self.quietLogger
            self.certificates = certificates
        }

        private static var quietLogger: Logger {
            var logger = Logger(label: "HTTPBinServer")
            logger.logLevel = .error
            return logger
        }
    }

    /// Where the plain HTTP listener is: `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The plain HTTP listener's port.
    public let port: Int
    /// The certificates the HTTPS listeners present; nil unless started with `tls`.
    public let certificates: TestCertificates?
    /// Where the fault listener is (see `faultURL(_:)`).
    public let faultPort: Int
    private let tlsPorts: [TLSVariant: Int]
    private let host: String
    private let faultChannel: any Channel
    private let recorder: ConnectionRecorder
    private let serviceGroup: ServiceGroup
    private let running: Task<Void, any Error>

    private init(
        host: String, ports: [Int], certificates: TestCertificates?, recorder: ConnectionRecorder, serviceGroup: ServiceGroup,
        running: Task<Void, any Error>, faultChannel: any Channel
    ) {
        self.host = host
        self.faultChannel = faultChannel
        self.faultPort = faultChannel.localAddress?.port ?? -1
        self.port = ports[0]
        self.baseURL = URL(string: "http://\(host):\(ports[0])")!
        self.certificates = certificates
        var tlsPorts: [TLSVariant: Int] = [:]
        for (variant, port) in zip(TLSVariant.allCases, ports.dropFirst()) { tlsPorts[variant] = port }
        self.tlsPorts = tlsPorts
        self.recorder = recorder
        self.serviceGroup = serviceGroup
        self.running = running
    }

    /// Starts a server and returns once every listener accepts connections.
    /// - Parameter configuration: where and how to listen.
    public static func start(_ configuration: Configuration = .init()) async throws -> HTTPBinServer {
        let recorder = ConnectionRecorder()
        let certificates = configuration.tls ? try configuration.certificates ?? TestCertificates.generate() : nil
        var listeners = [(builder: plainListener(configuration, recorder), scheme: "http", port: configuration.port)]
        if let certificates {
            for variant in TLSVariant.allCases {
                listeners.append((try tlsListener(variant, certificates, configuration, recorder), "https", 0))
            }
        }

        let (bound, boundContinuation) = AsyncStream.makeStream(of: (index: Int, port: Int).self)
        let applications = listeners.enumerated().map { index, listener in
            Application(
                responder: HTTPBinResponder(scheme: listener.scheme, recorder: recorder),
                server: listener.builder,
                configuration: .init(address: .hostname(configuration.host, port: listener.port)),
                onServerRunning: { channel in boundContinuation.yield((index, channel.localAddress?.port ?? -1)) },
                logger: configuration.logger)
        }
        let serviceGroup = ServiceGroup(
            configuration: .init(services: applications, gracefulShutdownSignals: [], logger: configuration.logger))
        let running = Task {
            defer { boundContinuation.finish() }
            try await serviceGroup.run()
        }

        var ports = [Int](repeating: -1, count: listeners.count)
        var remaining = listeners.count
        for await (index, port) in bound {
            ports[index] = port
            remaining -= 1
            if remaining == 0 { break }
        }
        guard remaining == 0, !ports.contains(-1) else {
            // A listener failed to bind: the group has stopped; report why.
            try await running.value
            throw StartError(message: "HTTPBinServer did not start every listener")
        }
        let faultChannel = try await FaultServer.start(host: configuration.host, group: MultiThreadedEventLoopGroup.singleton)
        return HTTPBinServer(
            host: configuration.host, ports: ports, certificates: certificates, recorder: recorder, serviceGroup: serviceGroup,
            running: running, faultChannel: faultChannel)
    }

    /// Runs `body` against a server of its own, started on free ports and shut down afterwards,
    /// whether `body` returns or throws.
    /// - Parameters:
    ///   - configuration: where and how to listen.
    ///   - body: what to do with the running server.
    @discardableResult
    public static func withServer<T>(
        _ configuration: Configuration = .init(), _ body: (HTTPBinServer) async throws -> T
    ) async throws -> T {
        let server = try await start(configuration)
        let result: T
        do {
            result = try await body(server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
        return result
    }

    /// Stops listening, lets requests in flight finish (for up to two seconds) and closes every connection.
    public func shutdown() async throws {
        try? await faultChannel.close()
        recorder.failHeldRequests()
        await serviceGroup.triggerGracefulShutdown()
        let running = self.running
        let recorder = self.recorder
        let deadline = Task {
            // Requests in flight get two seconds; then connections still open are closed, which
            // lets the listeners finish (an idle keep-alive connection would wait for its client).
            try await Task.sleep(for: .seconds(2))
            recorder.closeOpenConnections()
            try await Task.sleep(for: .seconds(3))
            running.cancel()
        }
        defer { deadline.cancel() }
        do {
            try await running.value
        } catch is CancellationError {
            // Shut down by the deadline: connections were closed rather than drained.
        }
    }

    /// A URL on the plain HTTP listener.
    /// - Parameter path: a path with an optional query, such as `/get?a=1`.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// A URL on the HTTPS listener of `variant`, or nil when the server was started without `tls`.
    /// - Parameters:
    ///   - variant: which certificate the listener presents.
    ///   - path: a path with an optional query, such as `/get`.
    ///   - host: the host name to use in the URL; the certificates name `localhost` and `127.0.0.1`.
    public func tlsURL(_ variant: TLSVariant, _ path: String = "", host: String? = nil) -> URL? {
        guard let port = tlsPorts[variant] else { return nil }
        return URL(string: "https://\(host ?? self.host):\(port)\(path)")
    }

    /// A URL on the fault listener, which answers some paths with broken HTTP on purpose: `/truncated-body`,
    /// `/truncated-chunked`, `/malformed`, `/close`, `/close-on-reuse`, `/extra-bytes`, `/hang`.
    public func faultURL(_ path: String, scheme: String = "http") -> URL {
        URL(string: "\(scheme)://\(host):\(faultPort)\(path)")!
    }

    /// The port of the HTTPS listener of `variant`, or nil when the server was started without `tls`.
    public func tlsPort(_ variant: TLSVariant) -> Int? { tlsPorts[variant] }

    /// Connection and request counts across every listener.
    public var statistics: ConnectionStatistics { recorder.statistics }

    /// Returns once the connection statistics meet `condition` — checked at every connection opened
    /// or closed and every request received — so tests await events instead of sleeping.
    ///
    /// ```swift
    /// try await server.waitUntil { $0.openConnections == 0 }
    /// ```
    /// - Parameters:
    ///   - timeout: how long to wait before failing; a wait that cannot end fails instead of hanging.
    ///   - condition: checked under the recorder's lock; keep it short.
    /// - Throws: ``ConnectionStatisticsWaitTimedOut`` past `timeout`, `CancellationError` when the
    ///   calling task is cancelled.
    public func waitUntil(
        within timeout: Duration = .seconds(30), _ condition: @escaping @Sendable (ConnectionStatistics) -> Bool
    ) async throws {
        try await recorder.waitUntil(within: timeout, condition)
    }

    /// Opens `gate`: the requests held there (`/hold/:gate`, `/range/:n?hold=gate&hold_at=k`) go on,
    /// and so does every later one that reaches it. Until then each waits, counted in
    /// ``ConnectionStatistics/heldRequests``, so a test decides when a slow answer goes on instead
    /// of relying on a delay; a held request ends when its client leaves, its HTTP/2 stream is reset,
    /// or the server shuts down. A gate stays open for the server's life: a test that holds twice
    /// uses two names.
    ///
    /// ```swift
    /// let busy = Task { try await fetch(server.url("/hold/busy")) }
    /// try await server.waitUntil { $0.heldRequests["busy"] == 1 }
    /// // … what must happen while the request is under way …
    /// server.release("busy")
    /// ```
    public func release(_ gate: String) { recorder.release(gate) }

    /// Starts counting afresh; connections open now count as newly accepted.
    public func resetStatistics() { recorder.reset() }

    struct StartError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    private static func plainListener(_ configuration: Configuration, _ recorder: ConnectionRecorder) -> HTTPServerBuilder {
        let http1 = HTTP1Channel.Configuration(idleTimeout: configuration.idleTimeout.map(TimeAmount.init))
        return HTTPServerBuilder { responder in
            RecordingChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: .init(http1: http1), shouldUpgrade: WebSocketEcho.shouldUpgrade),
                recorder: recorder)
        }
    }

    private static func tlsListener(
        _ variant: TLSVariant, _ certificates: TestCertificates, _ configuration: Configuration, _ recorder: ConnectionRecorder
    ) throws -> HTTPServerBuilder {
        let leaf = certificates.leaf(for: variant)
        let chain = try ([leaf] + certificates.intermediates(for: variant)).map {
            NIOSSLCertificateSource.certificate(try NIOSSLCertificate(bytes: $0.certificateDER, format: .der))
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem)))
        if variant == .tls12Only { tls.maximumTLSVersion = .tlsv12 }
        // On shutdown NIOSSL waits this long for each idle client's close_notify; clients that keep
        // pooled connections open (as HTTP clients do) would otherwise hold every shutdown for 5 s.
        tls.shutdownTimeout = .milliseconds(100)
        if variant == .mutualTLS {
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: certificates.certificateAuthority.certificateDER, format: .der)])
        }
        let channelConfiguration = HTTP2UpgradeChannel.Configuration(
            idleTimeout: configuration.idleTimeout,
            streamConfiguration: .init(idleTimeout: configuration.idleTimeout.map(TimeAmount.init)))
        return HTTPServerBuilder { [tls] responder in
            RecordingChildChannel(
                base: try HTTP2UpgradeChannel(tlsConfiguration: tls, configuration: channelConfiguration, responder: responder),
                recorder: recorder)
        }
    }
}

/// `/websocket/echo`: every text or binary message comes back as it was sent.
enum WebSocketEcho {
    static let maximumMessageSize = 16 * 1024 * 1024

    @Sendable static func shouldUpgrade(
        _ request: HTTPRequest, _ channel: any Channel, _ logger: Logger
    ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/websocket/echo" else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: maximumMessageSize) {
                switch message {
                case .text(let text): try await outbound.write(.text(text))
                case .binary(let bytes): try await outbound.write(.binary(bytes))
                }
            }
        }
    }
}

extension TimeAmount {
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
