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
    ///   - others:                   as ``init(session:delegate:rootQueue:startRequestsImmediately:requestSetup:requestQueue:serializationQueue:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:additionalTrustRoots:clientIdentity:allowsHTTP2:maximumResponseBodySize:eventLoopGroup:logger:)``.
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
