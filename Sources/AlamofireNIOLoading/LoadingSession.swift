package import AlamofireNIOTransport
package import Foundation
package import Logging
package import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// The loading layer's URLSession: makes one ``LoadingTask`` per attempt of a request and gives
/// every task the session's settings and policies.
///
/// The loading layer turns one `URLRequest` into the final response of one task, applying the policy
/// URLSession applies on Apple platforms: the configuration's headers under the request's own, its
/// timeouts unless the request sets one, redirects (``RedirectPolicy``), cookies
/// (``CookiePolicy``), credentials (``AuthenticationPolicy``) and the cache (``CachePolicy``), each
/// asked at a fixed step of the task's life (``LoadingTaskStateMachine``). It reports every step to
/// a ``LoadingTaskDelegate`` at the moments URLSession calls its delegate, and knows nothing of
/// Alamofire; below it, the transport performs one exchange at a time and knows nothing of policy.
package final class LoadingSession: Sendable {
    let transport: HTTPTransport
    /// The session's headers in the transport's form; each request's own replace them.
    let baseHeaders: NIOHTTP1.HTTPHeaders
    let requestTimeout: TimeInterval
    let resourceTimeout: TimeInterval
    let redirectPolicy = RedirectPolicy()
    let cookiePolicy: CookiePolicy
    let authenticationPolicy: AuthenticationPolicy
    let cachePolicy: CachePolicy
    /// The configuration's own `URLProtocol` classes, asked first.
    let protocolClasses: [URLProtocol.Type]
    /// When the configuration `waitsForConnectivity`, what tells a task that found no route that the
    /// network changed; nil otherwise (a task then fails offline at once).
    package let connectivityMonitor: (any ConnectivityMonitor)?
    /// Whose `now` a task's resource timeout counts by, from the task's resume, and where a task
    /// waiting for connectivity arms its timer: one of the transport's event loops, or a test's
    /// hand-turned one.
    let clock: any EventLoop
    /// The last task identifier handed out; URLSession numbers its tasks from 1.
    private let lastTaskIdentifier = Atomic<Int>(0)

    /// The largest body a task keeps in memory: a response's (data and upload requests) or a `file:` or
    /// `data:` URL's. Past it, the task fails with `URLError(.dataLengthExceedsMaximum)`; downloads and
    /// streams are not held in memory and have no such limit.
    package let maximumBodySize: Int

    /// URLRequest's default `timeoutInterval`: a request with another value chose its own.
    static let defaultRequestTimeout: TimeInterval = 60

    /// A session with `configuration`'s settings, read once: later changes to the configuration
    /// object do not apply, as with URLSession, which copies its configuration.
    /// - Parameters:
    ///   - transport: performs the exchanges.
    ///   - configuration: `httpAdditionalHeaders` (sent unless a request sets its own),
    ///     `timeoutIntervalForRequest` (idle time per exchange), `timeoutIntervalForResource` (the
    ///     task's whole time, from its resume, over all its exchanges), `httpCookieStorage`,
    ///     `httpShouldSetCookies`, `httpCookieAcceptPolicy`,
    ///     `urlCredentialStorage`, `urlCache`, `requestCachePolicy`, `protocolClasses`, and
    ///     `waitsForConnectivity` (``ConfigurationExtras``).
    ///   - now: the clock cached responses age by (a test's virtual clock).
    ///   - makeConnectivityMonitor: called once when the configuration `waitsForConnectivity`; nil
    ///     from it (no way to follow the network) makes tasks fail offline at once.
    ///   - clock: the event loop whose clock counts the resource timeout and bounds a wait for
    ///     connectivity (nil: one of the transport's).
    package init(
        transport: HTTPTransport, configuration: URLSessionConfiguration, maximumBodySize: Int = Int(UInt32.max),
        now: @escaping @Sendable () -> Date = { Date() },
        makeConnectivityMonitor: () -> (any ConnectivityMonitor)? = { nil }, clock: (any EventLoop)? = nil
    ) {
        self.transport = transport
        self.maximumBodySize = maximumBodySize
        var headers = NIOHTTP1.HTTPHeaders()
        for (name, value) in configuration.httpAdditionalHeaders ?? [:] {
            headers.replaceOrAdd(name: "\(name.base)", value: "\(value)")
        }
        self.baseHeaders = headers
        self.requestTimeout = configuration.timeoutIntervalForRequest
        self.resourceTimeout = configuration.timeoutIntervalForResource
        self.cookiePolicy = CookiePolicy(
            storage: configuration.httpCookieStorage, sendsCookies: configuration.httpShouldSetCookies,
            acceptPolicy: configuration.httpCookieAcceptPolicy)
        self.authenticationPolicy = AuthenticationPolicy(credentialStorage: configuration.urlCredentialStorage)
        self.protocolClasses = URLProtocolLoad.userClasses(configuration.protocolClasses)
        self.cachePolicy = CachePolicy(cache: configuration.urlCache, requestCachePolicy: configuration.requestCachePolicy, now: now)
        self.connectivityMonitor = ConfigurationExtras.waitsForConnectivity(configuration) ? makeConnectivityMonitor() : nil
        self.clock = clock ?? transport.eventLoopGroup.next()
    }

    /// A task for `request`, not started: call ``LoadingTask/resume()``.
    /// - Parameters:
    ///   - request: what to load.
    ///   - body: where the body comes from when it is not `request.httpBody` (uploads).
    ///   - destination: whether the final body is kept in memory or written to a file.
    ///   - resumption: for a file destination, the partial file to continue (with `Range` and `If-Range`).
    ///   - delegate: hears the task's events.
    ///   - owner: what the task works for (the API layer's request), for the delegate to find it.
    ///   - clientIdentity: the client certificate to present for this task, in place of the session's.
    ///   - logger: where the transport logs this task's exchanges, in place of the session's logger.
    package func makeTask(
        with request: URLRequest, body: RequestBody? = nil, destination: LoadingTask.Destination = .memory,
        resuming resumption: DownloadResumption? = nil, delegate: any LoadingTaskDelegate, owner: (any AnyObject & Sendable)? = nil,
        clientIdentity: ClientCertificateIdentity? = nil, logger: Logger? = nil
    ) -> LoadingTask {
        LoadingTask(
            session: self, identifier: lastTaskIdentifier.add(1, ordering: .relaxed).newValue, request: request, body: body,
            destination: destination, resuming: resumption, delegate: delegate, owner: owner,
            clientIdentity: clientIdentity?.transportIdentity, logger: logger)
    }

    /// The configuration's stored credential for `protectionSpace`, matched field by field.
    package func defaultCredential(for protectionSpace: URLProtectionSpace) -> URLCredential? {
        authenticationPolicy.defaultCredential(for: protectionSpace)
    }

    /// A header as it will be sent with `request`: the request's own, else the session's, else (for
    /// `Cookie`) the stored cookies the request will carry.
    func headerValue(_ name: String, of request: URLRequest) -> String? {
        if let value = request.value(forHTTPHeaderField: name) ?? baseHeaders.first(name: name) { return value }
        guard name.lowercased() == "cookie" else { return nil }
        var sent = request
        cookiePolicy.prepare(&sent)
        return sent.value(forHTTPHeaderField: "Cookie")
    }

    /// When the resource timeout of a task resumed at `resumedAt` passes, on ``clock``: nil when
    /// there is no limit.
    func resourceDeadline(since resumedAt: NIODeadline) -> NIODeadline? {
        Self.timeAmount(resourceTimeout).map { resumedAt + $0 }
    }

    /// What is left of a task's resource timeout (``resourceDeadline(since:)``): nil when there is
    /// no limit. Zero or less: the time is up.
    func resourceTimeRemaining(since resumedAt: NIODeadline) -> TimeAmount? {
        resourceDeadline(since: resumedAt).map { $0 - clock.now }
    }

    /// What the transport should send for `request` on one hop, within what is left of the task's
    /// resource timeout (`resourceTimeRemaining`, nil: no limit). Once the task has followed a
    /// redirect to another origin, `withholdingOriginBoundFields` keeps the session's
    /// ``RedirectPolicy/originBoundFields`` back (the request's own are sent as they are).
    func transportRequest(
        for request: URLRequest, url: URL, body: RequestBody?, resourceTimeRemaining: TimeAmount?,
        withholdingOriginBoundFields: Bool = false
    ) -> TransportRequest {
        var headers = baseHeaders
        if withholdingOriginBoundFields {
            for name in RedirectPolicy.originBoundFields { headers.remove(name: name) }
        }
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.replaceOrAdd(name: name, value: value) }
        let idle = request.timeoutInterval != Self.defaultRequestTimeout ? request.timeoutInterval : requestTimeout
        return TransportRequest(
            method: NIOHTTP1.HTTPMethod(rawValue: request.httpMethod ?? "GET"), url: url, headers: headers,
            body: body?.transportBody ?? request.httpBody.map { .bytes(ByteBuffer(bytes: $0)) } ?? .none,
            timeouts: TransportTimeouts(
                connect: Self.timeAmount(idle), idle: Self.timeAmount(idle), total: resourceTimeRemaining))
    }

    /// A configuration's limit as NIO's time: none when it is 0, negative, infinite or not a number.
    static func timeAmount(_ interval: TimeInterval) -> TimeAmount? {
        guard interval > 0, interval.isFinite else { return nil }
        return .nanoseconds(Int64(min(interval, 1e9) * 1e9))
    }

    /// A failure in URLSession's terms.
    static func urlError(_ error: any Error, url: URL) -> URLError {
        switch error {
        case let error as TransportError: error.urlError(for: url)
        case let error as URLError: error
        case is CancellationError: TransportError.cancelled.urlError(for: url)
        default: URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error, NSURLErrorFailingURLErrorKey: url])
        }
    }
}
