public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Observes the life of requests, at the moments Alamofire reports them. Every method has an
/// empty default; events arrive on ``queue``.
public protocol EventMonitor: Sendable {
    /// Where this monitor's events are delivered (`.main` by default).
    var queue: DispatchQueue { get }

    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError)
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest)
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    func request(_ request: Request, didGatherMetrics metrics: TaskMetrics)
    func request(_ request: Request, didCompleteWith error: AFError?)
    func requestIsRetrying(_ request: Request)
    func requestDidFinish(_ request: Request)
    func requestDidResume(_ request: Request)
    func requestDidSuspend(_ request: Request)
    func requestDidCancel(_ request: Request)
    func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult)
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)
    func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult)
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>)
    func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
}

extension EventMonitor {
    public var queue: DispatchQueue { .main }

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {}
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {}
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {}
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {}
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {}
    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) {}
    public func request(_ request: Request, didCompleteWith error: AFError?) {}
    public func requestIsRetrying(_ request: Request) {}
    public func requestDidFinish(_ request: Request) {}
    public func requestDidResume(_ request: Request) {}
    public func requestDidSuspend(_ request: Request) {}
    public func requestDidCancel(_ request: Request) {}
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {}
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {}
    public func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {}
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult
    ) {}
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {}
    public func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {}
}

/// Delivers each event to every monitor, on the monitor's own queue.
final class CompositeEventMonitor: Sendable {
    let monitors: [any EventMonitor]

    init(monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    /// Runs `event` for each monitor on its queue.
    func performEvent(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for monitor in monitors {
            monitor.queue.async { event(monitor) }
        }
    }
}

/// An event monitor made of optional closures, one per event.
public final class ClosureEventMonitor: EventMonitor, @unchecked Sendable {
    public var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)?
    public var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, AFError) -> Void)?
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)?
    public var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, AFError) -> Void)?
    public var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)?
    public var requestDidGatherMetrics: (@Sendable (Request, TaskMetrics) -> Void)?
    public var requestDidCompleteWithError: (@Sendable (Request, AFError?) -> Void)?
    public var requestIsRetrying: (@Sendable (Request) -> Void)?
    public var requestDidFinish: (@Sendable (Request) -> Void)?
    public var requestDidResume: (@Sendable (Request) -> Void)?
    public var requestDidSuspend: (@Sendable (Request) -> Void)?
    public var requestDidCancel: (@Sendable (Request) -> Void)?
    public var requestDidValidateRequestResponseDataWithResult:
        (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)?

    public let queue: DispatchQueue

    /// - Parameter queue: where the closures run (`.main` by default). Set the closures before the
    ///   monitor is given to a `Session`.
    public init(queue: DispatchQueue = .main) {
        self.queue = queue
    }

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { requestDidCreateURLRequest?(request, urlRequest) }
    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) { requestDidGatherMetrics?(request, metrics) }
    public func request(_ request: Request, didCompleteWith error: AFError?) { requestDidCompleteWithError?(request, error) }
    public func requestIsRetrying(_ request: Request) { requestIsRetrying?(request) }
    public func requestDidFinish(_ request: Request) { requestDidFinish?(request) }
    public func requestDidResume(_ request: Request) { requestDidResume?(request) }
    public func requestDidSuspend(_ request: Request) { requestDidSuspend?(request) }
    public func requestDidCancel(_ request: Request) { requestDidCancel?(request) }
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }
}
