import AlamofireNIOLoading
import AlamofireNIOTransport
public import Foundation
public import Logging
public import NIOCore
public import NIOPosix
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Reference to `Session.default` for quick bootstrapping and examples.
public let AF = Session.default

/// `Session` creates and manages Alamofire's `Request` types during their lifetimes. It also provides common
/// functionality for all `Request`s, including queuing, interception, trust management, redirect handling, and response
/// cache handling.
///
/// Requests run on AlamofireNIO's own loading layer and transport instead of a `URLSession`; the
/// configuration's headers, timeouts and per-host connection limit apply.
open class Session: @unchecked Sendable {
    /// Type describing the timing of `Request` setup after creation.
    public enum RequestSetup: Sendable {
        /// Calls the needed lifetime methods on created `Request`s only after they have `resume` called. `Request`s are
        /// inert upon creation.
        case lazy
        /// Calls the needed lifetime methods on created `Request`s immediately upon creation. Default in Alamofire
        /// versions before 5.11.
        ///
        /// - Warning: May lead to races between `Request.resume()` and various lifetime events. Not recommended except
        ///            for backward compatibility.
        case eager
    }

    /// Shared singleton instance used by all `AF.request` APIs. Cannot be modified.
    public static let `default` = Session()

    /// The configuration the session was made with. Changing it afterwards has no effect.
    public let configuration: URLSessionConfiguration
    /// Instance's `SessionDelegate`, which hands the loading tasks' events to the `Request`s.
    public let delegate: SessionDelegate
    /// Root `DispatchQueue` for all internal callbacks and state update. **MUST** be a serial queue.
    public let rootQueue: DispatchQueue
    /// Value determining whether this instance automatically calls `resume()` on all created `Request`s.
    public let startRequestsImmediately: Bool
    /// Value determining the timing of `Request` setup after creation. `.lazy` by default.
    public let requestSetup: RequestSetup
    /// `DispatchQueue` on which `URLRequest`s are created when one was passed to `init`; otherwise they are created on
    /// the root queue itself (this queue targets it), which saves a hop per request.
    public let requestQueue: DispatchQueue
    /// Whether set-up runs on the root queue directly (no `requestQueue` was passed).
    let setsUpOnRootQueue: Bool
    /// `DispatchQueue` passed to all `Request`s on which they perform their response serialization.
    public let serializationQueue: DispatchQueue
    /// `RequestInterceptor` used for all `Request` created by the instance. `RequestInterceptor`s can also be added on a
    /// per-`Request` basis, in which case interceptors from the `Session` are executed first. `nil` by default.
    public let interceptor: (any RequestInterceptor)?
    /// `ServerTrustManager` instance used to evaluate all trust challenges and provide certificate and key pinning.
    public let serverTrustManager: ServerTrustManager?
    /// `RedirectHandler` instance used to provide customization for request redirection.
    public let redirectHandler: (any RedirectHandler)?
    /// `CachedResponseHandler` instance used to provide customization of cached response handling.
    public let cachedResponseHandler: (any CachedResponseHandler)?
    /// `CompositeEventMonitor` used to compose any passed `EventMonitor`s. `EventMonitor`s can also be added on a
    /// per-`Request` basis, in which case monitors from the `Session` are executed first.
    public let eventMonitor: CompositeEventMonitor
    /// `EventMonitor`s included in all instances unless overwritten. `[AlamofireNotifications()]` by default.
    @available(*, deprecated, message: "Use [AlamofireNotifications()] directly.")
    public let defaultEventMonitors: [any EventMonitor] = [AlamofireNotifications()]
    /// Where the session logs (its transport's connections and retries, at debug and trace levels).
    public let logger: Logger
    let transport: HTTPTransport
    let loading: LoadingSession
    let activeRequests = Mutex<Set<Request>>([])
    private let urlSession: Mutex<URLSession?>

    /// Creates a `Session` from a `URLSessionConfiguration`.
    ///
    /// - Parameters:
    ///   - configuration:            `URLSessionConfiguration` whose headers, timeouts and connection limit apply.
    ///                               Changes to this value after being passed to this initializer will have no effect.
    ///                               `URLSessionConfiguration.af.default` by default.
    ///   - delegate:                 `SessionDelegate` that hands the loading tasks' events to the `Request`s.
    ///                               `SessionDelegate()` by default.
    ///   - rootQueue:                Root `DispatchQueue` for all internal callbacks and state updates. **MUST** be a
    ///                               serial queue. `DispatchQueue(label: "org.alamofire.session.rootQueue")` by default.
    ///   - startRequestsImmediately: Determines whether this instance will automatically start all `Request`s once a
    ///                               response handler is added. `true` by default.
    ///   - requestSetup:             Determines when the `Session` will perform the internal setup for created
    ///                               `Request`s. `.lazy` by default.
    ///   - requestQueue:             `DispatchQueue` on which to perform `URLRequest` creation. `nil` by default: on the
    ///                               thread that resumes the request.
    ///   - serializationQueue:       `DispatchQueue` on which to perform all response serialization. By default this
    ///                               queue will use the `rootQueue` as its `target`. `nil` by default.
    ///   - interceptor:              `RequestInterceptor` to be used for all `Request`s created by this instance. `nil`
    ///                               by default.
    ///   - serverTrustManager:       `ServerTrustManager` to be used for all trust evaluations by this instance. `nil`
    ///                               by default.
    ///   - redirectHandler:          `RedirectHandler` to be used by all `Request`s created by this instance. `nil` by
    ///                               default.
    ///   - cachedResponseHandler:    `CachedResponseHandler` to be used by all `Request`s created by this instance.
    ///                               `nil` by default.
    ///   - eventMonitors:            `EventMonitor`s used by the instance. `[AlamofireNotifications()]` by default;
    ///                               `[]` means none.
    ///   - additionalTrustRoots:     Root certificates trusted besides the system's (`SSL_CERT_FILE` and `SSL_CERT_DIR`
    ///                               are honoured, as by OpenSSL-based tools) by the default evaluation and by
    ///                               evaluators' default validation. `[]` by default. (AlamofireNIO's own.)
    ///   - clientIdentity:           The client certificate presented when a server asks for one, unless a request
    ///                               has its own (`authenticate(with: SecIdentity)`). `nil` by default. (AlamofireNIO's
    ///                               own: Linux has no `URLCredential(identity:)`.)
    ///   - allowsHTTP2:              Whether https connections offer HTTP/2 by ALPN (`h2`, then `http/1.1`), as
    ///                               URLSession does. `true` by default; `false` speaks HTTP/1.1 only. Plain `http`
    ///                               URLs always use HTTP/1.1. (AlamofireNIO's own.)
    ///   - eventLoopGroup:           Where connections live: NIO's shared group by default; pass an app's own so that
    ///                               its server and its client share loops. (AlamofireNIO's own.)
    ///   - logger:                   Where the session logs; silent by default. (AlamofireNIO's own.)
    public init(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        delegate: SessionDelegate = SessionDelegate(),
        rootQueue: DispatchQueue = DispatchQueue(label: "org.alamofire.session.rootQueue"),
        startRequestsImmediately: Bool = true,
        requestSetup: RequestSetup = .lazy,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [AlamofireNotifications()],
        additionalTrustRoots: [SecCertificate] = [],
        clientIdentity: SecIdentity? = nil,
        allowsHTTP2: Bool = true,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "org.alamofire.session", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.delegate = delegate
        self.logger = logger
        self.rootQueue = rootQueue
        self.startRequestsImmediately = startRequestsImmediately
        self.requestSetup = requestSetup
        self.setsUpOnRootQueue = requestQueue == nil
        self.requestQueue = requestQueue ?? DispatchQueue(label: "\(rootQueue.label).requestQueue", target: rootQueue)
        self.serializationQueue = serializationQueue ?? DispatchQueue(label: "\(rootQueue.label).serializationQueue", target: rootQueue)
        self.interceptor = interceptor
        self.serverTrustManager = serverTrustManager
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        self.eventMonitor = CompositeEventMonitor(queue: rootQueue, monitors: eventMonitors)
        self.urlSession = Mutex(nil)
        var transportConfiguration = HTTPTransport.Configuration()
        transportConfiguration.maximumConnectionsPerHost = max(1, configuration.httpMaximumConnectionsPerHost)
        transportConfiguration.tls.additionalTrustRoots = additionalTrustRoots.map { Array($0.data) }
        transportConfiguration.tls.clientIdentity = clientIdentity?.transportIdentity
        transportConfiguration.tls.serverTrustEvaluator = serverTrustManager.map(ServerTrustBridge.transportEvaluator(for:))
        transportConfiguration.allowsHTTP2 = allowsHTTP2
        transportConfiguration.proxies = ProxySelection.settings(for: configuration, logger: logger)
        self.transport = HTTPTransport(configuration: transportConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        self.loading = LoadingSession(transport: transport, configuration: configuration)
    }

    /// Creates a `Session` from an existing `URLSession`: its configuration applies, and it is the ``session`` the
    /// event monitors see. It loads nothing; AlamofireNIO's transport does.
    ///
    /// - Parameters: as ``init(configuration:delegate:rootQueue:startRequestsImmediately:requestSetup:requestQueue:serializationQueue:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:additionalTrustRoots:clientIdentity:allowsHTTP2:eventLoopGroup:logger:)``,
    ///   with `session` in place of `configuration`.
    public convenience init(
        session: URLSession, delegate: SessionDelegate, rootQueue: DispatchQueue, startRequestsImmediately: Bool = true,
        requestSetup: RequestSetup = .lazy, requestQueue: DispatchQueue? = nil, serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil, serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil, cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [AlamofireNotifications()]
    ) {
        self.init(
            configuration: session.configuration, delegate: delegate, rootQueue: rootQueue,
            startRequestsImmediately: startRequestsImmediately,
            requestSetup: requestSetup, requestQueue: requestQueue, serializationQueue: serializationQueue, interceptor: interceptor,
            serverTrustManager: serverTrustManager, redirectHandler: redirectHandler, cachedResponseHandler: cachedResponseHandler,
            eventMonitors: eventMonitors)
        urlSession.withLock { $0 = session }
    }

    deinit {
        transport.shutdown()
        if let session = urlSession.withLock({ $0 }) {
            session.invalidateAndCancel()
            eventMonitor.urlSession(session, didBecomeInvalidWithError: nil)
        }
    }

    /// The `URLSession` passed to the event monitors' URLSession events: it carries ``configuration`` but loads
    /// nothing. Made the first time it is needed.
    public var session: URLSession {
        urlSession.withLock { session in
            if let session { return session }
            let made = URLSession(configuration: configuration)
            session = made
            return made
        }
    }

    // MARK: All requests

    /// Perform an action on all active `Request`s.
    ///
    /// - Note: The provided `action` closure is performed asynchronously, meaning that some `Request`s may complete and
    ///         be unavailable by time it runs. Additionally, this action is performed on the instances's `rootQueue`,
    ///         so care should be taken that actions are fast. Once the work on the `Request`s is complete, any
    ///         additional work should be performed on another queue.
    ///
    /// - Parameter action: Closure to perform with all `Request`s.
    public func withAllRequests(perform action: @escaping @Sendable (Set<Request>) -> Void) {
        rootQueue.async { action(self.activeRequests.withLock { $0 }) }
    }

    /// Cancel all active `Request`s, optionally calling a completion handler when complete.
    ///
    /// - Note: This is an asynchronous operation and does not block the creation of future `Request`s. Cancelled
    ///         `Request`s may not cancel immediately due internal work, and may not cancel at all if they are close to
    ///         completion when cancelled.
    ///
    /// - Parameters:
    ///   - queue:      `DispatchQueue` on which the completion handler is run. `.main` by default.
    ///   - completion: Closure to be called when all `Request`s have been cancelled.
    public func cancelAllRequests(completingOnQueue queue: DispatchQueue = .main, completion: (@Sendable () -> Void)? = nil) {
        withAllRequests { requests in
            requests.forEach { $0.cancel() }
            queue.async { completion?() }
        }
    }

    /// Closure which provides a `URLRequest` for mutation.
    public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

    /// Starts setting a new request up when the session sets requests up eagerly.
    func prepare<R: Request>(_ request: R) -> R {
        if requestSetup == .eager { request.setUpEagerly() }
        return request
    }
}

/// Closure which provides a `URLRequest` for mutation.
public typealias RequestModifier = Session.RequestModifier
