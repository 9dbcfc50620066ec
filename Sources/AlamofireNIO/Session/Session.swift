import AFSynchronization
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
    /// Where the session and its requests log (at debug and trace levels), unless a request is given
    /// a logger of its own.
    public let logger: Logger
    /// Whether ``logger`` is swift-log's no-op logger (the default): its requests skip logging at once.
    let logsNothing: Bool
    let transport: HTTPTransport
    let loading: LoadingSession
    let activeRequests = Mutex<Set<Request>>([])
    /// Runs the session's delays (retry delays, WebSocket requests' automatic pings and their pong
    /// deadlines); tests replace it with a manual clock.
    var delayScheduler: any DelayedWorkScheduler {
        get { delaySchedulerStorage.withLock { $0 } }
        set { delaySchedulerStorage.withLock { $0 = newValue } }
    }
    private let delaySchedulerStorage = Mutex<any DelayedWorkScheduler>(DispatchDelayedWorkScheduler())
    /// Requests made that will not resume on their own, held weakly until they finish, for ``deinit``
    /// (the others are in ``activeRequests`` once set up).
    let unfinishedRequests = RequestRegistry()
    /// The underlying `URLSession`: the one given to `init(session:…)`, or one made with this session's
    /// configuration, ``delegate`` and a delegate queue on ``rootQueue``, as in Alamofire. It loads nothing
    /// (AlamofireNIO's transport does): the event monitors' URLSession events carry it. As in Alamofire, it is
    /// invalidated (`invalidateAndCancel()`) when the Session goes away, so do not share one between sessions or use
    /// it for tasks of your own.
    public let session: URLSession

    /// Creates a `Session` from a `URLSession` (Alamofire's designated initializer): its configuration's headers,
    /// timeouts and connection limit apply, and it is the ``session`` the event monitors see. It loads nothing;
    /// AlamofireNIO's transport does.
    ///
    /// - Note: As in Alamofire, `session`'s delegate should be `delegate` and its delegate queue should run on
    ///         `rootQueue`: the delegate then hears the session's invalidation when this `Session` goes away.
    ///
    /// - Parameters:
    ///   - session:                  Underlying `URLSession` for this instance. Changes to its configuration after
    ///                               being passed to this initializer will have no effect.
    ///   - delegate:                 `SessionDelegate` that hands the loading tasks' events to the `Request`s.
    ///   - rootQueue:                Root `DispatchQueue` for all internal callbacks and state updates. **MUST** be a
    ///                               serial queue.
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
    public init(
        session: URLSession,
        delegate: SessionDelegate,
        rootQueue: DispatchQueue,
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
        let configuration = session.configuration
        self.session = session
        self.configuration = configuration
        self.delegate = delegate
        self.logger = logger
        self.logsNothing = logger.handler is SwiftLogNoOpLogHandler
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
        delegate.eventMonitor = eventMonitor
        var transportConfiguration = HTTPTransport.Configuration()
        transportConfiguration.maximumConnectionsPerHost = max(1, configuration.httpMaximumConnectionsPerHost)
        transportConfiguration.tls.additionalTrustRoots = additionalTrustRoots.map { Array($0.data) }
        transportConfiguration.tls.clientIdentity = clientIdentity?.identity.transportIdentity
        #if canImport(FoundationNetworking)
        transportConfiguration.tls.minimumVersion = configuration.tlsMinimumSupportedProtocolVersion.nioSSLVersion
        transportConfiguration.tls.maximumVersion = configuration.tlsMaximumSupportedProtocolVersion.nioSSLVersion
        #endif
        transportConfiguration.tls.serverTrustEvaluator = serverTrustManager.map {
            ServerTrustQuestion.transportEvaluator(ServerTrustBridge.judge(for: $0))
        }
        transportConfiguration.allowsHTTP2 = allowsHTTP2
        transportConfiguration.proxies = ProxySelection.settings(for: configuration, logger: logger)
        let poolMonitors = CompositeEventMonitor.flattened(eventMonitors).compactMap { $0 as? any ConnectionPoolMonitor }
        if !poolMonitors.isEmpty {
            transportConfiguration.onConnectionCountsChanged = { counts in
                let counts = ConnectionCounts(
                    scheme: counts.scheme, host: counts.host, port: counts.port, active: counts.active, idle: counts.idle)
                for monitor in poolMonitors { monitor.connectionsChanged(counts) }
            }
        }
        self.transport = HTTPTransport(configuration: transportConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        self.loading = LoadingSession(
            transport: transport, configuration: configuration,
            maximumBodySize: min(max(0, maximumResponseBodySize), Self.defaultMaximumResponseBodySize),
            makeConnectivityMonitor: {
                let monitor = NetworkChangeMonitor(source: NetlinkSocket())
                if monitor == nil {
                    logger.warning("waitsForConnectivity: rtnetlink cannot be opened here, so offline requests fail at once")
                }
                return monitor
            })
    }

    /// As in Alamofire: every request set up and not finished, and every one that will not resume on
    /// its own, finishes with `AFError.sessionDeinitialized` (one that resumes on its own finishes so
    /// when it does); then the session is invalidated, and URLSession tells its delegate, whose
    /// `urlSession(_:didBecomeInvalidWithError:)` tells the monitors, on the delegate queue. Requests
    /// hold their session weakly, so nothing but the user's references keeps it alive.
    deinit {
        let unfinished = activeRequests.withLock { $0 }.union(unfinishedRequests.takeAll())
        for request in unfinished { request.sessionDeinitialized() }
        transport.shutdown()
        // Its rtnetlink socket closes now, whoever still holds a request of it.
        loading.connectivityMonitor?.stop()
        // Read before invalidating: URLSession lets its delegate go (on its delegate queue) once it has told it.
        let tellsDelegate = session.delegate === delegate
        session.invalidateAndCancel()
        // A session given to `init(session:…)` with another delegate: the monitors still hear it.
        if !tellsDelegate { eventMonitor.urlSession(session, didBecomeInvalidWithError: nil) }
    }

    // MARK: Data requests

    /// Creates a `DataRequest` from a `URLRequest` created using the passed components and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Parameters` (a.k.a. `[String: Any]`) value to be encoded into the `URLRequest`.
    ///                                `nil` by default.
    ///   - encoding:                  `ParameterEncoding` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncoding.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `DataRequest`.
    @preconcurrency open func request(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataRequest` from a `URLRequest` created using the passed components, `Encodable` parameters, and a
    /// `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                   `ParameterEncoder` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `DataRequest`.
    @preconcurrency open func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataRequest` from a `URLRequestConvertible` value and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the `DataRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    /// - Returns:                     The created `DataRequest`.
    open func request(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        prepare(
            DataRequest(
                convertible: convertible, underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, session: self))
    }

    // MARK: Downloads and uploads

    /// Creates a `DownloadRequest` using a `URLRequest` created using the passed components, `RequestInterceptor`, and
    /// `Destination`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Parameters` (a.k.a. `[String: Any]`) value to be encoded into the `URLRequest`.
    ///                                `nil` by default.
    ///   - encoding:                  `ParameterEncoding` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncoding.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default: it stays in the temporary
    ///                                directory.
    /// - Returns:                     The created `DownloadRequest`.
    @preconcurrency open func download(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequest` created using the passed components, `Encodable` parameters, and
    /// a `RequestInterceptor`.
    ///
    /// - Parameters: as for the `ParameterEncoding` form, with `parameters` an `Encodable` value and `encoder` the
    ///   `ParameterEncoder` that encodes it (`URLEncodedFormParameterEncoder.default` by default).
    /// - Returns: The created `DownloadRequest`.
    @preconcurrency open func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequestConvertible` value, a `RequestInterceptor`, and a `Destination`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default.
    /// - Returns:                     The created `DownloadRequest`.
    @preconcurrency open func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(.request(convertible), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from the `resumeData` produced from a previously cancelled or failed
    /// `DownloadRequest`, continuing its partial file with `Range` and `If-Range` requests.
    ///
    /// The data must be AlamofireNIO's (see ``DownloadRequest/resumeData``); data that cannot be read fails the request
    /// with `AFError.createURLRequestFailed(error:)` and a ``DownloadRequest/ResumeDataError``. As with Alamofire, no
    /// `URLRequest` is built or adapted for it: the session's and request's interceptors only retry.
    ///
    /// - Parameters:
    ///   - data:                      The resume data from a previously cancelled or failed `DownloadRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default.
    /// - Returns:                     The created `DownloadRequest`.
    @preconcurrency open func download(
        resumingWith data: Data, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(.resumeData(data), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates an `UploadRequest` for the given `Data`, `URLRequest` components, and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - data:                      The `Data` to upload.
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `UploadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` instance to be used by the returned `UploadRequest`. `.default` by default.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `UploadRequest`.
    @preconcurrency open func upload(
        _ data: Data, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            data, with: parameterlessRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the given `Data` using the `URLRequestConvertible` value and `RequestInterceptor`.
    open func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .data(data), with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the file at the given file `URL`, using a `URLRequest` from the provided
    /// components and `RequestInterceptor`. The file is streamed from disk.
    @preconcurrency open func upload(
        _ fileURL: URL, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            fileURL, with: parameterlessRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the file at the given file `URL` using the `URLRequestConvertible` value and
    /// `RequestInterceptor`.
    open func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .file(fileURL, shouldRemove: false), with: convertible, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` from the `InputStream` provided using a `URLRequest` from the provided components and
    /// `RequestInterceptor`. The stream is sent chunked.
    @preconcurrency open func upload(
        _ stream: InputStream, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            stream, with: parameterlessRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: nil, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` from the provided `InputStream` using the `URLRequestConvertible` value and
    /// `RequestInterceptor`.
    open func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .stream(stream), with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    // MARK: Data stream requests

    /// Creates a `DataStreamRequest` from the passed components, `Encodable` parameters, and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                       `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                          `ParameterEncoder` to be used to encode the `parameters` value into the
    ///                                       `URLRequest`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` which will be applied to the `URLRequest` created from
    ///                                       the provided parameters. `nil` by default.
    /// - Returns:                            The created `DataStreamRequest`.
    @preconcurrency open func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return streamRequest(
            convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from the passed components and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` which will be applied to the `URLRequest` created from
    ///                                       the provided parameters. `nil` by default.
    /// - Returns:                            The created `DataStreamRequest`.
    @preconcurrency open func streamRequest(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let convertible = parameterlessRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier)
        return streamRequest(
            convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from the passed `URLRequestConvertible` value and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - automaticallyCancelOnStreamError: `Bool` indicating whether the instance should be canceled when an `Error`
    ///                                       is thrown while serializing stream `Data`. `false` by default.
    ///   - interceptor:                      `RequestInterceptor` value to be used by the returned `DataRequest`. `nil`
    ///                                       by default.
    ///   - shouldAutomaticallyResume:        Whether the request should resume after the first stream handler is
    ///                                       added. `nil` by default: the session's `startRequestsImmediately`.
    /// - Returns:                            The created `DataStreamRequest`.
    open func streamRequest(
        _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataStreamRequest {
        prepare(
            DataStreamRequest(
                convertible: convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, underlyingQueue: rootQueue,
                serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
                shouldAutomaticallyResume: shouldAutomaticallyResume, session: self))
    }

    // MARK: WebSocketRequest

    /// Creates a `WebSocketRequest` to `url` (`ws`, `wss`, `http` or `https`).
    ///
    /// - Parameters:
    ///   - url:                       `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - configuration:             `WebSocketRequest.Configuration`. `.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the handshake. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first handler is added. `nil` by
    ///                                default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns:                     The `WebSocketRequest`.
    @preconcurrency @_spi(WebSocket) open func webSocketRequest(
        to url: any URLConvertible, configuration: WebSocketRequest.Configuration = .default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> WebSocketRequest {
        webSocketRequest(
            to: url, configuration: configuration, parameters: Empty?.none, encoder: URLEncodedFormParameterEncoder.default,
            headers: headers,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    /// Creates a `WebSocketRequest` to `url`, with `parameters` encoded into the handshake by `encoder`.
    ///
    /// - Parameters:
    ///   - url:                       `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - configuration:             `WebSocketRequest.Configuration`. `.default` by default.
    ///   - parameters:                `Encodable` value encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                   `ParameterEncoder` used. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the handshake. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first handler is added. `nil` by
    ///                                default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns:                     The `WebSocketRequest`.
    @preconcurrency @_spi(WebSocket) open func webSocketRequest<Parameters: Encodable & Sendable>(
        to url: any URLConvertible, configuration: WebSocketRequest.Configuration = .default, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil
    ) -> WebSocketRequest {
        let convertible = RequestEncodableConvertible(
            url: url, method: .get, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return webSocketRequest(
            performing: convertible, configuration: configuration, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `WebSocketRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible:               `URLRequestConvertible` value used to create the `URLRequest`.
    ///   - configuration:             `WebSocketRequest.Configuration`. `.default` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first handler is added. `nil` by
    ///                                default: the session's `startRequestsImmediately`.
    /// - Returns:                     The `WebSocketRequest`.
    @_spi(WebSocket) open func webSocketRequest(
        performing convertible: any URLRequestConvertible, configuration: WebSocketRequest.Configuration = .default,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> WebSocketRequest {
        prepare(
            WebSocketRequest(
                convertible: convertible, configuration: configuration, underlyingQueue: rootQueue, serializationQueue: serializationQueue,
                eventMonitor: eventMonitor, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, session: self))
    }

    // MARK: Multipart uploads

    /// Creates an `UploadRequest` for the multipart form data built by a closure, using a `URLRequest` from the
    /// provided components and `RequestInterceptor`.
    ///
    /// A form whose parts' contents add up to less than `encodingMemoryThreshold` bytes is encoded in memory and
    /// sent at once; a larger one is written to a temporary file, streamed from disk (memory stays flat whatever
    /// its size) and the file removed once the request is done.
    ///
    /// - Parameters:
    ///   - multipartFormData:       `MultipartFormData` building closure.
    ///   - url:                     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - encodingMemoryThreshold: Byte threshold used to determine whether the form data is encoded into memory or
    ///                              onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold` by
    ///                              default.
    ///   - method:                  `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - fileManager:             `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                              written to disk before being uploaded. `.default` instance by default.
    ///   - requestModifier:         `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                              provided parameters. `nil` by default.
    /// - Returns:                   The created `UploadRequest`.
    @preconcurrency open func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let formData = MultipartFormData(fileManager: fileManager)
        multipartFormData(formData)
        return upload(
            multipartFormData: formData,
            with: parameterlessRequest(to: url, method: method, headers: headers, requestModifier: requestModifier),
            usingThreshold: encodingMemoryThreshold, interceptor: interceptor, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` using a `MultipartFormData` building closure, the provided `URLRequestConvertible`
    /// value, and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       `MultipartFormData` building closure.
    ///   - request:                 `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - encodingMemoryThreshold: Byte threshold used to determine whether the form data is encoded into memory or
    ///                              onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold` by
    ///                              default.
    ///   - interceptor:             `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - fileManager:             `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                              written to disk before being uploaded. `.default` instance by default.
    /// - Returns:                   The created `UploadRequest`.
    open func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        let formData = MultipartFormData(fileManager: fileManager)
        multipartFormData(formData)
        return upload(
            multipartFormData: formData, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the prebuilt `MultipartFormData` value using the provided `URLRequest`
    /// components and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:         `MultipartFormData` instance to upload.
    ///   - url:                       `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - encodingMemoryThreshold:   Byte threshold used to determine whether the form data is encoded into memory
    ///                                or onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold`
    ///                                by default.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first response handler is added.
    ///                                `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                                written to disk before being uploaded. `.default` instance by default.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `UploadRequest`.
    @preconcurrency open func upload(
        multipartFormData: MultipartFormData, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let upload = MultipartUpload(
            encodingMemoryThreshold: encodingMemoryThreshold,
            request: parameterlessRequest(to: url, method: method, headers: headers, requestModifier: requestModifier),
            multipartFormData: multipartFormData, fileManager: fileManager)
        return self.upload(upload, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the prebuilt `MultipartFormData` value using the providing `URLRequestConvertible`
    /// value and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:         `MultipartFormData` instance to upload.
    ///   - request:                   `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - encodingMemoryThreshold:   Byte threshold used to determine whether the form data is encoded into memory
    ///                                or onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold`
    ///                                by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first response handler is added.
    ///                                `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` instance to be used by the returned `UploadRequest`. `.default`
    ///                                instance by default.
    /// - Returns:                     The created `UploadRequest`.
    open func upload(
        multipartFormData: MultipartFormData, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        let upload = MultipartUpload(
            encodingMemoryThreshold: encodingMemoryThreshold, request: request, multipartFormData: multipartFormData,
            fileManager: fileManager)
        return self.upload(upload, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}

/// Closure which provides a `URLRequest` for mutation.
public typealias RequestModifier = Session.RequestModifier
