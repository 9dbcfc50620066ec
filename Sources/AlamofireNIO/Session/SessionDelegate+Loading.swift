package import AlamofireNIOLoading
package import Foundation
import Logging

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

// The loading layer's events reach the SessionDelegate here. A plain SessionDelegate does the work
// at once; a subclass's events go through its URLSession methods first (`routed`), whose `super`
// does the same work. The work itself is below the conformance, shared by both paths.

extension SessionDelegate: LoadingTaskDelegate {
    package func loadingTask(
        _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(newRequest) }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(
                session, task: sessionTask, willPerformHTTPRedirection: response, newRequest: newRequest,
                completionHandler: completionHandler)
        }
        performRedirection(to: newRequest, from: response, for: request, task: task, completionHandler: completionHandler)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceive challenge: LoadingChallenge,
        completionHandler: @escaping @Sendable (LoadingChallenge.Disposition) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(.performDefaultHandling) }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(session, task: sessionTask, didReceive: challenge.authenticationChallenge) { disposition, credential in
                completionHandler(LoadingChallenge.Disposition(disposition, credential))
            }
        }
        let answer = answerChallenge(
            in: challenge.protectionSpace, previousFailureCount: challenge.previousFailureCount, for: request, task: task,
            monitorsSee: { challenge.authenticationChallenge })
        completionHandler(answer)
    }

    package func loadingTaskNeedsNewBodyStream(
        _ task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(nil) }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(session, task: sessionTask, needNewBodyStream: completionHandler)
        }
        needNewBodyStream(for: request, task: task, completionHandler: completionHandler)
    }

    package func loadingTask(_ task: LoadingTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    {
        guard let request = request(for: task) else { return }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(
                session, task: sessionTask, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend ?? NSURLSessionTransferSizeUnknown)
        }
        didSendBodyData(
            bytesSent, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend, for: request, task: task)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceiveBodyBytes bytesReceived: Int64, totalBytesReceived: Int64, totalBytesExpected: Int64?
    ) {
        guard let request = request(for: task) else { return }
        // Only a download has a URLSession event for this (a data task's bytes come with its data).
        // A stream's `downloadProgress` stays as it was made, as in Alamofire, whose
        // `DataStreamRequest` hands its chunks on without counting them.
        guard request is DownloadRequest else {
            if request is DataStreamRequest { return }
            return request.updateProgress(.download, completed: totalBytesReceived, total: totalBytesExpected)
        }
        if let (session, sessionTask) = routed(request, task), let downloadTask = sessionTask as? URLSessionDownloadTask {
            return urlSession(
                session, downloadTask: downloadTask, didWriteData: bytesReceived, totalBytesWritten: totalBytesReceived,
                totalBytesExpectedToWrite: totalBytesExpected ?? NSURLSessionTransferSizeUnknown)
        }
        didWrite(
            bytesReceived, totalBytesWritten: totalBytesReceived, totalBytesExpectedToWrite: totalBytesExpected, for: request, task: task)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceive response: ReceivedResponse,
        completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void
    ) {
        guard let request = request(for: task) else { return completionHandler(.allow) }
        if let (session, sessionTask) = routed(request, task), let dataTask = sessionTask as? URLSessionDataTask {
            return urlSession(session, dataTask: dataTask, didReceive: response.urlResponse) {
                completionHandler($0 == .cancel ? .cancel : .allow)
            }
        }
        didReceive(response, for: request, task: task, completionHandler: completionHandler)
    }

    package func loadingTask(_ task: LoadingTask, didReceive data: Data) {
        guard let request = request(for: task) else { return }
        if let (session, sessionTask) = routed(request, task), let dataTask = sessionTask as? URLSessionDataTask {
            return urlSession(session, dataTask: dataTask, didReceive: data)
        }
        didReceive(data, for: request, task: task)
    }

    package func loadingTaskAwaitsBodyDemand(_ task: LoadingTask) async {
        switch request(for: task) {
        case let request as DataStreamRequest: await request.awaitDemand()
        case let request as WebSocketRequest: await request.awaitDemand()
        default: break
        }
    }

    /// A stream's chunks go to its consumers without blocking or running user code (handlers run on
    /// their queues, async streams are fed), unless a subclass may override the URLSession method that
    /// hears them: then they stay off the event loop.
    package func loadingTaskTakesStreamedBodyOnEventLoop(_ task: LoadingTask) -> Bool {
        !routesThroughURLSessionMethods
    }

    // Alamofire's WebSocket delegate methods exist only on Apple platforms: these go straight to the request.

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
        if let (session, sessionTask) = routed(request, task), let downloadTask = sessionTask as? URLSessionDownloadTask {
            return urlSession(session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
        }
        didResume(request, task: task, atOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
    }

    package func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL) {
        guard let request = request(for: task) as? DownloadRequest else { return }
        if let (session, sessionTask) = routed(request, task), let downloadTask = sessionTask as? URLSessionDownloadTask {
            return urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        }
        didFinishDownloading(request, task: task, to: location)
    }

    package func loadingTask(
        _ task: LoadingTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        guard let request = request(for: task), let dataTask = request.sessionTask(for: task) as? URLSessionDataTask else {
            return completionHandler(proposedResponse)
        }
        if let (session, _) = routed(request, task) {
            return urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse, completionHandler: completionHandler)
        }
        willCache(proposedResponse, for: request, task: task, dataTask: dataTask, completionHandler: completionHandler)
    }

    package func loadingTaskIsWaitingForConnectivity(_ task: LoadingTask) {
        guard let request = request(for: task) else { return }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(session, taskIsWaitingForConnectivity: sessionTask)
        }
        tell(request, about: task, .taskIsWaitingForConnectivity) { $0.urlSession($1, taskIsWaitingForConnectivity: $2) }
    }

    package func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics) {
        guard let request = request(for: task) else { return }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(session, task: sessionTask, didFinishCollecting: metrics)
        }
        didFinishCollecting(metrics, for: request, task: task)
    }

    package func loadingTask(_ task: LoadingTask, didCompleteWithError error: URLError?) {
        guard let request = request(for: task) else { return }
        if let (session, sessionTask) = routed(request, task) {
            return urlSession(session, task: sessionTask, didCompleteWithError: error)
        }
        didComplete(request, task: task, with: error)
    }
}

// MARK: The work, for both paths

extension SessionDelegate {
    func request(for task: LoadingTask) -> Request? {
        task.owner as? Request
    }

    /// The request and loading task behind a task stand-in handed to a URLSession method.
    func loading(of sessionTask: URLSessionTask) -> (Request, LoadingTask)? {
        guard let mirror = (sessionTask as? any LoadingTaskStandIn)?.mirror, let request = mirror.request ?? request(for: mirror.task)
        else { return nil }
        return (request, mirror.task)
    }

    /// For a subclass, the session and task stand-in its URLSession methods get; `nil` for a plain
    /// delegate (or a request whose session has gone), which does the work directly.
    private func routed(_ request: Request, _ task: LoadingTask) -> (URLSession, URLSessionTask)? {
        guard routesThroughURLSessionMethods, let session = request.session else { return nil }
        return (session.session, request.sessionTask(for: task))
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

    /// Runs a user's handler (a `RedirectHandler`, a `CachedResponseHandler`) on the session's root queue,
    /// where Alamofire's `SessionDelegate` runs it: the loading task reports from an event loop or a
    /// Dispatch thread, and a handler must block neither nor find itself elsewhere than Alamofire puts it.
    private func onRootQueue(of request: Request, _ work: @escaping @Sendable () -> Void) {
        guard let queue = request.session?.rootQueue else { return work() }
        queue.async(execute: work)
    }

    func performRedirection(
        to newRequest: URLRequest, from response: HTTPURLResponse, for request: Request, task: LoadingTask,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        tell(request, about: task, .taskWillPerformHTTPRedirection) {
            $0.urlSession($1, task: $2, willPerformHTTPRedirection: response, newRequest: newRequest)
        }
        // Logged as decided: a handler may follow another request, or none.
        let decided: @Sendable (URLRequest?) -> Void = { [weak request] next in
            if let next {
                request?.log(
                    .debug, "redirected",
                    [
                        "http.response.status_code": "\(response.statusCode)",
                        "url.redirect": "\(next.url.map(URLRedaction.default.redacted) ?? "")",
                    ])
            }
            completionHandler(next)
        }
        guard let handler = request.redirectHandler ?? request.session?.redirectHandler else { return decided(newRequest) }
        let sessionTask = request.sessionTask(for: task)
        onRootQueue(of: request) {
            handler.task(sessionTask, willBeRedirectedTo: newRequest, for: response) { decided($0) }
        }
    }

    /// Alamofire's answer to a credential challenge; the monitors see `monitorsSee()`.
    func answerChallenge(
        in protectionSpace: URLProtectionSpace, previousFailureCount: Int, for request: Request, task: LoadingTask,
        monitorsSee challenge: @escaping @Sendable () -> URLAuthenticationChallenge
    ) -> LoadingChallenge.Disposition {
        tell(request, about: task, .taskDidReceiveChallenge) { $0.urlSession($1, task: $2, didReceive: challenge()) }
        // An answer already refused is not repeated (the 401 is the response); else the request's
        // credential (for its own origin only: a redirect target's challenge does not get it), else
        // the configuration's stored one, else URLSession's default handling.
        guard previousFailureCount == 0 else { return .rejectProtectionSpace }
        let ownsSpace = task.originalRequest.url.map { AuthenticationPolicy.protectionSpace(protectionSpace, isOnOriginOf: $0) } ?? false
        let credential = (ownsSpace ? request.credential : nil) ?? request.session?.loading.defaultCredential(for: protectionSpace)
        return credential.map { .useCredential($0) } ?? .performDefaultHandling
    }

    func needNewBodyStream(for request: Request, task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        tell(request, about: task, .taskNeedsNewBodyStream) { $0.urlSession($1, taskNeedsNewBodyStream: $2) }
        // The stream already read cannot be sent again: the task fails with `.requestBodyStreamExhausted`.
        completionHandler(nil)
    }

    func didFinishCollecting(_ metrics: TaskMetrics, for request: Request, task: LoadingTask) {
        tell(request, about: task, .taskDidFinishCollectingMetrics) { $0.urlSession($1, task: $2, didFinishCollecting: metrics) }
        request.didGatherMetrics(metrics)
    }

    func didComplete(_ request: Request, task: LoadingTask, with error: URLError?) {
        tell(request, about: task, .taskDidComplete) { $0.urlSession($1, task: $2, didCompleteWithError: error) }
        request.didCompleteTask(task, with: error)
    }

    func didSendBodyData(
        _ bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?, for request: Request, task: LoadingTask
    ) {
        tell(request, about: task, .taskDidSendBodyData) {
            $0.urlSession(
                $1, task: $2, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend ?? NSURLSessionTransferSizeUnknown)
        }
        request.updateProgress(.upload, completed: totalBytesSent, total: totalBytesExpectedToSend)
    }

    func didWrite(
        _ bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?, for request: Request, task: LoadingTask
    ) {
        tell(request, about: task, .downloadTaskDidWriteData) { monitor, session, sessionTask in
            guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
            monitor.urlSession(
                session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
                totalBytesExpectedToWrite: totalBytesExpectedToWrite ?? NSURLSessionTransferSizeUnknown)
        }
        request.updateProgress(.download, completed: totalBytesWritten, total: totalBytesExpectedToWrite)
    }

    func didReceive(
        _ response: ReceivedResponse, for request: Request, task: LoadingTask,
        completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void
    ) {
        tell(request, about: task, .dataTaskDidReceiveResponse) { monitor, session, sessionTask in
            guard let dataTask = sessionTask as? URLSessionDataTask else { return }
            monitor.urlSession(session, dataTask: dataTask, didReceive: response.urlResponse)
        }
        request.didReceiveResponse(response, completionHandler: completionHandler)
    }

    func didReceive(_ data: Data, for request: Request, task: LoadingTask) {
        tell(request, about: task, .dataTaskDidReceiveData) { monitor, session, sessionTask in
            guard let dataTask = sessionTask as? URLSessionDataTask else { return }
            monitor.urlSession(session, dataTask: dataTask, didReceive: data)
        }
        request.didReceiveData(data)
    }

    func willCache(
        _ proposedResponse: CachedURLResponse, for request: Request, task: LoadingTask, dataTask: URLSessionDataTask,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
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

    func didResume(_ request: DownloadRequest, task: LoadingTask, atOffset fileOffset: Int64, expectedTotalBytes: Int64) {
        tell(request, about: task, .downloadTaskDidResumeAtOffset) { monitor, session, sessionTask in
            guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
            monitor.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
        }
        request.updateProgress(.download, completed: fileOffset, total: expectedTotalBytes >= 0 ? expectedTotalBytes : nil)
    }

    func didFinishDownloading(_ request: DownloadRequest, task: LoadingTask, to location: URL) {
        tell(request, about: task, .downloadTaskDidFinishDownloading) { monitor, session, sessionTask in
            guard let downloadTask = sessionTask as? URLSessionDownloadTask else { return }
            monitor.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        }
        request.didFinishDownloading(using: task, to: location, fileManager: fileManager)
    }
}

extension LoadingChallenge {
    /// The challenge as URLSession hands it to delegates and monitors. Its sender does nothing: the
    /// answer goes through the completion handler.
    var authenticationChallenge: URLAuthenticationChallenge {
        URLAuthenticationChallenge(
            protectionSpace: protectionSpace, proposedCredential: nil, previousFailureCount: previousFailureCount,
            failureResponse: failureResponse, error: nil, sender: ChallengeSender())
    }
}

extension LoadingChallenge.Disposition {
    /// A URLSession delegate's answer: `.useCredential` without a credential goes on without one.
    init(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        switch disposition {
        case .useCredential: self = credential.map { .useCredential($0) } ?? .rejectProtectionSpace
        case .cancelAuthenticationChallenge: self = .cancelAuthenticationChallenge
        case .rejectProtectionSpace: self = .rejectProtectionSpace
        case .performDefaultHandling: self = .performDefaultHandling
        @unknown default: self = .performDefaultHandling
        }
    }
}

/// The sender of the `URLAuthenticationChallenge`s handed to delegates and event monitors: its
/// answers do nothing (the answer goes through the completion handler).
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
