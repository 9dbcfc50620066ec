public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// The parts of Session that need not sit in its class body: how requests are set up, the
// initializer from a URLSession, and the underlying URLSession monitors see (which loads nothing).
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

    /// Creates a `Session` from an existing `URLSession`: its configuration applies, and it is the ``session`` the
    /// event monitors see. It loads nothing; AlamofireNIO's transport does.
    ///
    /// - Parameters: as ``init(configuration:delegate:rootQueue:startRequestsImmediately:requestSetup:requestQueue:serializationQueue:interceptor:serverTrustManager:redirectHandler:cachedResponseHandler:eventMonitors:additionalTrustRoots:clientIdentity:allowsHTTP2:maximumResponseBodySize:eventLoopGroup:logger:)``,
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

    /// The most bytes a response body held in memory may have unless a session is given another limit, and the most
    /// it may be given: 4 GiB less one byte (`UInt32.max`), what one buffer holds.
    public static let defaultMaximumResponseBodySize = Int(UInt32.max)

    /// The most bytes a response body held in memory may have (data and upload requests, `file:` and `data:` URLs).
    public var maximumResponseBodySize: Int { loading.maximumBodySize }

    /// The `URLSession` Alamofire would make: this session's ``delegate`` and a delegate queue on
    /// ``rootQueue``, one operation at a time.
    func makeURLSession() -> URLSession {
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        delegateQueue.underlyingQueue = rootQueue
        delegateQueue.name = "\(rootQueue.label).sessionDelegate"
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
    }

    /// The `URLSession` passed to the event monitors' URLSession events: it carries ``configuration`` but loads
    /// nothing. Made the first time it is needed.
    public var session: URLSession {
        urlSession.withLock { session in
            if let session { return session }
            let made = makeURLSession()
            session = made
            return made
        }
    }
}
