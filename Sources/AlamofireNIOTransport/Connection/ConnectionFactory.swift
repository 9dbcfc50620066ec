import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

extension String {
    /// The host as it goes in a URL or a `Host` field: an IPv6 address in brackets.
    var bracketedIfIPv6: String {
        // Byte by byte: Foundation's `contains` on strings goes through NSString.
        utf8.contains(UInt8(ascii: ":")) ? "[\(self)]" : self
    }
}

/// Where connections go: the pool keeps one set of connections per origin (and per proxy).
struct Origin: Hashable, Sendable, CustomStringConvertible {
    var isTLS: Bool
    var host: String
    var port: Int
    /// The client certificate connections to this origin present; part of the pool's key.
    var clientIdentity: TransportClientIdentity?
    /// The proxy connections to this origin go through; part of the pool's key.
    var proxy: TransportProxy?
    /// Whether the connection carries a WebSocket: HTTP/1.1 only (ALPN offers no `h2`), and through
    /// an HTTP proxy by a `CONNECT` tunnel even for plain `ws`.
    var isWebSocket = false

    init(url: URL, clientIdentity: TransportClientIdentity? = nil, proxy: TransportProxy? = nil) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw TransportError(.unsupportedURL, "only http and https URLs are supported, not \(url)")
        }
        guard var host = url.host, !host.isEmpty else { throw TransportError(.badURL, "\(url) has no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.isTLS = scheme == "https"
        self.host = host
        self.port = url.port ?? (isTLS ? 443 : 80)
        self.clientIdentity = isTLS ? clientIdentity : nil
        self.proxy = proxy
    }

    /// Whether requests go to an HTTP proxy in absolute form (`http` through an HTTP proxy).
    var isForwardedByProxy: Bool { !isTLS && !isWebSocket && proxy?.isHTTP == true }

    /// The `Host` header value: the port only when it is not the scheme's default.
    var hostHeader: String {
        let name = host.bracketedIfIPv6
        return port == (isTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    var isIPAddress: Bool { (try? SocketAddress(ipAddress: host, port: port)) != nil }

    var description: String {
        let url = "\(isTLS ? "https" : "http")://\(hostHeader)"
        return proxy.map { "\(url) through \($0)" } ?? url
    }
}

/// Opens connections: resolves the host and races its addresses, performs the TLS handshake with
/// the trust evaluator, and sets up HTTP/2 or HTTP/1.1 as ALPN decides. Records the timings.
struct ConnectionFactory: Sendable {
    let eventLoopGroup: any EventLoopGroup
    let tls: TransportTLSConfiguration
    /// Whether TLS connections offer `h2` by ALPN.
    let offersHTTP2: Bool
    /// How often an HTTP/2 connection with no open stream pings its server.
    let http2PingInterval: TimeAmount
    /// Answers a proxy's 407 to `CONNECT` (Digest).
    let proxyChallengeAnswerer: ProxySettings.ChallengeAnswerer?
    /// Resolves a host name to addresses (blocking; run on NIO's thread pool).
    let lookup: @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]
    /// Opens TCP connections: NIO's bootstrap over ``lookup`` unless a test scripts them.
    let connector: SocketConnector
    /// The TLS context and roots, or why the TLS settings are unusable (reported by https requests).
    /// Made when the first https connection needs them: reading the system's roots takes tens of
    /// milliseconds, which a session that only speaks plain HTTP should not pay.
    private let tlsSetup: LazyTLSSetup
    /// Contexts for connections that present a client identity of their own or offer HTTP/1.1 only;
    /// the 16 used most recently are kept.
    let otherContexts = NIOLockedValueBox(RecentlyUsedCache<ContextKey, NIOSSLContext>(limit: 16))
    struct ContextKey: Hashable {
        var identity: TransportClientIdentity?
        var offersHTTP2: Bool
    }
    /// How far response bodies are decoded (gzip, deflate, and br and zstd where their traits are
    /// on): at most this many times the coded size. Nil leaves bodies as they arrive.
    let decompressionRatio: Int?
    let logger: Logger
    /// How long opening a connection (connecting, a proxy tunnel, the TLS handshake, an HTTP/2
    /// server's SETTINGS) may take when no deadline applies: a server that stalls is never waited
    /// on for good.
    let setupTimeout: TimeAmount
    /// The largest socket read: a large body arrives in chunks of up to this size.
    static let largestRead = 256 * 1024

    init(
        eventLoopGroup: any EventLoopGroup, tls: TransportTLSConfiguration, decompressionRatio: Int?,
        offersHTTP2: Bool = true, http2PingInterval: TimeAmount = .seconds(30),
        proxyChallengeAnswerer: ProxySettings.ChallengeAnswerer? = nil,
        lookup: @escaping @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress] = HostResolver.addresses,
        connector: SocketConnector? = nil, setupTimeout: TimeAmount = .seconds(60), logger: Logger
    ) {
        self.setupTimeout = setupTimeout
        self.eventLoopGroup = eventLoopGroup
        self.tls = tls
        self.decompressionRatio = decompressionRatio
        self.offersHTTP2 = offersHTTP2
        self.http2PingInterval = http2PingInterval
        self.proxyChallengeAnswerer = proxyChallengeAnswerer
        self.lookup = lookup
        self.connector = connector ?? .bootstrap(lookup: lookup)
        self.logger = logger
        self.tlsSetup = LazyTLSSetup {
            if let maximum = tls.maximumVersion, maximum.rank < tls.minimumVersion.rank {
                return .failure(
                    TransportError(
                        .secureConnectionFailed,
                        "the TLS settings are not usable: the maximum version (\(maximum)) is below the minimum (\(tls.minimumVersion))"))
            }
            do {
                let extraRoots = try tls.additionalTrustRoots.map { try Certificate(derEncoded: $0) }
                let context = try NIOSSLContext(
                    configuration: Self.clientConfiguration(tls, identity: tls.clientIdentity, offersHTTP2: offersHTTP2))
                return .success((context, TrustAnchors(extraRoots, includingSystemRoots: tls.trustsSystemRoots)))
            } catch {
                return .failure(TransportError(.secureConnectionFailed, "the TLS settings are not usable", underlyingError: error))
            }
        }
    }

    private static func clientConfiguration(
        _ tls: TransportTLSConfiguration, identity: TransportClientIdentity?, offersHTTP2: Bool
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = tls.minimumVersion
        configuration.maximumTLSVersion = tls.maximumVersion
        configuration.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        // The trust evaluator does every check, the host name included.
        configuration.certificateVerification = .noHostnameVerification
        if let identity {
            configuration.certificateChain = identity.certificateChain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.privateKey)
        }
        return configuration
    }

    /// The context and roots for a connection to `origin`: the transport's, or one made (once) for
    /// the origin's own client identity, or for a WebSocket (which must not be offered `h2`).
    func tlsSetup(for origin: Origin) throws -> (context: NIOSSLContext, anchors: TrustAnchors) {
        let setup = try tlsSetup.value.get()
        let identity = origin.clientIdentity ?? tls.clientIdentity
        let key = ContextKey(identity: identity, offersHTTP2: offersHTTP2 && !origin.isWebSocket)
        guard key != ContextKey(identity: tls.clientIdentity, offersHTTP2: offersHTTP2) else { return setup }
        return try otherContexts.withLockedValue { contexts in
            if let context = contexts.value(for: key) { return (context, setup.anchors) }
            do {
                let context = try NIOSSLContext(
                    configuration: Self.clientConfiguration(tls, identity: identity, offersHTTP2: key.offersHTTP2))
                contexts.insert(context, for: key)
                return (context, setup.anchors)
            } catch {
                throw TransportError(.secureConnectionFailed, "the client certificate is not usable", underlyingError: error)
            }
        }
    }

    /// Opens a connection to `origin`: resolves it and races its addresses (Happy Eyeballs),
    /// performs the TLS handshake with the trust evaluator, and sets up HTTP/2 when ALPN chose
    /// `h2`, else HTTP/1.1. `deadline` (else ``setupTimeout`` from now) bounds all of it.
    func makeConnection(
        id: Int, origin: Origin, deadline: NIODeadline?, eventLoop: any EventLoop,
        delegate: any ExchangeHandlerDelegate & HTTP2ConnectionDelegate
    ) async throws -> EstablishedConnection {
        let opened = try await openChannel(to: origin, deadline: deadline, on: eventLoop)
        let deadline = opened.deadline
        do {
            switch try await install(on: opened.channel, origin: origin, id: id, metrics: opened.metrics, delegate: delegate).get() {
            case .http1(let connection):
                return EstablishedConnection(connection: connection, version: .http1, maximumStreams: 1)
            case .http2(let connection, let ready):
                // Ready once the server's first SETTINGS say how many streams it allows; a server that
                // never sends them must not hold the origin's only connection attempt for good.
                let maximumStreams = try await withDeadline(deadline, on: opened.channel) { try await ready.get() }
                return EstablishedConnection(connection: connection, version: .http2, maximumStreams: maximumStreams)
            }
        } catch {
            throw setUpFailure(error, of: opened)
        }
    }

    /// A connected channel, secured when the origin is `https`, with nothing of HTTP on it yet (a
    /// TLS channel keeps its ``TLSHandshakeObserver``, which holds back what the server sends until
    /// the caller has set up its handlers and removed it).
    struct OpenedChannel: Sendable {
        let channel: any Channel
        let origin: Origin
        var metrics: ExchangeMetrics
        /// When the time to open the connection ends.
        let deadline: NIODeadline
        /// The first error after the TLS handshake (an alert refusing the client's certificate).
        let errorAfterHandshake: NIOLockedValueBox<(any Error)?>
    }

    /// Connects (through the proxy, if any) and performs the TLS handshake, recording the timings;
    /// `deadline` (else ``setupTimeout`` from the start) bounds it. The channel is on `eventLoop`
    /// (nil: the group's next).
    func openChannel(to origin: Origin, deadline: NIODeadline?, on eventLoop: (any EventLoop)? = nil) async throws -> OpenedChannel {
        if origin.isTLS {
            // The first https connection makes the TLS context and reads the system's roots: on the
            // thread pool (it blocks), and before the connect timeout and metrics start.
            let factory = self
            _ = try await NIOThreadPool.singleton.runIfActive { try factory.tlsSetup(for: origin) }
        }
        var metrics = ExchangeMetrics(fetchStart: .now())
        let eventLoop = eventLoop ?? eventLoopGroup.next()
        // On the loop's clock, as every timer that enforces it.
        let deadline = deadline ?? eventLoop.now + setupTimeout
        metrics.domainLookupStart = .now()
        let channel = try await connectChannel(to: origin, deadline: deadline, on: eventLoop, metrics: &metrics)
        // A TLS 1.3 server judges the client's certificate after the client's handshake is done:
        // its alert can end the connection while it is set up.
        var opened = OpenedChannel(
            channel: channel, origin: origin, metrics: metrics, deadline: deadline, errorAfterHandshake: NIOLockedValueBox(nil))
        do {
            var negotiated: String?
            if origin.isTLS {
                opened.metrics.secureConnectionStart = .now()
                negotiated = try await handshake(
                    on: channel, origin: origin, deadline: deadline, errorAfterHandshake: opened.errorAfterHandshake)
                opened.metrics.secureConnectionEnd = .now()
            }
            opened.metrics.localAddress = channel.localAddress?.ipAddress
            opened.metrics.localPort = channel.localAddress?.port
            opened.metrics.remoteAddress = channel.remoteAddress?.ipAddress
            opened.metrics.remotePort = channel.remoteAddress?.port
            opened.metrics.isProxyConnection = origin.proxy != nil
            opened.metrics.networkProtocolName = negotiated == "h2" ? "h2" : "http/1.1"
            return opened
        } catch {
            throw setUpFailure(error, of: opened)
        }
    }

    /// Closes a channel whose set-up failed and says why: a refused client certificate when an
    /// alert says so, else the error itself.
    func setUpFailure(_ error: any Error, of opened: OpenedChannel) -> any Error {
        opened.channel.close(promise: nil)
        let presentsCertificate = presentsCertificate(to: opened.origin)
        // The observer's note (or, in the handshake's own failure, its cause), or (once HTTP/2 had taken over from it) the connection's own error.
        let candidates = [opened.errorAfterHandshake.withLockedValue { $0 }, (error as? TransportError)?.underlyingError ?? error]
        for candidate in candidates {
            if let refused = ClientCertificateAlert.transportError(for: candidate, presentedCertificate: presentsCertificate) {
                return refused
            }
        }
        return (error as? TransportError) ?? .connectionLost("the connection failed while it was set up", error)
    }

    /// Connects to the origin, or to its proxy and through the tunnel to the origin. A `CONNECT`
    /// refused with a 407 whose challenge the proxy settings answer (Digest) is sent once more, on a
    /// new connection, with the answer.
    private func connectChannel(
        to origin: Origin, deadline: NIODeadline, on eventLoop: any EventLoop, metrics: inout ExchangeMetrics
    ) async throws -> any Channel {
        guard let proxy = origin.proxy, ProxyTunnel.isNeeded(for: origin, through: proxy) else {
            return try await connectSocket(to: origin, deadline: deadline, on: eventLoop, metrics: &metrics)
        }
        var authorization = proxy.credentials?.basicAuthorization
        var answered = false
        while true {
            let channel = try await connectSocket(to: origin, deadline: deadline, on: eventLoop, metrics: &metrics)
            do {
                let target = try await socksTarget(for: origin, through: proxy, deadline: deadline, on: channel.eventLoop)
                try await withDeadline(deadline, on: channel) {
                    try await ProxyTunnel.open(on: channel, to: origin, through: proxy, authorization: authorization, socksTarget: target)
                }
                metrics.connectEnd = .now()
                return channel
            } catch {
                channel.close(promise: nil)
                let challenge = (error as? TransportError)?.underlyingError as? ProxyAuthenticationChallenge
                if !answered, let challenge, let credentials = proxy.credentials,
                    let answer = proxyChallengeAnswerer?(challenge.challenges, "CONNECT", origin.authority, nil, credentials)
                {
                    authorization = answer
                    answered = true
                    continue
                }
                throw error
            }
        }
    }

    /// What a SOCKS5 proxy is asked to connect to: the origin's name (`socks5h`), or its address,
    /// resolved here (`socks5`). Nil for an HTTP proxy.
    private func socksTarget(
        for origin: Origin, through proxy: TransportProxy, deadline: NIODeadline?, on eventLoop: any EventLoop
    ) async throws -> SOCKS5Handshake.Target? {
        guard case .socks5(let resolvesRemotely) = proxy.kind else { return nil }
        if let address = try? SocketAddress(ipAddress: origin.host, port: origin.port) { return .address(address) }
        if resolvesRemotely { return .name(origin.host, port: origin.port) }
        // The lookup blocks a thread-pool thread; the connect deadline ends the wait for it.
        let lookup = self.lookup
        let resolved = eventLoop.makePromise(of: [SocketAddress].self)
        let timer = deadline.map { deadline in
            eventLoop.scheduleTask(deadline: deadline) { resolved.fail(TransportError.timedOut("resolving \(origin.host) for \(proxy)")) }
        }
        defer { timer?.cancel() }
        resolved.completeWithTask { try await NIOThreadPool.singleton.runIfActive { try lookup(origin.host, origin.port) } }
        let addresses: [SocketAddress]
        do {
            addresses = try await resolved.futureResult.get()
        } catch {
            throw (error as? TransportError) ?? TransportError(.cannotFindHost, "cannot resolve \(origin.host)", underlyingError: error)
        }
        guard let address = addresses.first else { throw TransportError(.cannotFindHost, "cannot resolve \(origin.host)") }
        return .address(address)
    }

    /// Connects to the origin (or to its proxy) with the factory's connector, by `deadline`: by
    /// default NIO's Happy Eyeballs (RFC 8305) over our own resolver, so the lookup is timed on its
    /// own, and the connect timeout bounds the whole race.
    private func connectSocket(
        to origin: Origin, deadline: NIODeadline?, on eventLoop: any EventLoop, metrics: inout ExchangeMetrics
    ) async throws -> any Channel {
        do {
            let connected = try await connector.connect(
                to: origin.proxy?.host ?? origin.host, port: origin.proxy?.port ?? origin.port, by: deadline, on: eventLoop
            ).get()
            let lookupEnd = connected.lookupEnd ?? .now()
            metrics.domainLookupEnd = lookupEnd
            metrics.connectStart = lookupEnd
            metrics.connectEnd = .now()
            return connected.channel
        } catch {
            throw Self.connectError(error, origin: origin)
        }
    }

    /// The URLError code URLSession gives for a failed connect. A proxy that cannot be reached fails
    /// the request: there is no falling back to a direct connection.
    static func connectError(_ error: any Error, origin: Origin) -> TransportError {
        let target = origin.proxy.map { "the proxy \($0)" } ?? "\(origin)"
        switch error {
        case ChannelError.connectTimeout:
            return TransportError.timedOut("connecting to \(target)")
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty {
                let lookupError = error.dnsAError ?? error.dnsAAAAError
                if let failure = lookupError as? TransportError { return failure }
                let host = origin.proxy?.host ?? origin.host
                return TransportError(.cannotFindHost, "cannot resolve \(host)", underlyingError: lookupError ?? error)
            }
            // No route to the network at all: offline, as URLSession reports it (and OfflineRetrier waits on it).
            // Every connect, to an address given as such too, goes through Happy Eyeballs: its errors come here.
            if error.connectionErrors.allSatisfy({ ($0.error as? IOError)?.errnoCode == ENETUNREACH }) {
                return TransportError(.notConnectedToInternet, "no route to \(target)'s network", underlyingError: error)
            }
            return TransportError(.cannotConnectToHost, "could not connect to \(target)", underlyingError: error)
        case let error as TransportError:
            return error
        default:
            return TransportError(.cannotConnectToHost, "could not connect to \(target)", underlyingError: error)
        }
    }

    /// Adds TLS to the connected channel and waits for the handshake; returns the protocol ALPN chose.
    func handshake(
        on channel: any Channel, origin: Origin, deadline: NIODeadline?, errorAfterHandshake: NIOLockedValueBox<(any Error)?>
    ) async throws -> String? {
        let setup = try tlsSetup(for: origin)
        let trustFailure = NIOLockedValueBox<(any Error)?>(nil)
        let handshake = try await channel.eventLoop.submit { [self] in
            let handler = try NIOSSLClientHandler(
                context: setup.context, serverHostname: origin.isIPAddress ? nil : origin.host,
                customVerificationCallbackWithMetadata: trustCallback(origin: origin, anchors: setup.anchors, failure: trustFailure))
            return try Self.addTLS(handler, to: channel, errorAfterHandshake: errorAfterHandshake)
        }.get()
        do {
            return try await withDeadline(deadline, on: channel) { try await handshake.get() }
        } catch {
            if let rejected = trustFailure.withLockedValue({ $0 }) {
                throw (rejected as? TransportError)
                    ?? TransportError(
                        .serverCertificateUntrusted, "the server trust evaluator rejected \(origin)", underlyingError: rejected)
            }
            if let error = error as? TransportError { throw error }
            // An alert about the client's certificate in `error` is read by the caller.
            throw TransportError(.secureConnectionFailed, "the TLS handshake with \(origin) failed", underlyingError: error)
        }
    }

    /// Adds `handler` and an observer of its handshake to `channel`'s pipeline, on its event loop:
    /// the future ends with the protocol ALPN chose. A channel that closed first (its pipeline takes
    /// no handler) fails the observer's promise as it throws, so no promise is left unfulfilled.
    static func addTLS(
        _ handler: any ChannelHandler, to channel: any Channel, errorAfterHandshake: NIOLockedValueBox<(any Error)?>
    ) throws -> EventLoopFuture<String?> {
        let promise = channel.eventLoop.makePromise(of: String?.self)
        do {
            let observer = TLSHandshakeObserver(promise: promise, errorAfterHandshake: errorAfterHandshake)
            // The observer first, so that it sees the handshake the TLS handler starts when added.
            try channel.pipeline.syncOperations.addHandler(observer)
            try channel.pipeline.syncOperations.addHandler(handler, position: .before(observer))
            guard channel.isActive else { throw TransportError.connectionLost("the server closed the connection before the TLS handshake") }
            return promise.futureResult
        } catch {
            promise.fail(error)
            throw error
        }
    }

    /// The HTTP layer set up on a connected channel.
    private enum Installed: Sendable {
        case http1(HTTP1Connection)
        /// With the future of the server's stream limit, from its first SETTINGS.
        case http2(HTTP2Connection, ready: EventLoopFuture<Int>)
    }

    /// Sets up HTTP/2 (when ALPN chose `h2`) or HTTP/1.1 on the connected channel, on its event loop;
    /// the TLS observer goes last, so that what it held back reaches the handlers just added.
    private func install(
        on channel: any Channel, origin: Origin, id: Int, metrics: ExchangeMetrics,
        delegate: any ExchangeHandlerDelegate & HTTP2ConnectionDelegate
    ) -> EventLoopFuture<Installed> {
        let (decompressionRatio, pingInterval) = (self.decompressionRatio, http2PingInterval)
        return channel.eventLoop.submit {
            guard channel.isActive else { throw TransportError.connectionLost("the server closed the connection while it was set up") }
            var metrics = metrics
            let pipeline = channel.pipeline.syncOperations
            if origin.isTLS { metrics.negotiatedTLSVersion = try pipeline.handler(type: NIOSSLClientHandler.self).tlsVersion }
            let installed: Installed
            if metrics.networkProtocolName == "h2" {
                let (connection, ready) = try HTTP2Connection.start(
                    id: id, channel: channel, connectionMetrics: metrics, decompressionRatio: decompressionRatio,
                    pingInterval: pingInterval,
                    pool: delegate)
                installed = .http2(connection, ready: ready)
            } else {
                let counter = ByteCountingHandler()
                // A file body goes by `sendfile` unless TLS (to the origin or to a proxy) encrypts it.
                let isPlain = (try? pipeline.handler(type: NIOSSLClientHandler.self)) == nil
                let handler = ExchangeHandler(
                    connectionID: id, byteCounter: counter, connectionMetrics: metrics, sendsFileRegions: isPlain)
                handler.delegate = delegate
                try pipeline.addHandler(counter)
                // Every head this pipeline sends has passed `RequestHeadValidation`, which refuses all
                // NIO's validator would (and more): checking each head twice cost 2% of a request.
                try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .fireError, enableOutboundHeaderValidation: false)
                if let decompressionRatio { try pipeline.addResponseDecoders(ratio: decompressionRatio) }
                try pipeline.addHandler(handler)
                installed = .http1(HTTP1Connection(id: id, origin: origin, channel: channel, handler: handler))
            }
            if origin.isTLS { try pipeline.removeHandler(pipeline.handler(type: TLSHandshakeObserver.self), promise: nil) }
            return installed
        }
    }

    /// Whether connections to `origin` present a client certificate.
    private func presentsCertificate(to origin: Origin) -> Bool {
        (origin.clientIdentity ?? tls.clientIdentity) != nil
    }

    /// Runs the trust evaluator on the peer's chain; a rejection is kept to report its own code.
    private func trustCallback(
        origin: Origin, anchors: TrustAnchors, failure: NIOLockedValueBox<(any Error)?>
    ) -> NIOSSLCustomVerificationCallbackWithMetadata {
        let evaluator = tls.serverTrustEvaluator ?? { try await $0.evaluateDefault() }
        return { certificates, promise in
            let chain = certificates.compactMap { try? $0.toDERBytes() }
            let challenge = ServerTrustChallenge(host: origin.host, port: origin.port, certificateChain: chain, defaultAnchors: anchors)
            promise.completeWithTask {
                do {
                    try await evaluator(challenge)
                    return .certificateVerified(VerificationMetadata(nil))
                } catch {
                    failure.withLockedValue { $0 = error }
                    return .failed
                }
            }
        }
    }

    /// Awaits `body`, closing the channel (which fails it) when the connect deadline passes. The
    /// timer runs on the channel's event loop, so the deadline is read on that loop's clock (a
    /// test's loop turns it).
    func withDeadline<Result>(
        _ deadline: NIODeadline?, on channel: any Channel, _ body: () async throws -> Result
    ) async throws -> Result {
        guard let deadline else { return try await body() }
        let timedOut = NIOLockedValueBox(false)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            timedOut.withLockedValue { $0 = true }
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            return try await body()
        } catch  where timedOut.withLockedValue({ $0 }) {
            throw TransportError.timedOut("while connecting (proxy tunnel, TLS handshake or HTTP/2 settings)")
        }
    }
}

/// A transport's TLS context and roots, made once, by the first connection that asks for them.
private final class LazyTLSSetup: Sendable {
    typealias Setup = Result<(context: NIOSSLContext, anchors: TrustAnchors), TransportError>
    private let make: @Sendable () -> Setup
    private let made = NIOLockedValueBox<Setup?>(nil)

    init(_ make: @escaping @Sendable () -> Setup) {
        self.make = make
    }

    /// Connections that ask while it is being made wait for it: they need it too.
    var value: Setup {
        made.withLockedValue { made in
            if let made { return made }
            let setup = make()
            made = setup
            return setup
        }
    }
}

/// A connection just opened, with what the pool needs to know of it.
struct EstablishedConnection: Sendable {
    let connection: any TransportConnection
    let version: ConnectionPoolStateMachine.HTTPVersion
    /// How many exchanges it may carry at once: 1, or the HTTP/2 server's stream limit.
    let maximumStreams: Int
}
