public import Foundation
public import Logging
public import NIOCore
public import NIOPosix

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// The parts of Session that need not sit in its class body: how requests are set up, the
// initializer from a configuration (which makes the URLSession, as in Alamofire), and the body limit.
extension Session {
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

    /// Creates a `Session` from a `URLSessionConfiguration`: the underlying ``session`` is made with it, `delegate`
    /// and a delegate queue on `rootQueue`, as in Alamofire.
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
    ///                               root queue.
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
    ///   - maximumResponseBodySize:  The most bytes a response body held in memory may have (data and upload requests,
    ///                               `file:` and `data:` URLs); a larger one fails the request with
    ///                               `URLError(.dataLengthExceedsMaximum)`. Downloads and streams are not limited.
    ///                               ``defaultMaximumResponseBodySize`` (4 GiB less a byte) by default, which is also
    ///                               the most it can be. (AlamofireNIO's own.)
    ///   - eventLoopGroup:           Where connections live: NIO's shared group by default; pass an app's own so that
    ///                               its server and its client share loops, and shut it down only once the
    ///                               session's requests have finished. (AlamofireNIO's own.)
    ///   - logger:                   Where the session logs; silent by default. (AlamofireNIO's own.)
    public convenience init(
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
        maximumResponseBodySize: Int = Session.defaultMaximumResponseBodySize,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "org.alamofire.session", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.underlyingQueue = rootQueue
        delegateQueue.name = "\(rootQueue.label).sessionDelegate"
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
        self.init(
            session: session, delegate: delegate, rootQueue: rootQueue, startRequestsImmediately: startRequestsImmediately,
            requestSetup: requestSetup, requestQueue: requestQueue, serializationQueue: serializationQueue, interceptor: interceptor,
            serverTrustManager: serverTrustManager, redirectHandler: redirectHandler, cachedResponseHandler: cachedResponseHandler,
            eventMonitors: eventMonitors, additionalTrustRoots: additionalTrustRoots, clientIdentity: clientIdentity,
            allowsHTTP2: allowsHTTP2, maximumResponseBodySize: maximumResponseBodySize, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// The most bytes a response body held in memory may have unless a session is given another limit, and the most
    /// it may be given: 4 GiB less one byte (`UInt32.max`), what one buffer holds.
    public static let defaultMaximumResponseBodySize = Int(UInt32.max)

    /// The most bytes a response body held in memory may have (data and upload requests, `file:` and `data:` URLs).
    public var maximumResponseBodySize: Int { loading.maximumBodySize }
}
