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

/// Where connections go: the pool keeps one set of connections per origin.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    var isTLS: Bool
    var host: String
    var port: Int
    /// The client certificate connections to this origin present; part of the pool's key.
    var clientIdentity: TransportClientIdentity?

    init(url: URL, clientIdentity: TransportClientIdentity? = nil) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw TransportError(.unsupportedURL, "only http and https URLs are supported, not \(url)")
        }
        guard var host = url.host, !host.isEmpty else { throw TransportError(.badURL, "\(url) has no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.isTLS = scheme == "https"
        self.host = host
        self.port = url.port ?? (isTLS ? 443 : 80)
        self.clientIdentity = isTLS ? clientIdentity : nil
    }

    /// The `Host` header value: the port only when it is not the scheme's default.
    var hostHeader: String {
        // Byte by byte: Foundation's `contains` on strings goes through NSString.
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == (isTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    var isIPAddress: Bool { (try? SocketAddress(ipAddress: host, port: port)) != nil }

    var description: String { "\(isTLS ? "https" : "http")://\(hostHeader)" }
}

/// Opens connections: resolves the host, connects to each address in turn, performs the TLS
/// handshake with the trust evaluator, and sets up the HTTP/1.1 pipeline. Records the timings.
struct ConnectionFactory: Sendable {
    let eventLoopGroup: any EventLoopGroup
    let tls: TransportTLSConfiguration
    /// The TLS context and roots, or why the TLS settings are unusable (reported by https requests).
    /// Made when the first https connection needs them: reading the system's roots takes tens of
    /// milliseconds, which a session that only speaks plain HTTP should not pay.
    private let tlsSetup: LazyTLSSetup
    /// Contexts for requests that present a client identity of their own.
    private let identityContexts = NIOLockedValueBox<[TransportClientIdentity: NIOSSLContext]>([:])
    let decompressionLimit: NIOHTTPDecompression.DecompressionLimit?
    let logger: Logger
    /// The largest socket read: a large body arrives in chunks of up to this size.
    static let largestRead = 256 * 1024

    init(
        eventLoopGroup: any EventLoopGroup, tls: TransportTLSConfiguration, decompressionLimit: NIOHTTPDecompression.DecompressionLimit?,
        logger: Logger
    ) {
        self.eventLoopGroup = eventLoopGroup
        self.tls = tls
        self.decompressionLimit = decompressionLimit
        self.logger = logger
        self.tlsSetup = LazyTLSSetup {
            do {
                let extraRoots = try tls.additionalTrustRoots.map { try Certificate(derEncoded: $0) }
                let context = try NIOSSLContext(configuration: Self.clientConfiguration(tls, identity: tls.clientIdentity))
                return .success((context, TrustAnchors(extraRoots, includingSystemRoots: tls.trustsSystemRoots)))
            } catch {
                return .failure(TransportError(.secureConnectionFailed, "the TLS settings are not usable", underlyingError: error))
            }
        }
    }

    private static func clientConfiguration(_ tls: TransportTLSConfiguration, identity: TransportClientIdentity?) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = tls.minimumVersion
        configuration.applicationProtocols = ["http/1.1"]
        // The trust evaluator does every check, the host name included.
        configuration.certificateVerification = .noHostnameVerification
        if let identity {
            configuration.certificateChain = identity.certificateChain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.privateKey)
        }
        return configuration
    }

    /// The context and roots for a connection to `origin`: the transport's, or one made (once) for
    /// the origin's own client identity.
    private func tlsSetup(for origin: Origin) throws -> (context: NIOSSLContext, anchors: TrustAnchors) {
        let setup = try tlsSetup.value.get()
        guard let identity = origin.clientIdentity, identity != tls.clientIdentity else { return setup }
        return try identityContexts.withLockedValue { contexts in
            if let context = contexts[identity] { return (context, setup.anchors) }
            do {
                let context = try NIOSSLContext(configuration: Self.clientConfiguration(tls, identity: identity))
                contexts[identity] = context
                return (context, setup.anchors)
            } catch {
                throw TransportError(.secureConnectionFailed, "the client certificate is not usable", underlyingError: error)
            }
        }
    }

    func makeConnection(
        id: Int, origin: Origin, connectTimeout: TimeAmount?, delegate: any HTTP1ConnectionDelegate
    ) async throws
        -> HTTP1Connection
    {
        if origin.isTLS {
            // The first https connection makes the TLS context and reads the system's roots: on the
            // thread pool (it blocks), and before the connect timeout and metrics start.
            let factory = self
            _ = try await NIOThreadPool.singleton.runIfActive { try factory.tlsSetup(for: origin) }
        }
        var metrics = ExchangeMetrics(fetchStart: .now())
        metrics.domainLookupStart = .now()
        let addresses = try await resolve(origin)
        metrics.domainLookupEnd = .now()
        metrics.connectStart = .now()
        let deadline = connectTimeout.map { NIODeadline.now() + $0 }
        var lastError: (any Error)?
        for address in addresses {
            do {
                return try await connect(id: id, to: address, origin: origin, deadline: deadline, metrics: metrics, delegate: delegate)
            } catch let error as TransportError where error.code != .cannotConnectToHost && error.code != .notConnectedToInternet {
                throw error
            } catch {
                lastError = error
            }
        }
        throw (lastError as? TransportError)
            ?? TransportError(.cannotConnectToHost, "could not connect to \(origin)", underlyingError: lastError)
    }

    private func resolve(_ origin: Origin) async throws -> [SocketAddress] {
        if let address = try? SocketAddress(ipAddress: origin.host, port: origin.port) { return [address] }
        let (host, port) = (origin.host, origin.port)
        do {
            return try await NIOThreadPool.singleton.runIfActive { try HostResolver.addresses(host: host, port: port) }
        } catch {
            throw TransportError(.cannotFindHost, "cannot resolve \(host)", underlyingError: error)
        }
    }

    private func connect(
        id: Int, to address: SocketAddress, origin: Origin, deadline: NIODeadline?, metrics: ExchangeMetrics,
        delegate: any HTTP1ConnectionDelegate
    ) async throws -> HTTP1Connection {
        var metrics = metrics
        let sslContext: NIOSSLContext?
        let anchors: TrustAnchors?
        if origin.isTLS {
            let setup = try tlsSetup(for: origin)
            (sslContext, anchors) = (setup.context, setup.anchors)
        } else {
            (sslContext, anchors) = (nil, nil)
        }
        let trustFailure = NIOLockedValueBox<(any Error)?>(nil)
        let presentsCertificate = (origin.clientIdentity ?? tls.clientIdentity) != nil
        let errorAfterHandshake = NIOLockedValueBox<(any Error)?>(nil)
        let handshake = eventLoopGroup.next().makePromise(of: Void.self)
        var bootstrap = ClientBootstrap(group: eventLoopGroup)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            // Room for two file-body chunks: the next one is read from disk while the last drains.
            .channelOption(.writeBufferWaterMark, value: .init(low: FileBody.chunkSize, high: 2 * FileBody.chunkSize + 1))
            // Reads grow past NIO's 64 KiB while they fill their buffer, so a large body crosses to its
            // consumer in fewer, larger chunks (each a hand-over to another thread); small responses keep
            // small buffers. One read per cycle instead of NIO's four keeps what a cycle can hold, what a
            // channel's buffer pool keeps and what TLS or a decompressor hands on at once as they were
            // (4 x 64 KiB).
            .channelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.largestRead)
            )
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let sslContext, let anchors else {
                        handshake.succeed()
                        return
                    }
                    let handler = try NIOSSLClientHandler(
                        context: sslContext, serverHostname: origin.isIPAddress ? nil : origin.host,
                        customVerificationCallbackWithMetadata: trustCallback(origin: origin, anchors: anchors, failure: trustFailure))
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(
                        TLSHandshakeObserver(promise: handshake, errorAfterHandshake: errorAfterHandshake))
                }
            }
        if let deadline { bootstrap = bootstrap.connectTimeout(max(.nanoseconds(1), deadline - .now())) }

        let channel: any Channel
        do {
            channel = try await bootstrap.connect(to: address).get()
        } catch {
            handshake.fail(error)
            if case ChannelError.connectTimeout = error { throw TransportError.timedOut("connecting to \(origin)") }
            // No route to the network at all: offline, as URLSession reports it (and OfflineRetrier waits on it).
            if let error = error as? IOError, error.errnoCode == ENETUNREACH {
                throw TransportError(.notConnectedToInternet, "no route to \(origin)'s network", underlyingError: error)
            }
            throw TransportError(.cannotConnectToHost, "could not connect to \(origin)", underlyingError: error)
        }
        metrics.connectEnd = .now()
        if origin.isTLS {
            metrics.secureConnectionStart = metrics.connectEnd
            do {
                try await withDeadline(deadline, on: channel) { try await handshake.futureResult.get() }
            } catch {
                channel.close(promise: nil)
                if let rejected = trustFailure.withLockedValue({ $0 }) {
                    throw (rejected as? TransportError)
                        ?? TransportError(
                            .serverCertificateUntrusted, "the server trust evaluator rejected \(origin)", underlyingError: rejected)
                }
                if let error = error as? TransportError { throw error }
                if let refused = ClientCertificateAlert.transportError(for: error, presentedCertificate: presentsCertificate) {
                    throw refused
                }
                throw TransportError(.secureConnectionFailed, "the TLS handshake with \(origin) failed", underlyingError: error)
            }
            metrics.secureConnectionEnd = .now()
        }
        metrics.networkProtocolName = "http/1.1"
        metrics.localAddress = channel.localAddress?.ipAddress
        metrics.localPort = channel.localAddress?.port
        metrics.remoteAddress = channel.remoteAddress?.ipAddress
        metrics.remotePort = channel.remoteAddress?.port
        let finalMetrics = metrics
        let decompressionLimit = self.decompressionLimit
        let setUp = channel.eventLoop.submit {
            var metrics = finalMetrics
            if origin.isTLS {
                // The observer has kept any alert that followed the handshake (a TLS 1.3 server
                // refusing the client's certificate); it is not needed past this point.
                guard channel.isActive else {
                    throw ClientCertificateAlert.transportError(
                        for: errorAfterHandshake.withLockedValue { $0 }, presentedCertificate: presentsCertificate)
                        ?? TransportError.connectionLost("the server closed the connection while it was set up")
                }
                let observer = try channel.pipeline.syncOperations.handler(type: TLSHandshakeObserver.self)
                channel.pipeline.syncOperations.removeHandler(observer, promise: nil)
                metrics.negotiatedTLSVersion = try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).tlsVersion
            }
            guard channel.isActive else { throw TransportError.connectionLost("the server closed the connection while it was set up") }
            let counter = ByteCountingHandler()
            let handler = HTTP1ConnectionHandler(connectionID: id, byteCounter: counter, connectionMetrics: metrics)
            handler.delegate = delegate
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(counter)
            try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .fireError)
            if let decompressionLimit { try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: decompressionLimit)) }
            try pipeline.addHandler(handler)
            return HTTP1Connection(id: id, origin: origin, channel: channel, handler: handler)
        }
        do {
            return try await setUp.get()
        } catch {
            channel.close(promise: nil)
            throw (error as? TransportError) ?? .connectionLost("the connection failed while it was set up", error)
        }
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

    /// Awaits `body`, closing the channel (which fails it) when the connect deadline passes.
    private func withDeadline(_ deadline: NIODeadline?, on channel: any Channel, _ body: () async throws -> Void) async throws {
        guard let deadline else { return try await body() }
        let timedOut = NIOLockedValueBox(false)
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            timedOut.withLockedValue { $0 = true }
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            try await body()
        } catch  where timedOut.withLockedValue({ $0 }) {
            throw TransportError.timedOut("during the TLS handshake")
        }
    }
}

/// Completes a promise when the TLS handshake is done, or fails it if the channel errs or closes
/// first; then records any error until the connection is set up, which removes it.
final class TLSHandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let promise: EventLoopPromise<Void>
    private var handshakeCompleted = false
    /// The first error after the handshake, such as an alert refusing the client's certificate.
    private let errorAfterHandshake: NIOLockedValueBox<(any Error)?>

    init(promise: EventLoopPromise<Void>, errorAfterHandshake: NIOLockedValueBox<(any Error)?>) {
        self.promise = promise
        self.errorAfterHandshake = errorAfterHandshake
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            handshakeCompleted = true
            promise.succeed()
        }
        context.fireUserInboundEventTriggered(event)
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
