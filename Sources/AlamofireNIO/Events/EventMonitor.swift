public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Observes the life of requests, at the moments Alamofire reports them: the URLSession delegate's
/// events (each raised when the loading layer reaches the moment URLSession would call its
/// delegate) and the events of each ``Request``'s own life. Every method has an empty default;
/// events arrive on ``queue``. A monitor is sent only the events it implements: once an empty
/// default has run for a monitor's type, that event is no longer made for monitors of that type.
///
/// Metrics are `TaskMetrics` values, also named ``URLSessionTaskMetrics`` as in Alamofire:
/// FoundationNetworking's class of that name cannot be created outside it. The `URLSession` passed to the URLSession events is the session's
/// ``Session/session``, which carries the configuration but loads nothing.
public protocol EventMonitor: Sendable {
    /// The `DispatchQueue` on which events will be called.
    var queue: DispatchQueue { get }

    // MARK: URLSession events

    /// Event called during `URLSessionDelegate`'s `urlSession(_:didBecomeInvalidWithError:)` method.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:didReceive:completionHandler:)` method.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)` method.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:needNewBodyStream:)` method.
    func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)` method.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:didFinishCollecting:)` method.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:task:didCompleteWithError:)` method.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
    /// Event called during `URLSessionTaskDelegate`'s `urlSession(_:taskIsWaitingForConnectivity:)` method (when
    /// the session's configuration `waitsForConnectivity` and a task finds no route).
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask)
    /// Event called during `URLSessionDataDelegate`'s `urlSession(_:dataTask:didReceive:completionHandler:)` method.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse)
    /// Event called during `URLSessionDataDelegate`'s `urlSession(_:dataTask:didReceive:)` method.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
    /// Event called during `URLSessionDataDelegate`'s `urlSession(_:dataTask:willCacheResponse:completionHandler:)` method.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse)
    /// Event called during `URLSessionDownloadDelegate`'s `urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)` method.
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64)
    /// Event called during `URLSessionDownloadDelegate`'s `urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)` method.
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64)
    /// Event called during `URLSessionDownloadDelegate`'s `urlSession(_:downloadTask:didFinishDownloadingTo:)` method.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)

    // MARK: Request events

    /// Event called when a `URLRequest` is first created for a `Request`. If a `RequestAdapter` is active, the
    /// `URLRequest` will be adapted before being issued.
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    /// Event called when the attempt to create a `URLRequest` from a `Request`'s original `URLRequestConvertible` value fails.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError)
    /// Event called when a `RequestAdapter` adapts the `Request`'s initial `URLRequest`.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest)
    /// Event called when a `RequestAdapter` fails to adapt the `Request`'s initial `URLRequest`.
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
    /// Event called when a final `URLRequest` is created for a `Request`.
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    /// Event called when a `URLSessionTask` subclass instance is created for a `Request`.
    func request(_ request: Request, didCreateTask task: URLSessionTask)
    /// Event called when a `Request` receives its metrics.
    func request(_ request: Request, didGatherMetrics metrics: TaskMetrics)
    /// Event called when a `Request` fails due to an error created by Alamofire. e.g. When certificate pinning fails.
    func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError)
    /// Event called when a `Request`'s task completes, possibly with an error. A `Request` may receive this event
    /// multiple times if it is retried.
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?)
    /// Event called when a `Request` is about to be retried.
    func requestIsRetrying(_ request: Request)
    /// Event called when a `Request` finishes and response serializers are being called.
    func requestDidFinish(_ request: Request)
    /// Event called when a `Request` receives a `resume` call.
    func requestDidResume(_ request: Request)
    /// Event called when a `Request`'s associated `URLSessionTask` is resumed.
    func request(_ request: Request, didResumeTask task: URLSessionTask)
    /// Event called when a `Request` receives a `suspend` call.
    func requestDidSuspend(_ request: Request)
    /// Event called when a `Request`'s associated `URLSessionTask` is suspended.
    func request(_ request: Request, didSuspendTask task: URLSessionTask)
    /// Event called when a `Request` receives a `cancel` call.
    func requestDidCancel(_ request: Request)
    /// Event called when a `Request`'s associated `URLSessionTask` is cancelled.
    func request(_ request: Request, didCancelTask task: URLSessionTask)

    // MARK: DataRequest events

    /// Event called when a `DataRequest` calls a `Validation`.
    func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult)
    /// Event called when a `DataRequest` creates a `DataResponse<Data?>` value without calling a `ResponseSerializer`.
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    /// Event called when a `DataRequest` calls a `ResponseSerializer` and creates a generic `DataResponse<Value, AFError>`.
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)

    // MARK: DataStreamRequest events

    /// Event called when a `DataStreamRequest` calls a `Validation` closure.
    func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult)
    /// Event called when a `DataStreamSerializer` produces a value from streamed `Data`.
    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>)

    // MARK: UploadRequest events

    /// Event called when an `UploadRequest` creates its `Uploadable` value, indicating the type of upload it represents.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// Event called when an `UploadRequest` failed to create its `Uploadable` value due to an error.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError)
    /// Event called when an `UploadRequest` provides the `InputStream` from its `Uploadable` value. This only occurs if
    /// the `InputStream` does not wrap a `Data` value or file `URL`.
    func request(_ request: UploadRequest, didProvideInputStream stream: InputStream)

    // MARK: DownloadRequest events

    /// Event called when a `DownloadRequest`'s `URLSessionDownloadTask` finishes and the temporary file has been moved.
    func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>)
    /// Event called when a `DownloadRequest`'s `Destination` closure is called and creates the destination URL the
    /// downloaded file will be moved to.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// Event called when a `DownloadRequest` calls a `Validation`.
    func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult)
    /// Event called when a `DownloadRequest` creates a `DownloadResponse<URL?, AFError>` without calling a `ResponseSerializer`.
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>)
    /// Event called when a `DownloadRequest` calls a `DownloadResponseSerializer` and creates a generic `DownloadResponse<Value, AFError>`.
    func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
}

extension EventMonitor {
    /// The default queue on which `CompositeEventMonitor`s will call the `EventMonitor` methods. `.main` by default.
    public var queue: DispatchQueue { .main }

    /// Called when the session becomes invalid. Does nothing by default.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) { leftToDefault(.didBecomeInvalid) }
    /// Called when a task receives an authentication challenge. Does nothing by default.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge) {
        leftToDefault(.taskDidReceiveChallenge)
    }
    /// Called when a task has sent body data. Does nothing by default.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) { leftToDefault(.taskDidSendBodyData) }
    /// Called when a task needs a new body stream. Does nothing by default.
    public func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) { leftToDefault(.taskNeedsNewBodyStream) }
    /// Called when a task is about to follow an HTTP redirection. Does nothing by default.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
    ) { leftToDefault(.taskWillPerformHTTPRedirection) }
    /// Called when a task has finished collecting its metrics. Does nothing by default.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics) {
        leftToDefault(.taskDidFinishCollectingMetrics)
    }
    /// Called when a task completes, with or without an error. Does nothing by default.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        leftToDefault(.taskDidComplete)
    }
    /// Called when a task waits for connectivity. Does nothing by default.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        leftToDefault(.taskIsWaitingForConnectivity)
    }
    /// Called when a data task receives its response. Does nothing by default.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        leftToDefault(.dataTaskDidReceiveResponse)
    }
    /// Called when a data task receives data. Does nothing by default.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        leftToDefault(.dataTaskDidReceiveData)
    }
    /// Called when a data task is about to cache its response. Does nothing by default.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse) {
        leftToDefault(.dataTaskWillCacheResponse)
    }
    /// Called when a download task resumes from an offset. Does nothing by default.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64
    ) { leftToDefault(.downloadTaskDidResumeAtOffset) }
    /// Called when a download task has written data. Does nothing by default.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) { leftToDefault(.downloadTaskDidWriteData) }
    /// Called when a download task has finished downloading to a temporary file. Does nothing by default.
    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        leftToDefault(.downloadTaskDidFinishDownloading)
    }
    /// Called when a request's initial `URLRequest` has been created, before any adaptation. Does nothing by default.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        leftToDefault(.requestDidCreateInitialURLRequest)
    }
    /// Called when creating a request's `URLRequest` fails. Does nothing by default.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        leftToDefault(.requestDidFailToCreateURLRequest)
    }
    /// Called when a `RequestAdapter` has adapted a request's initial `URLRequest`. Does nothing by default.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        leftToDefault(.requestDidAdaptInitialRequest)
    }
    /// Called when a `RequestAdapter` fails to adapt a request's initial `URLRequest`. Does nothing by default.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        leftToDefault(.requestDidFailToAdaptURLRequest)
    }
    /// Called when the final `URLRequest` of a request has been created. Does nothing by default.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { leftToDefault(.requestDidCreateURLRequest) }
    /// Called when the task of a request has been created. Does nothing by default.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) { leftToDefault(.requestDidCreateTask) }
    /// Called when a request receives its task's metrics. Does nothing by default.
    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) { leftToDefault(.requestDidGatherMetrics) }
    /// Called when a request's task fails early with an error of AlamofireNIO's own, such as failed pinning. Does nothing
    /// by default.
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        leftToDefault(.requestDidFailTaskEarly)
    }
    /// Called when a request's task completes, possibly with an error (once per attempt). Does nothing by default.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        leftToDefault(.requestDidCompleteTask)
    }
    /// Called when a request is about to be retried. Does nothing by default.
    public func requestIsRetrying(_ request: Request) { leftToDefault(.requestIsRetrying) }
    /// Called when a request finishes and its response serializers are about to run. Does nothing by default.
    public func requestDidFinish(_ request: Request) { leftToDefault(.requestDidFinish) }
    /// Called when `resume()` is called on a request. Does nothing by default.
    public func requestDidResume(_ request: Request) { leftToDefault(.requestDidResume) }
    /// Called when a request's task is resumed. Does nothing by default.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) { leftToDefault(.requestDidResumeTask) }
    /// Called when `suspend()` is called on a request. Does nothing by default.
    public func requestDidSuspend(_ request: Request) { leftToDefault(.requestDidSuspend) }
    /// Called when a request's task is suspended. Does nothing by default.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) { leftToDefault(.requestDidSuspendTask) }
    /// Called when `cancel()` is called on a request. Does nothing by default.
    public func requestDidCancel(_ request: Request) { leftToDefault(.requestDidCancel) }
    /// Called when a request's task is cancelled. Does nothing by default.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) { leftToDefault(.requestDidCancelTask) }
    /// Called when a ``DataRequest`` runs a validation. Does nothing by default.
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) { leftToDefault(.dataRequestDidValidate) }
    /// Called when a ``DataRequest`` makes its `DataResponse<Data?, AFError>` without a serializer. Does nothing by
    /// default.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        leftToDefault(.dataRequestDidParseData)
    }
    /// Called when a ``DataRequest`` has serialized its response into a `DataResponse`. Does nothing by default.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        leftToDefault(.dataRequestDidParseResponse)
    }
    /// Called when a ``DataStreamRequest`` runs a validation. Does nothing by default.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) { leftToDefault(.streamRequestDidValidate) }
    /// Called when a ``DataStreamRequest``'s serializer has turned streamed data into a value or an error. Does nothing by
    /// default.
    public func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        leftToDefault(.streamRequestDidParseStream)
    }
    /// Called when an ``UploadRequest`` has created its `Uploadable`. Does nothing by default.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        leftToDefault(.uploadRequestDidCreateUploadable)
    }
    /// Called when an ``UploadRequest`` fails to create its `Uploadable`. Does nothing by default.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        leftToDefault(.uploadRequestDidFailToCreateUploadable)
    }
    /// Called when an ``UploadRequest`` provides the `InputStream` it uploads. Does nothing by default.
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        leftToDefault(.uploadRequestDidProvideInputStream)
    }
    /// Called when a ``DownloadRequest``'s downloaded file has been moved, or failed to move. Does nothing by default.
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        leftToDefault(.downloadRequestDidFinishDownloading)
    }
    /// Called when a ``DownloadRequest``'s destination closure has produced the file's final URL. Does nothing by default.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        leftToDefault(.downloadRequestDidCreateDestinationURL)
    }
    /// Called when a ``DownloadRequest`` runs a validation. Does nothing by default.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult
    ) { leftToDefault(.downloadRequestDidValidate) }
    /// Called when a ``DownloadRequest`` makes its `DownloadResponse<URL?, AFError>` without a serializer. Does nothing by
    /// default.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        leftToDefault(.downloadRequestDidParseURL)
    }
    /// Called when a ``DownloadRequest`` has serialized its response into a `DownloadResponse`. Does nothing by default.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
        leftToDefault(.downloadRequestDidParseResponse)
    }
}
