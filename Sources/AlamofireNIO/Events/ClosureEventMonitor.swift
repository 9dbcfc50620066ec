public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `EventMonitor` that allows optional closures to be set to receive events. Set the closures before
/// the monitor is given to a `Session` or `Request`; each is called on ``queue``.
open class ClosureEventMonitor: EventMonitor, @unchecked Sendable {
    // MARK: URLSession events

    /// Closure called on the `urlSession(_:didBecomeInvalidWithError:)` event.
    open var sessionDidBecomeInvalidWithError: ((URLSession, (any Error)?) -> Void)?
    /// Closure called on the `urlSession(_:task:didReceive:completionHandler:)`.
    open var taskDidReceiveChallenge: ((URLSession, URLSessionTask, URLAuthenticationChallenge) -> Void)?
    /// Closure that receives `urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)` event.
    open var taskDidSendBodyData: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?
    /// Closure called on the `urlSession(_:task:needNewBodyStream:)` event.
    open var taskNeedNewBodyStream: ((URLSession, URLSessionTask) -> Void)?
    /// Closure called on the `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)` event.
    open var taskWillPerformHTTPRedirection: ((URLSession, URLSessionTask, HTTPURLResponse, URLRequest) -> Void)?
    /// Closure called on the `urlSession(_:task:didFinishCollecting:)` event.
    open var taskDidFinishCollectingMetrics: ((URLSession, URLSessionTask, TaskMetrics) -> Void)?
    /// Closure called on the `urlSession(_:task:didCompleteWithError:)` event.
    open var taskDidComplete: ((URLSession, URLSessionTask, (any Error)?) -> Void)?
    /// Closure called on the `urlSession(_:taskIsWaitingForConnectivity:)` event.
    open var taskIsWaitingForConnectivity: ((URLSession, URLSessionTask) -> Void)?
    /// Closure called on the `urlSession(_:dataTask:didReceive:completionHandler:)` event.
    open var dataTaskDidReceiveResponse: ((URLSession, URLSessionDataTask, URLResponse) -> Void)?
    /// Closure that receives the `urlSession(_:dataTask:didReceive:)` event.
    open var dataTaskDidReceiveData: ((URLSession, URLSessionDataTask, Data) -> Void)?
    /// Closure called on the `urlSession(_:dataTask:willCacheResponse:completionHandler:)` event.
    open var dataTaskWillCacheResponse: ((URLSession, URLSessionDataTask, CachedURLResponse) -> Void)?
    /// Closure called on the `urlSession(_:downloadTask:didFinishDownloadingTo:)` event.
    open var downloadTaskDidFinishDownloadingToURL: ((URLSession, URLSessionDownloadTask, URL) -> Void)?
    /// Closure called on the `urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)` event.
    open var downloadTaskDidWriteData: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
    /// Closure called on the `urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)` event.
    open var downloadTaskDidResumeAtOffset: ((URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?

    // MARK: Request events

    /// Closure called on the `request(_:didCreateInitialURLRequest:)` event.
    open var requestDidCreateInitialURLRequest: ((Request, URLRequest) -> Void)?
    /// Closure called on the `request(_:didFailToCreateURLRequestWithError:)` event.
    open var requestDidFailToCreateURLRequestWithError: ((Request, AFError) -> Void)?
    /// Closure called on the `request(_:didAdaptInitialRequest:to:)` event.
    open var requestDidAdaptInitialRequestToAdaptedRequest: ((Request, URLRequest, URLRequest) -> Void)?
    /// Closure called on the `request(_:didFailToAdaptURLRequest:withError:)` event.
    open var requestDidFailToAdaptURLRequestWithError: ((Request, URLRequest, AFError) -> Void)?
    /// Closure called on the `request(_:didCreateURLRequest:)` event.
    open var requestDidCreateURLRequest: ((Request, URLRequest) -> Void)?
    /// Closure called on the `request(_:didCreateTask:)` event.
    open var requestDidCreateTask: ((Request, URLSessionTask) -> Void)?
    /// Closure called on the `request(_:didGatherMetrics:)` event.
    open var requestDidGatherMetrics: ((Request, TaskMetrics) -> Void)?
    /// Closure called on the `request(_:didFailTask:earlyWithError:)` event.
    open var requestDidFailTaskEarlyWithError: ((Request, URLSessionTask, AFError) -> Void)?
    /// Closure called on the `request(_:didCompleteTask:with:)` event.
    open var requestDidCompleteTaskWithError: ((Request, URLSessionTask, AFError?) -> Void)?
    /// Closure called on the `requestIsRetrying(_:)` event.
    open var requestIsRetrying: ((Request) -> Void)?
    /// Closure called on the `requestDidFinish(_:)` event.
    open var requestDidFinish: ((Request) -> Void)?
    /// Closure called on the `requestDidResume(_:)` event.
    open var requestDidResume: ((Request) -> Void)?
    /// Closure called on the `request(_:didResumeTask:)` event.
    open var requestDidResumeTask: ((Request, URLSessionTask) -> Void)?
    /// Closure called on the `requestDidSuspend(_:)` event.
    open var requestDidSuspend: ((Request) -> Void)?
    /// Closure called on the `request(_:didSuspendTask:)` event.
    open var requestDidSuspendTask: ((Request, URLSessionTask) -> Void)?
    /// Closure called on the `requestDidCancel(_:)` event.
    open var requestDidCancel: ((Request) -> Void)?
    /// Closure called on the `request(_:didCancelTask:)` event.
    open var requestDidCancelTask: ((Request, URLSessionTask) -> Void)?
    /// Closure called on the `request(_:didValidateRequest:response:data:withResult:)` event.
    open var requestDidValidateRequestResponseDataWithResult:
        ((DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
    /// Closure called on the `request(_:didParseResponse:)` event.
    open var requestDidParseResponse: ((DataRequest, DataResponse<Data?, AFError>) -> Void)?
    /// Closure called on the `request(_:didValidateRequest:response:withResult:)` event.
    open var requestDidValidateRequestResponseWithResult:
        ((DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
    /// Closure called on the `request(_:didCreateUploadable:)` event.
    open var requestDidCreateUploadable: ((UploadRequest, UploadRequest.Uploadable) -> Void)?
    /// Closure called on the `request(_:didFailToCreateUploadableWithError:)` event.
    open var requestDidFailToCreateUploadableWithError: ((UploadRequest, AFError) -> Void)?
    /// Closure called on the `request(_:didProvideInputStream:)` event.
    open var requestDidProvideInputStream: ((UploadRequest, InputStream) -> Void)?
    /// Closure called on the `request(_:didFinishDownloadingUsing:with:)` event.
    open var requestDidFinishDownloadingUsingTaskWithResult: ((DownloadRequest, URLSessionTask, Result<URL, AFError>) -> Void)?
    /// Closure called on the `request(_:didCreateDestinationURL:)` event.
    open var requestDidCreateDestinationURL: ((DownloadRequest, URL) -> Void)?
    /// Closure called on the `request(_:didValidateRequest:response:fileURL:withResult:)` event.
    open var requestDidValidateRequestResponseFileURLWithResult:
        ((DownloadRequest, URLRequest?, HTTPURLResponse, URL?, Request.ValidationResult) -> Void)?
    /// Closure called on the `request(_:didParseResponse:)` event.
    open var requestDidParseDownloadResponse: ((DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?

    /// The queue on which the closures are called.
    public let queue: DispatchQueue

    /// Creates an instance using the provided queue.
    ///
    /// - Parameter queue: `DispatchQueue` on which events will fired. `.main` by default.
    public init(queue: DispatchQueue = .main) {
        self.queue = queue
    }

    /// Calls `sessionDidBecomeInvalidWithError`, if set, when the session becomes invalid.
    open func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        sessionDidBecomeInvalidWithError?(session, error)
    }

    /// Calls `taskDidReceiveChallenge`, if set, when a task receives an authentication challenge.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge) {
        taskDidReceiveChallenge?(session, task, challenge)
    }

    /// Calls `taskDidSendBodyData`, if set, when a task has sent body data.
    open func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        taskDidSendBodyData?(session, task, bytesSent, totalBytesSent, totalBytesExpectedToSend)
    }

    /// Calls `taskNeedNewBodyStream`, if set, when a task needs a new body stream.
    open func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) {
        taskNeedNewBodyStream?(session, task)
    }

    /// Calls `taskWillPerformHTTPRedirection`, if set, when a task is about to follow an HTTP redirection.
    open func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
    ) {
        taskWillPerformHTTPRedirection?(session, task, response, request)
    }

    /// Calls `taskDidFinishCollectingMetrics`, if set, when a task has finished collecting its metrics.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics) {
        taskDidFinishCollectingMetrics?(session, task, metrics)
    }

    /// Calls `taskDidComplete`, if set, when a task completes, with or without an error.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        taskDidComplete?(session, task, error)
    }

    /// Calls `taskIsWaitingForConnectivity`, if set, when a task waits for connectivity.
    open func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        taskIsWaitingForConnectivity?(session, task)
    }

    /// Calls `dataTaskDidReceiveResponse`, if set, when a data task receives its response.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        dataTaskDidReceiveResponse?(session, dataTask, response)
    }

    /// Calls `dataTaskDidReceiveData`, if set, when a data task receives data.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        dataTaskDidReceiveData?(session, dataTask, data)
    }

    /// Calls `dataTaskWillCacheResponse`, if set, when a data task is about to cache its response.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse) {
        dataTaskWillCacheResponse?(session, dataTask, proposedResponse)
    }

    /// Calls `downloadTaskDidResumeAtOffset`, if set, when a download task resumes from an offset.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64
    ) {
        downloadTaskDidResumeAtOffset?(session, downloadTask, fileOffset, expectedTotalBytes)
    }

    /// Calls `downloadTaskDidWriteData`, if set, when a download task has written data.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        downloadTaskDidWriteData?(session, downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)
    }

    /// Calls `downloadTaskDidFinishDownloadingToURL`, if set, when a download task has finished downloading to a temporary
    /// file.
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        downloadTaskDidFinishDownloadingToURL?(session, downloadTask, location)
    }

    /// Calls `requestDidCreateInitialURLRequest`, if set, when a request's initial `URLRequest` has been created, before
    /// any adaptation.
    open func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }

    /// Calls `requestDidFailToCreateURLRequestWithError`, if set, when creating a request's `URLRequest` fails.
    open func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }

    /// Calls `requestDidAdaptInitialRequestToAdaptedRequest`, if set, when a `RequestAdapter` has adapted a request's
    /// initial `URLRequest`.
    open func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }

    /// Calls `requestDidFailToAdaptURLRequestWithError`, if set, when a `RequestAdapter` fails to adapt a request's initial
    /// `URLRequest`.
    open func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }

    /// Calls `requestDidCreateURLRequest`, if set, when the final `URLRequest` of a request has been created.
    open func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }

    /// Calls `requestDidCreateTask`, if set, when the task of a request has been created.
    open func request(_ request: Request, didCreateTask task: URLSessionTask) {
        requestDidCreateTask?(request, task)
    }

    /// Calls `requestDidGatherMetrics`, if set, when a request receives its task's metrics.
    open func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) {
        requestDidGatherMetrics?(request, metrics)
    }

    /// Calls `requestDidFailTaskEarlyWithError`, if set, when a request's task fails early with an error of AlamofireNIO's
    /// own, such as failed pinning.
    open func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        requestDidFailTaskEarlyWithError?(request, task, error)
    }

    /// Calls `requestDidCompleteTaskWithError`, if set, when a request's task completes, possibly with an error (once per
    /// attempt).
    open func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        requestDidCompleteTaskWithError?(request, task, error)
    }

    /// Calls `requestIsRetrying`, if set, when a request is about to be retried.
    open func requestIsRetrying(_ request: Request) {
        requestIsRetrying?(request)
    }

    /// Calls `requestDidFinish`, if set, when a request finishes and its response serializers are about to run.
    open func requestDidFinish(_ request: Request) {
        requestDidFinish?(request)
    }

    /// Calls `requestDidResume`, if set, when `resume()` is called on a request.
    open func requestDidResume(_ request: Request) {
        requestDidResume?(request)
    }

    /// Calls `requestDidResumeTask`, if set, when a request's task is resumed.
    open func request(_ request: Request, didResumeTask task: URLSessionTask) {
        requestDidResumeTask?(request, task)
    }

    /// Calls `requestDidSuspend`, if set, when `suspend()` is called on a request.
    open func requestDidSuspend(_ request: Request) {
        requestDidSuspend?(request)
    }

    /// Calls `requestDidSuspendTask`, if set, when a request's task is suspended.
    open func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        requestDidSuspendTask?(request, task)
    }

    /// Calls `requestDidCancel`, if set, when `cancel()` is called on a request.
    open func requestDidCancel(_ request: Request) {
        requestDidCancel?(request)
    }

    /// Calls `requestDidCancelTask`, if set, when a request's task is cancelled.
    open func request(_ request: Request, didCancelTask task: URLSessionTask) {
        requestDidCancelTask?(request, task)
    }

    /// Calls `requestDidValidateRequestResponseDataWithResult`, if set, when a ``DataRequest`` runs a validation.
    open func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }

    /// Calls `requestDidParseResponse`, if set, when a ``DataRequest`` makes its `DataResponse<Data?, AFError>` without a
    /// serializer.
    open func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }

    /// Calls `requestDidValidateRequestResponseWithResult`, if set, when a ``DataStreamRequest`` runs a validation.
    open func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseWithResult?(request, urlRequest, response, result)
    }

    /// Calls `requestDidCreateUploadable`, if set, when an ``UploadRequest`` has created its `Uploadable`.
    open func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        requestDidCreateUploadable?(request, uploadable)
    }

    /// Calls `requestDidFailToCreateUploadableWithError`, if set, when an ``UploadRequest`` fails to create its
    /// `Uploadable`.
    open func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        requestDidFailToCreateUploadableWithError?(request, error)
    }

    /// Calls `requestDidProvideInputStream`, if set, when an ``UploadRequest`` provides the `InputStream` it uploads.
    open func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        requestDidProvideInputStream?(request, stream)
    }

    /// Calls `requestDidFinishDownloadingUsingTaskWithResult`, if set, when a ``DownloadRequest``'s downloaded file has
    /// been moved, or failed to move.
    open func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        requestDidFinishDownloadingUsingTaskWithResult?(request, task, result)
    }

    /// Calls `requestDidCreateDestinationURL`, if set, when a ``DownloadRequest``'s destination closure has produced the
    /// file's final URL.
    open func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        requestDidCreateDestinationURL?(request, url)
    }

    /// Calls `requestDidValidateRequestResponseFileURLWithResult`, if set, when a ``DownloadRequest`` runs a validation.
    open func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseFileURLWithResult?(request, urlRequest, response, fileURL, result)
    }

    /// Calls `requestDidParseDownloadResponse`, if set, when a ``DownloadRequest`` makes its
    /// `DownloadResponse<URL?, AFError>` without a serializer.
    open func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        requestDidParseDownloadResponse?(request, response)
    }
}
