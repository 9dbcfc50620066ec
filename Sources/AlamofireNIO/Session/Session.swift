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

/// The shared ``Session``, as in `AF.request(...)`.
public let AF = Session.default

/// Creates requests and runs them on its own transport, as Alamofire's `Session` does on a
/// `URLSession`. The configuration's headers, timeouts and per-host connection limit apply.
public final class Session: @unchecked Sendable {
    /// The session `AF` stands for.
    public static let `default` = Session()

    /// The configuration the session was made with. Changing it afterwards has no effect.
    public let configuration: URLSessionConfiguration
    /// The queue requests' internal work is serialized on.
    public let rootQueue: DispatchQueue
    /// Whether a request starts as soon as its first response handler is added.
    public let startRequestsImmediately: Bool
    /// Where `URLRequest`s are built when one was passed to `init`; otherwise they are built on the
    /// calling thread, which saves a hop per request (creation is cheap and never blocks).
    public let requestQueue: DispatchQueue
    private let createsRequestsOnCallingThread: Bool
    /// Where response serializers run.
    public let serializationQueue: DispatchQueue
    /// Applied to every request, before the request's own.
    public let interceptor: (any RequestInterceptor)?
    /// Hears the loading tasks' events and hands them to the requests.
    public let delegate: SessionDelegate
    /// Where the session logs (its transport's connections and retries, at debug and trace levels).
    public let logger: Logger
    let eventMonitor: CompositeEventMonitor
    let transport: HTTPTransport
    let loading: LoadingSession
    private let activeRequests = Mutex<[UUID: Request]>([:])

    /// - Parameters:
    ///   - configuration: headers, timeouts and the connection limit (`URLSessionConfiguration.af.default`).
    ///   - delegate: hears the loading tasks' events and hands them to the requests.
    ///   - rootQueue: the serial queue for requests' internal work.
    ///   - startRequestsImmediately: whether adding a response handler starts a request (`true`).
    ///   - requestQueue: where `URLRequest`s are built; by default, the thread that makes the request.
    ///   - serializationQueue: where responses are serialized (a queue targeting `rootQueue` by default).
    ///   - interceptor: adapts and retries every request.
    ///   - eventMonitors: told of every request's events.
    ///   - eventLoopGroup: where connections live: NIO's shared group by default; pass an app's own
    ///     so that its server and its client share loops.
    ///   - logger: where the session logs; silent by default.
    public init(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        delegate: SessionDelegate = SessionDelegate(),
        rootQueue: DispatchQueue = DispatchQueue(label: "org.alamofire.session.rootQueue"),
        startRequestsImmediately: Bool = true,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = [],
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "org.alamofire.session", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.delegate = delegate
        self.logger = logger
        self.rootQueue = rootQueue
        self.startRequestsImmediately = startRequestsImmediately
        self.createsRequestsOnCallingThread = requestQueue == nil
        self.requestQueue = requestQueue ?? DispatchQueue(label: "\(rootQueue.label).requestQueue", target: rootQueue)
        self.serializationQueue = serializationQueue ?? DispatchQueue(label: "\(rootQueue.label).serializationQueue", target: rootQueue)
        self.interceptor = interceptor
        self.eventMonitor = CompositeEventMonitor(monitors: eventMonitors)
        var transportConfiguration = HTTPTransport.Configuration()
        transportConfiguration.maximumConnectionsPerHost = max(1, configuration.httpMaximumConnectionsPerHost)
        self.transport = HTTPTransport(configuration: transportConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        self.loading = LoadingSession(
            transport: transport, additionalHeaders: configuration.headers.map { ($0.name, $0.value) },
            requestTimeout: configuration.timeoutIntervalForRequest, resourceTimeout: configuration.timeoutIntervalForResource)
    }

    deinit {
        transport.shutdown()
    }

    // MARK: Data requests

    /// A request whose parameters are encoded by an `Encodable`-aware ``ParameterEncoder``.
    /// - Parameters:
    ///   - convertible: the URL.
    ///   - method: the HTTP method (GET).
    ///   - parameters: the parameters, if any.
    ///   - encoder: how to encode them (`URLEncodedFormParameterEncoder.default`).
    ///   - headers: header fields for this request.
    ///   - interceptor: this request's own interceptor.
    ///   - requestModifier: changes the `URLRequest` before the parameters are encoded.
    public func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor)
    }

    /// A request whose ``Parameters`` dictionary is encoded by a ``ParameterEncoding``.
    public func request(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return request(convertible, interceptor: interceptor)
    }

    /// A request for a `URLRequestConvertible`, such as a router.
    public func request(_ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil) -> DataRequest {
        let request = DataRequest(
            convertible: convertible, underlyingQueue: rootQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor.monitors.isEmpty ? nil : eventMonitor, interceptor: interceptor, session: self)
        perform(request)
        return request
    }

    // MARK: Running requests

    func perform(_ request: Request) {
        activeRequests.withLock { $0[request.id] = request }
        if createsRequestsOnCallingThread {
            createURLRequest(for: request)
        } else {
            requestQueue.async { self.createURLRequest(for: request) }
        }
    }

    private func createURLRequest(for request: Request) {
        guard !request.isCancelled else { return }
        let initial: URLRequest
        do {
            initial = try request.makeInitialURLRequest()
            try initial.validate()
        } catch {
            request.didFailToCreateURLRequest(with: error.asAFError(or: .createURLRequestFailed(error: error)))
            return
        }
        request.didCreateInitialURLRequest(initial)
        guard let adapter = adapter(for: request) else {
            request.didCreateURLRequest(initial)
            return
        }
        adapter.adapt(initial, for: self) { result in
            self.rootQueue.async {
                switch result {
                case .success(let adapted):
                    request.didAdaptInitialRequest(initial, to: adapted)
                    request.didCreateURLRequest(adapted)
                case .failure(let error):
                    request.didFailToAdaptURLRequest(initial, withError: error.asAFError(or: .requestAdaptationFailed(error: error)))
                }
            }
        }
    }

    private func adapter(for request: Request) -> (any RequestAdapter)? {
        switch (interceptor, request.interceptor) {
        case (nil, nil): nil
        case (let one?, nil), (nil, let one?): one
        case (let session?, let own?): Interceptor(adapters: [session, own], retriers: [session, own])
        }
    }

    func retryResult(for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let retrier = adapter(for: request) as? any RequestRetrier else {
            return rootQueue.async { completion(.doNotRetry) }
        }
        retrier.retry(request, for: self, dueTo: error) { result in self.rootQueue.async { completion(result) } }
    }

    func retryRequest(_ request: Request, withDelay delay: TimeInterval) {
        rootQueue.asyncAfter(deadline: .now() + max(0, delay)) {
            // A request cancelled meanwhile has finished already.
            guard request.retryDelayElapsed() else { return }
            self.requestQueue.async { self.createURLRequest(for: request) }
        }
    }

    func requestDidFinish(_ request: Request) {
        activeRequests.withLock { _ = $0.removeValue(forKey: request.id) }
    }

    /// Cancels every request this session is running.
    public func cancelAllRequests(completingOnQueue queue: DispatchQueue = .main, completion: (@Sendable () -> Void)? = nil) {
        let requests = activeRequests.withLock { Array($0.values) }
        requests.forEach { $0.cancel() }
        if let completion { queue.async(execute: completion) }
    }
}

/// Changes a `URLRequest` while it is being built, before parameters are encoded.
public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

/// The `URLRequest` of `session.request(_:method:parameters:encoder:...)`.
struct RequestEncodableConvertible<Parameters: Encodable & Sendable>: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: Parameters?
    let encoder: any ParameterEncoder
    let headers: HTTPHeaders?
    let requestModifier: RequestModifier?

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try parameters.map { try encoder.encode($0, into: request) } ?? request
    }
}

/// The `URLRequest` of `session.request(_:method:parameters:encoding:...)`. The parameters are
/// copied at the call and only read afterwards.
struct RequestConvertible: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: UncheckedSendable<Parameters?>
    let encoding: any ParameterEncoding
    let headers: HTTPHeaders?
    let requestModifier: RequestModifier?

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try encoding.encode(request, with: parameters.value)
    }
}
