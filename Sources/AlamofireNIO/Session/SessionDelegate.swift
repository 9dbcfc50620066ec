package import AlamofireNIOLoading
public import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Receives the loading tasks' events — the moments URLSession calls its delegate — and, as
/// Alamofire's `SessionDelegate` does for URLSession's, tells the session's event monitors of each
/// and hands it to the ``Request`` the task runs for: redirects go to the redirect handler,
/// responses to the request's response handler, files to the download's destination.
///
/// Events arrive on the transport's event loops (a few that may block — a download's file to move,
/// a response to cache — on a Dispatch thread); the request records them under its lock and moves to
/// its own queue only when the task completes, so a request costs one hop between the wire and its
/// validators and serializers. A user's `RedirectHandler` and `CachedResponseHandler` run on the
/// session's root queue, as in Alamofire.
///
/// As in Alamofire it is an `NSObject` and a `URLSessionDelegate` (task, data and download too), and
/// it is the delegate of the session's ``Session/session``. That `URLSession` loads nothing, so
/// URLSession calls none of the delegate methods but `urlSession(_:didBecomeInvalidWithError:)` when
/// the Session goes away; the loading tasks' events come here through the loading layer instead.
open class SessionDelegate: NSObject, URLSessionDelegate, URLSessionTaskDelegate, URLSessionDataDelegate, URLSessionDownloadDelegate,
    @unchecked Sendable
{
    // @unchecked: its only stored property is a constant.
    /// Used by downloads to move and remove files.
    public let fileManager: FileManager

    /// Creates a session delegate.
    ///
    /// - Parameter fileManager: used by downloads to move and remove files (`.default`).
    public init(fileManager: FileManager = .default) {
        self.fileManager = fileManager
        super.init()
    }

    /// URLSession's download delegate requirement. Never called here: downloads are moved to their
    /// destination by the loading layer (see the type's overview).
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {}

    private func request(for task: LoadingTask) -> Request? {
        task.owner as? Request
    }

    /// Runs a user's handler (a `RedirectHandler`, a `CachedResponseHandler`) on the session's root queue,
    /// where Alamofire's `SessionDelegate` runs it: the loading task reports from an event loop or a
    /// Dispatch thread, and a handler must block neither nor find itself elsewhere than Alamofire puts it.
    private func onRootQueue(of request: Request, _ work: @escaping @Sendable () -> Void) {
        guard let queue = request.session?.rootQueue else { return work() }
        queue.async(execute: work)
    }

    /// Tells the session's monitors of a URLSession event, when any would hear it; `event` gets the
    /// session's `URLSession` and the task's stand-in.
    func tell(
        _ request: Request, about task: LoadingTask, _ kind: MonitorEvent,
        _ event: @escaping @Sendable (any EventMonitor, URLSession, URLSessionTask) -> Void
    ) {
        guard let session = request.session, session.eventMonitor.hears(kind) else { return }
        session.eventMonitor.performEvent(kind) { event($0, session.session, request.sessionTask(for: task)) }
    }
}

extension SessionDelegate: LoadingTaskDelegate {
    package func loadingTask(
        _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(newRequest) }
        tell(request, about: task, .taskWillPerformHTTPRedirection) {
            $0.urlSession($1, task: $2, willPerformHTTPRedirection: response, newRequest: newRequest)
        }
        guard let handler = request.redirectHandler ?? request.session?.redirectHandler else { return completionHandler(newRequest) }
        let sessionTask = request.sessionTask(for: task)
        onRootQueue(of: request) {
            handler.task(sessionTask, willBeRedirectedTo: newRequest, for: response) { completionHandler($0) }
        }
    }

    package func loadingTask(
        _ task: LoadingTask, didReceive challenge: LoadingChallenge,
        completionHandler: @escaping @Sendable (LoadingChallenge.Disposition) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(.performDefaultHandling) }
        tell(request, about: task, .taskDidReceiveChallenge) { monitor, session, sessionTask in
            let challenge = URLAuthenticationChallenge(
                protectionSpace: challenge.protectionSpace, proposedCredential: nil, previousFailureCount: challenge.previousFailureCount,
                failureResponse: challenge.failureResponse, error: nil, sender: ChallengeSender())
            monitor.urlSession(session, task: sessionTask, didReceive: challenge)
        }
        // Alamofire's answer: an answer already refused is not repeated (the 401 is the response); else the
        // request's credential, else the configuration's stored one, else URLSession's default handling.
        guard challenge.previousFailureCount == 0 else { return completionHandler(.rejectProtectionSpace) }
        completionHandler(credential(for: request, in: challenge.protectionSpace).map { .useCredential($0) } ?? .performDefaultHandling)
    }

    /// The request's credential, else the session's stored one for `protectionSpace`, as Alamofire's `credential(for:in:)`.
    private func credential(for request: Request, in protectionSpace: URLProtectionSpace) -> URLCredential? {
        request.credential ?? request.session?.loading.defaultCredential(for: protectionSpace)
    }

    package func loadingTaskNeedsNewBodyStream(_ task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        if let request = request(for: task) {
            tell(request, about: task, .taskNeedsNewBodyStream) { $0.urlSession($1, taskNeedsNewBodyStream: $2) }
        }
        // The stream already read cannot be sent again: the task fails with `.requestBodyStreamExhausted`.
        completionHandler(nil)
    }

    package func loadingTask(_ task: LoadingTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    {
        guard let request = request(for: task) else { return }
        tell(request, about: task, .taskDidSendBodyData) {
            $0.urlSession(
                $1, task: $2, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend ?? NSURLSessionTransferSizeUnknown)
        }
        request.updateProgress(.upload, completed: totalBytesSent, total: totalBytesExpectedToSend)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceiveBodyBytes bytesReceived: Int64, totalBytesReceived: Int64, totalBytesExpected: Int64?
    ) {
        guard let request = request(for: task) else { return }
        if request is DownloadRequest {
            tell(request, about: task, .downloadTaskDidWriteData) { monitor, session, sessionTask in
                guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
                monitor.urlSession(
                    session, downloadTask: downloadTask, didWriteData: bytesReceived, totalBytesWritten: totalBytesReceived,
                    totalBytesExpectedToWrite: totalBytesExpected ?? NSURLSessionTransferSizeUnknown)
            }
        }
        request.updateProgress(.download, completed: totalBytesReceived, total: totalBytesExpected)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceive response: ReceivedResponse,
        completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(.allow) }
        tell(request, about: task, .dataTaskDidReceiveResponse) { monitor, session, sessionTask in
            guard let dataTask = sessionTask as? URLSessionDataTask else { return }
            monitor.urlSession(session, dataTask: dataTask, didReceive: response.urlResponse)
        }
        request.didReceiveResponse(response, completionHandler: completionHandler)
    }

    package func loadingTask(_ task: LoadingTask, didReceive data: Data) {
        guard let request = request(for: task) else { return }
        tell(request, about: task, .dataTaskDidReceiveData) { monitor, session, sessionTask in
            guard let dataTask = sessionTask as? URLSessionDataTask else { return }
            monitor.urlSession(session, dataTask: dataTask, didReceive: data)
        }
        request.didReceiveData(data)
    }

    package func loadingTaskAwaitsBodyDemand(_ task: LoadingTask) async {
        switch request(for: task) {
        case let request as DataStreamRequest: await request.awaitDemand()
        case let request as WebSocketRequest: await request.awaitDemand()
        default: break
        }
    }

    package func loadingTask(_ task: LoadingTask, didOpenWebSocketWithProtocol protocol: String?) {
        (request(for: task) as? WebSocketRequest)?.didConnect(protocol: `protocol`)
    }

    package func loadingTask(_ task: LoadingTask, didReceive message: URLSessionWebSocketTask.Message) {
        (request(for: task) as? WebSocketRequest)?.didReceiveMessage(message)
    }

    package func loadingTask(_ task: LoadingTask, didCloseWith code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        (request(for: task) as? WebSocketRequest)?.didDisconnect(closeCode: code, reason: reason)
    }

    package func loadingTask(_ task: LoadingTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64) {
        guard let request = request(for: task) as? DownloadRequest else { return }
        tell(request, about: task, .downloadTaskDidResumeAtOffset) { monitor, session, sessionTask in
            guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
            monitor.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
        }
        request.updateProgress(.download, completed: fileOffset, total: expectedTotalBytes >= 0 ? expectedTotalBytes : nil)
    }

    package func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL) {
        guard let request = request(for: task) as? DownloadRequest else { return }
        tell(request, about: task, .downloadTaskDidFinishDownloading) { monitor, session, sessionTask in
            guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
            monitor.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        }
        request.didFinishDownloading(using: task, to: location, fileManager: fileManager)
    }

    package func loadingTask(
        _ task: LoadingTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        guard let request = request(for: task), let dataTask = request.sessionTask(for: task) as? URLSessionDataTask else {
            return completionHandler(proposedResponse)
        }
        tell(request, about: task, .dataTaskWillCacheResponse) { monitor, session, _ in
            monitor.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse)
        }
        guard let handler = request.cachedResponseHandler ?? request.session?.cachedResponseHandler else {
            return completionHandler(proposedResponse)
        }
        onRootQueue(of: request) {
            handler.dataTask(dataTask, willCacheResponse: proposedResponse) { completionHandler($0) }
        }
    }

    package func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics) {
        guard let request = request(for: task) else { return }
        tell(request, about: task, .taskDidFinishCollectingMetrics) { $0.urlSession($1, task: $2, didFinishCollecting: metrics) }
        request.didGatherMetrics(metrics)
    }

    package func loadingTask(_ task: LoadingTask, didCompleteWithError error: URLError?) {
        guard let request = request(for: task) else { return }
        tell(request, about: task, .taskDidComplete) { $0.urlSession($1, task: $2, didCompleteWithError: error) }
        request.didCompleteTask(task, with: error)
    }
}

/// The sender of the `URLAuthenticationChallenge`s handed to event monitors: they only observe, so
/// its answers do nothing (the loading layer has the request's own answer).
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
