import Foundation
public import Logging
import NIOConcurrencyHelpers
public import NIOCore
import NIOHTTP1
import NIOHTTPCompression
public import NIOPosix

/// Performs HTTP exchanges over pooled connections — HTTP/2 where a TLS server offers it by ALPN,
/// else HTTP/1.1 — with TLS, a server trust hook, decompression, timeouts and per-exchange
/// metrics. It knows nothing of Alamofire.
///
/// ```swift
/// let transport = HTTPTransport()
/// let response = try await transport.execute(TransportRequest(url: url))
/// let body = try await response.body.collect(upTo: 1 << 20)
/// let metrics = try await response.finished().metrics
/// ```
///
/// An exchange goes through three phases: waiting for a connection from the origin's pool (opening
/// one if the per-host limit allows; an HTTP/2 connection serves many exchanges at once, one
/// stream each), sending the request while the response head is awaited, and streaming the response
/// body to the consumer. Cancelling the calling task or passing the total deadline ends whichever
/// phase is running; an HTTP/1.1 connection in the middle of an exchange is then closed, never
/// reused, and an HTTP/2 stream is reset. A request that fails on a reused connection before any
/// response byte is retried once on a new connection when that is safe, and one whose HTTP/2 stream
/// the server refused is retried once on a new stream.
public final class HTTPTransport: Sendable {
    /// Settings shared by every exchange.
    public struct Configuration: Sendable {
        /// Connections per origin, counting those opening and closing (URLSession's default is 6).
        public var maximumConnectionsPerHost = 6
        /// How long an unused connection stays in the pool.
        public var idleConnectionTimeout: TimeAmount = .seconds(60)
        /// TLS settings and the server trust evaluator.
        public var tls = TransportTLSConfiguration()
        /// Whether gzip and deflate responses (and br and zstd ones, with the `Brotli` and `Zstd`
        /// traits) are decoded, and how far: the decoded body may be at most this many times the size
        /// of the compressed one. Nil leaves bodies as they arrive.
        public var maximumDecompressionRatio: Int? = 100
        /// Whether TLS connections offer HTTP/2 by ALPN (`h2`, then `http/1.1`), as URLSession does.
        /// False speaks HTTP/1.1 only. Plain `http` URLs always use HTTP/1.1 (no h2c).
        public var allowsHTTP2 = true
        /// How often an idle HTTP/2 connection pings its server; one unanswered until the next
        /// ping closes it. Zero or less sends no pings.
        public var http2PingInterval: TimeAmount = .seconds(30)
        /// The proxies requests go through; none by default. A Session fills it from its
        /// configuration's `connectionProxyDictionary`, else from the environment.
        public var proxies = ProxySettings()
        /// Told each time the number of active or idle connections to an origin changes, one report
        /// at a time, on the transport's threads; keep it short. Nil (the default) counts nothing.
        public var onConnectionCountsChanged: (@Sendable (TransportConnectionCounts) -> Void)?
        /// How long opening a connection may take when the request sets no connect timeout. For the tests.
        var connectionSetupTimeout: TimeAmount = .seconds(60)
        /// Resolves host names; getaddrinfo by default. For the tests.
        var lookup: @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress] = HostResolver.addresses
        /// Opens TCP connections; nil (the default) is NIO's bootstrap over ``lookup``. For the
        /// tests' simulated runs.
        var connector: SocketConnector?
        /// Runs as an attempt is about to ask its pool for a connection, once its controller has
        /// noted the wait: where a cancel overtakes the registration. For the tests; nil in use.
        var beforeLease: (@Sendable (ExchangeController) -> Void)?

        /// The defaults.
        public init() {}
    }

    /// The settings this transport was made with.
    public let configuration: Configuration
    package let eventLoopGroup: any EventLoopGroup
    /// The transport's clock, one of its loops' `now`, as the pools' is: the deadlines it gives them
    /// are on their clock (the system's, for NIO's real loops).
    let clock: any EventLoop
    let factory: ConnectionFactory
    /// Each origin's pool, and whether ``shutdown()`` has closed the transport to new work.
    private let pools = NIOLockedValueBox(PoolTable())
    fileprivate let nextRequestID = NIOLockedValueBox(0)
    fileprivate let logger: Logger
    /// Counts exchanges alive and exchanges dropped with a promise pending, for the leak tests.
    let tracker = ExchangeTracker()
    /// Reports connection counts, when the configuration asks for them.
    private let connectionCounts: ConnectionCountReporter?

    /// - Parameters:
    ///   - configuration: the transport's settings.
    ///   - eventLoopGroup: where connections live; NIO's shared group by default.
    ///   - logger: where the transport logs (debug and trace only); silent by default.
    ///
    /// TLS settings that cannot be used (an unreadable client key, say) do not stop the transport:
    /// each `https` request then fails with `.secureConnectionFailed`.
    public init(
        configuration: Configuration = .init(), eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "AlamofireNIOTransport", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.clock = eventLoopGroup.any()
        self.logger = logger
        self.connectionCounts = configuration.onConnectionCountsChanged.map(ConnectionCountReporter.init)
        self.factory = ConnectionFactory(
            eventLoopGroup: eventLoopGroup, tls: configuration.tls,
            decompressionRatio: configuration.maximumDecompressionRatio, offersHTTP2: configuration.allowsHTTP2,
            http2PingInterval: configuration.http2PingInterval, proxyChallengeAnswerer: configuration.proxies.challengeAnswerer,
            lookup: configuration.lookup, connector: configuration.connector, setupTimeout: configuration.connectionSetupTimeout,
            logger: logger)
    }

    /// Sends the request and returns when the response head has arrived.
    /// - Parameter request: what to send.
    /// - Throws: ``TransportError``.
    public func execute(_ request: TransportRequest) async throws -> TransportResponse {
        switch try await run(request, collectingUpTo: nil) {
        case .streaming(let response): return response
        case .collected: throw TransportError(.unknown, "a streaming exchange produced a collected response")
        }
    }

    /// Sends the request and returns the whole response, collected on the event loop: for callers
    /// that buffer the body anyway, this saves a hand-over per chunk.
    /// - Parameters:
    ///   - request: what to send.
    ///   - maximumBytes: the most the body may hold; more fails with `.dataLengthExceedsMaximum`.
    public func execute(_ request: TransportRequest, collectingUpTo maximumBytes: Int) async throws -> CollectedTransportResponse {
        switch try await run(request, collectingUpTo: maximumBytes) {
        case .collected(let response): return response
        case .streaming: throw TransportError(.unknown, "a collecting exchange produced a streaming response")
        }
    }

    /// Sends the request and calls `completion` with the whole response, collected on the event loop,
    /// without a Swift task: for callers that are not async themselves and would otherwise need one.
    /// `completion` runs once, on an event loop or (for a failure before any I/O) on the calling thread.
    /// - Parameters:
    ///   - request: what to send.
    ///   - maximumBytes: the most the body may hold; more fails with `.dataLengthExceedsMaximum`.
    ///   - completion: gets the response or the ``TransportError``.
    /// - Returns: a handle that cancels the exchange in whichever phase it is.
    @discardableResult
    public func execute(
        _ request: TransportRequest, collectingUpTo maximumBytes: Int,
        completion: @escaping @Sendable (Result<CollectedTransportResponse, TransportError>) -> Void
    ) -> TransportExchangeHandle {
        let controller = ExchangeController()
        start(request, collectingUpTo: maximumBytes, controller: controller) { outcome in
            switch outcome {
            case .success(.collected(let response)): completion(.success(response))
            case .success(.streaming): completion(.failure(TransportError(.unknown, "a collecting exchange produced a streaming response")))
            case .failure(let error): completion(.failure(error))
            }
        }
        return TransportExchangeHandle(controller: controller)
    }

    /// The result of one of the two ways to execute.
    private enum Outcome {
        case streaming(TransportResponse)
        case collected(CollectedTransportResponse)
    }

    private func run(_ request: TransportRequest, collectingUpTo maximumBytes: Int?) async throws -> Outcome {
        let controller = ExchangeController()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(request, collectingUpTo: maximumBytes, controller: controller) { continuation.resume(with: $0) }
            }
        } onCancel: {
            controller.cancel(with: .cancelled)
        }
    }

    /// Runs the exchange, again when a failure says it may (``ExchangeRetryBudget`` says how often),
    /// and once more with the answer when a forwarding proxy's 407 can be answered.
    private func start(
        _ request: TransportRequest, collectingUpTo maximumBytes: Int?, controller: ExchangeController,
        completion: @escaping @Sendable (Result<Outcome, TransportError>) -> Void
    ) {
        let origin: Origin
        let bodyLength: Int64?
        let head: HTTPRequestHead
        do {
            origin = try Origin(
                url: request.url, clientIdentity: request.clientIdentity, proxy: configuration.proxies.proxy(for: request.url))
            bodyLength = try Self.bodyLength(request.body)
            head = try Self.head(for: request, origin: origin, bodyLength: bodyLength)
        } catch {
            return completion(.failure(Self.transportError(error)))
        }
        let fetchStart = clock.now
        // Enforced by the pool while the request waits and by the connection while it runs, on their
        // own event loops: no timer is armed or cancelled from this thread.
        let deadline = request.timeouts.total.map { fetchStart + $0 }
        let exchange = Attempt(
            transport: self, request: request, head: head, bodyLength: bodyLength, origin: origin, fetchStart: fetchStart,
            deadline: deadline, controller: controller, collectLimit: maximumBytes)
        runRetrying(exchange) { result in
            guard let answered = self.answeringProxyChallenge(in: result, of: exchange) else { return completion(result) }
            answered.discarded.whenComplete { _ in self.runRetrying(answered.attempt, completion: completion) }
        }
    }

    /// Runs the attempt, and again after each failure that is safe to retry while `budget` allows.
    private func runRetrying(
        _ exchange: Attempt, fresh: Bool = false, budget: ExchangeRetryBudget = .init(),
        completion: @escaping @Sendable (Result<Outcome, TransportError>) -> Void
    ) {
        exchange.run(fresh: fresh) { result in
            guard case .failure(let retryable as RetryableExchangeError) = result, let next = budget.retrying(after: retryable.reason)
            else {
                return completion(result.mapError(Self.transportError))
            }
            let logger = exchange.request.logger ?? self.logger
            if logger.logLevel <= .debug {
                var metadata: Logger.Metadata = ["error": "\(retryable.error)", "fresh": "\(retryable.onFreshConnection)"]
                // A request's logger has its URL already, as its owner wants it written (redacted).
                if exchange.request.logger == nil { metadata["url"] = "\(exchange.request.url)" }
                logger.debug("retrying", metadata: metadata)
            }
            self.runRetrying(exchange, fresh: retryable.onFreshConnection, budget: next, completion: completion)
        }
    }

    /// A forwarded request's 407 whose `Proxy-Authenticate` the proxy settings answer (Digest;
    /// Basic went up front): the attempt that sends the answer, once the 407's body is read and
    /// dropped. Nil when the 407 is the response: no credentials, no answer, or a body that cannot be
    /// sent again.
    private func answeringProxyChallenge(
        in result: Result<Outcome, TransportError>, of exchange: Attempt
    ) -> (attempt: Attempt, discarded: EventLoopFuture<Void>)? {
        guard exchange.origin.isForwardedByProxy, let credentials = exchange.origin.proxy?.credentials,
            let answerer = configuration.proxies.challengeAnswerer, case .success(let outcome) = result
        else { return nil }
        let head: HTTPResponseHead
        switch outcome {
        case .collected(let response): head = response.head
        case .streaming(let response): head = response.head
        }
        let body: [UInt8]?
        switch exchange.request.body {
        case .none: body = []
        case .bytes(let buffer): body = Array(buffer.readableBytesView)
        case .file: body = nil
        case .stream, .replayableStream: return nil
        }
        guard head.status == .proxyAuthenticationRequired,
            let answer = answerer(head.headers["Proxy-Authenticate"], exchange.head.method.rawValue, exchange.head.uri, body, credentials)
        else { return nil }
        var answeredHead = exchange.head
        answeredHead.headers.replaceOrAdd(name: "Proxy-Authorization", value: answer)
        // The answer carries the proxy's own values (realm, nonce): one that could split the head is
        // not sent, and the 407 is the response.
        guard (try? RequestHeadValidation.check(answeredHead)) != nil else { return nil }
        let discarded: EventLoopFuture<Void>
        switch outcome {
        case .collected:
            discarded = eventLoopGroup.any().makeSucceededVoidFuture()
        case .streaming(let response):
            let drained = eventLoopGroup.any().makePromise(of: Void.self)
            drained.completeWithTask { _ = try? await response.body.collect(upTo: 1 << 20) }
            discarded = drained.futureResult
        }
        return (exchange.with(head: answeredHead), discarded)
    }

    static func transportError(_ error: any Error) -> TransportError {
        switch error {
        case let error as TransportError: error
        case let retryable as RetryableExchangeError: retryable.error
        default: TransportError(.unknown, "\(error)", underlyingError: error)
        }
    }

    /// One try of an exchange: lease a connection, run the exchange on it, report the outcome.
    private struct Attempt: Sendable {
        let transport: HTTPTransport
        let request: TransportRequest
        let head: HTTPRequestHead
        let bodyLength: Int64?
        let origin: Origin
        let fetchStart: NIODeadline
        let deadline: NIODeadline?
        let controller: ExchangeController
        let collectLimit: Int?

        /// The same attempt with another head.
        func with(head: HTTPRequestHead) -> Attempt {
            Attempt(
                transport: transport, request: request, head: head, bodyLength: bodyLength, origin: origin, fetchStart: fetchStart,
                deadline: deadline, controller: controller, collectLimit: collectLimit)
        }

        func run(fresh: Bool, completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
            let pool: ConnectionPool
            do {
                pool = try transport.pool(for: origin)
            } catch {
                return completion(.failure(error))
            }
            let requestID = transport.nextRequestID.withLockedValue { id in
                id += 1
                return id
            }
            let finish: @Sendable (Result<Outcome, any Error>) -> Void = { result in
                controller.attemptFinished(request: requestID)
                completion(result)
            }
            do {
                try controller.waitForConnection(pool: pool, request: requestID)
            } catch {
                return finish(.failure(error))
            }
            // The wait for a connection (and the connection opened for it) is bounded by the
            // request's connect timeout, from now, within its total time limit.
            let waitDeadline = request.timeouts.connectDeadline(from: transport.clock.now, within: deadline)
            transport.configuration.beforeLease?(controller)
            pool.lease(request: requestID, needsFreshConnection: fresh, deadline: waitDeadline) { leased in
                switch leased {
                case .failure(is RetiredPoolError): run(fresh: fresh, completion: completion)
                case .failure(let error): finish(.failure(error))
                case .success(let connection): start(on: connection, completion: finish)
                }
            }
            controller.leaseRequested(pool: pool, request: requestID)
        }

        private func start(on connection: any TransportConnection, completion: @escaping @Sendable (Result<Outcome, any Error>) -> Void) {
            let eventLoop = connection.channel.eventLoop
            // The caller hears of the outcome through the delivery, whatever ends the exchange.
            let delivery: ActiveExchange.Delivery
            if let collectLimit {
                delivery = .collecting(on: eventLoop, limit: collectLimit) { completion($0.map(Outcome.collected)) }
            } else {
                let (streaming, response) = ActiveExchange.Delivery.streaming(on: eventLoop)
                delivery = streaming
                response.whenComplete { completion($0.map(Outcome.streaming)) }
            }
            let exchange = ActiveExchange(
                request: request, head: head, requestBodyLength: bodyLength, delivery: delivery,
                metrics: ExchangeMetrics(fetchStart: fetchStart), deadline: deadline, controller: controller, tracker: transport.tracker)
            do {
                try controller.run(exchange, on: connection)
            } catch {
                // Nothing was started: settling the delivery reports the error.
                exchange.fail(error)
            }
        }
    }

    /// Fails waiting requests, closes idle connections and lets running exchanges finish. Every
    /// later request and WebSocket fails at once with `.cancelled` ("the transport was shut down"),
    /// opening nothing.
    public func shutdown() {
        let pools = self.pools.withLockedValue { table in
            table.isShutDown = true
            defer { table.byOrigin.removeAll() }
            return Array(table.byOrigin.values)
        }
        pools.forEach { $0.shutDown() }
    }

    /// Throws ``TransportError/shutDown`` once ``shutdown()`` has been called.
    func checkNotShutDown() throws {
        if pools.withLockedValue({ $0.isShutDown }) { throw TransportError.shutDown }
    }

    /// The origin's pool, made on first use.
    /// - Throws: ``TransportError/shutDown`` once ``shutdown()`` has been called.
    fileprivate func pool(for origin: Origin) throws -> ConnectionPool {
        try pools.withLockedValue { table in
            if table.isShutDown { throw TransportError.shutDown }
            if let pool = table.byOrigin[origin] { return pool }
            let pool = ConnectionPool(
                origin: origin, factory: factory, maximumConnections: configuration.maximumConnectionsPerHost,
                idleTimeout: configuration.idleConnectionTimeout, logger: logger,
                onEmpty: { [weak self] pool in self?.dropPool(pool) }, onChange: connectionCounts.map { reporter in reporter.poolChanged })
            table.byOrigin[origin] = pool
            return pool
        }
    }

    /// The pools by origin, and whether the transport still takes new work.
    private struct PoolTable {
        var byOrigin: [Origin: ConnectionPool] = [:]
        var isShutDown = false
    }

    /// Drops an origin's pool once its last connection has closed (after the idle timeout, when
    /// the origin is no longer used), so that pools do not pile up for every host ever reached.
    private func dropPool(_ pool: ConnectionPool) {
        pools.withLockedValue { table in
            guard table.byOrigin[pool.origin] === pool, pool.retireIfEmpty() else { return }
            table.byOrigin.removeValue(forKey: pool.origin)
        }
    }

    /// Requests waiting in a pool for a connection, for the tests.
    var waitingRequestCount: Int { pools.withLockedValue { Array($0.byOrigin.values) }.reduce(0) { $0 + $1.waitingRequestCount } }

    /// How many origins have a pool, for the tests.
    var poolCount: Int { pools.withLockedValue { $0.byOrigin.count } }

    private static func bodyLength(_ body: TransportRequest.Body) throws -> Int64? {
        switch body {
        case .none: 0
        case .bytes(let buffer): Int64(buffer.readableBytes)
        case .file(let url): try FileBody.length(of: url)
        case .stream(let length, _), .replayableStream(let length, _): length
        }
    }

    /// The head as sent: the caller's fields, plus `Host` and the body's framing.
    static func head(for request: TransportRequest, origin: Origin, bodyLength: Int64?) throws -> HTTPRequestHead {
        var target = request.url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = request.url.query(percentEncoded: true) { target += "?" + query }
        var headers = request.headers
        if !headers.contains(name: "Host") { headers.add(name: "Host", value: origin.hostHeader) }
        if origin.isForwardedByProxy, let proxy = origin.proxy {
            // An HTTP proxy takes the whole URL, and its credentials with every request.
            target = "http://\(origin.hostHeader)\(target)"
            if let credentials = proxy.credentials, !headers.contains(name: "Proxy-Authorization") {
                headers.add(name: "Proxy-Authorization", value: credentials.basicAuthorization)
            }
        } else {
            // Meant for a proxy: never sent to an origin (through a tunnel, SOCKS or directly), as
            // URLSession treats these fields as its own.
            headers.remove(name: "Proxy-Authorization")
            headers.remove(name: "Proxy-Connection")
        }
        headers.remove(name: "Content-Length")
        headers.remove(name: "Transfer-Encoding")
        switch bodyLength {
        case 0 where request.method == .POST || request.method == .PUT || request.method == .PATCH:
            headers.add(name: "Content-Length", value: "0")
        case 0:
            break
        case let length?:
            headers.add(name: "Content-Length", value: String(length))
        case nil:
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: target, headers: headers)
        try RequestHeadValidation.check(head)
        return head
    }
}

/// Cancels an exchange started with ``HTTPTransport/execute(_:collectingUpTo:completion:)``.
public struct TransportExchangeHandle: Sendable {
    let controller: ExchangeController

    /// Ends the exchange in whichever phase it is; its completion gets `.cancelled`. Harmless once it
    /// has finished.
    public func cancel() {
        controller.cancel(with: .cancelled)
    }
}

/// Where one exchange is, so that a cancellation or the total deadline can end it in any phase.
final class ExchangeController: Sendable {
    private enum Phase {
        case starting
        case waiting(ConnectionPool, request: Int)
        case running(any TransportConnection, ActiveExchange)
        case cancelled(TransportError)
    }

    private let phase = NIOLockedValueBox(Phase.starting)

    /// The exchange is about to ask `pool` for a connection for `request`: a cancel from now on
    /// ends that wait. Throws when the exchange was cancelled already.
    func waitForConnection(pool: ConnectionPool, request: Int) throws {
        try phase.withLockedValue { phase in
            if case .cancelled(let error) = phase { throw error }
            phase = .waiting(pool, request: request)
        }
    }

    /// The lease for `request` is registered with `pool`. A cancel that came since
    /// ``waitForConnection(pool:request:)`` found nothing there to end (the pool keeps nothing of a
    /// request not waiting), so it is applied now; the cancellation stays this controller's fact.
    func leaseRequested(pool: ConnectionPool, request: Int) {
        guard let error = cancellation else { return }
        pool.cancel(request: request, error: error)
    }

    /// The attempt that leased for `request` is over (its lease failed, or its exchange ended): a
    /// later cancel no longer goes to the pool.
    func attemptFinished(request: Int) {
        phase.withLockedValue { phase in
            if case .waiting(_, let waiting) = phase, waiting == request { phase = .starting }
        }
    }

    /// Starts the exchange on the connection. The start is queued under the lock, so a cancel that
    /// sees the exchange running is queued on the event loop after it and always finds it there.
    func run(_ exchange: ActiveExchange, on connection: any TransportConnection) throws {
        let cancelled = phase.withLockedValue { phase -> TransportError? in
            if case .cancelled(let error) = phase { return error }
            phase = .running(connection, exchange)
            connection.start(exchange)
            return nil
        }
        if let cancelled {
            // Cancelled between getting the connection and starting: the pool gets its place back
            // (an HTTP/1.1 connection is closed unused, an HTTP/2 stream was never opened).
            connection.release()
            throw cancelled
        }
    }

    /// The error the exchange was cancelled with (or ended by its total time limit), if it was.
    var cancellation: TransportError? {
        phase.withLockedValue { phase in
            guard case .cancelled(let error) = phase else { return nil }
            return error
        }
    }

    /// Ends the exchange in whichever phase it is. The controller stays cancelled, so a retry on a
    /// fresh connection that starts after this (a stale connection found meanwhile) fails at once.
    func cancel(with error: TransportError) {
        let previous = phase.withLockedValue { phase in
            defer { phase = .cancelled(error) }
            return phase
        }
        switch previous {
        case .starting, .cancelled:
            break
        case .waiting(let pool, let request):
            pool.cancel(request: request, error: error)
        case .running(let connection, let exchange):
            connection.cancel(exchange, error: error)
        }
    }
}
