import AFSynchronization
package import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Receives the loading tasks' events — the moments URLSession calls its delegate — and, as
/// Alamofire's `SessionDelegate` does for URLSession's, tells the session's event monitors of each
/// and hands it to the ``Request`` the task runs for: redirects go to the redirect handler,
/// responses to the request's response handler, files to the download's destination.
///
/// As in Alamofire it is an `NSObject` and a `URLSessionDelegate` (task, data and download too), and
/// it is the delegate of the session's ``Session/session``, whose invalidation it reports to the
/// monitors. That `URLSession` loads nothing: the loading tasks' events come through the loading
/// layer instead.
///
/// **Subclasses.** Its URLSession delegate methods are `open`, as in Alamofire. When the delegate is
/// a subclass, every loading event that has a URLSession delegate method goes through it, with the
/// request's `URLSessionTask` (``Request/task``), so an override sees each event and decides whether
/// and when to call `super`, which does Alamofire's work (WebSocket events, which have no such
/// method on Linux, go straight to the request). The plain `SessionDelegate` skips that step. Events
/// of tasks still running when their ``Session`` has gone go straight to their requests. The methods run where
/// the events arrive — a connection's event loop, or a Dispatch thread for a few that may block (a
/// download's file, a response to cache) — not on a delegate queue: an override must not block.
/// A user's `RedirectHandler` and `CachedResponseHandler` still run on the session's root queue,
/// as in Alamofire. Server trust is evaluated by the ``ServerTrustManager``, never through
/// `urlSession(_:task:didReceive:completionHandler:)`, which sees HTTP authentication challenges.
///
/// Events arrive on the transport's event loops; the request records them under its lock and moves
/// to its own queue only when the task completes, so a request costs one hop between the wire and
/// its validators and serializers.
open class SessionDelegate: NSObject, URLSessionDelegate, URLSessionTaskDelegate, URLSessionDataDelegate, URLSessionDownloadDelegate,
    @unchecked Sendable
{
    // @unchecked: its stored properties are a constant and a Mutex.
    /// Used by downloads to move and remove files.
    public let fileManager: FileManager
    /// The monitors of the session this delegate serves (Alamofire's `eventMonitor`): they hear the
    /// URLSession's invalidation.
    private let sessionMonitor = Mutex<CompositeEventMonitor?>(nil)

    /// Creates a session delegate.
    ///
    /// - Parameter fileManager: used by downloads to move and remove files (`.default`).
    public init(fileManager: FileManager = .default) {
        self.fileManager = fileManager
        super.init()
    }

    /// The monitors told of the underlying session's invalidation; set by the ``Session`` this delegate is given to.
    var eventMonitor: CompositeEventMonitor? {
        get { sessionMonitor.withLock { $0 } }
        set { sessionMonitor.withLock { $0 = newValue } }
    }

    /// Whether loading events go through the URLSession methods below: only for a subclass, which may override them.
    final var routesThroughURLSessionMethods: Bool {
        ObjectIdentifier(type(of: self)) != ObjectIdentifier(SessionDelegate.self)
    }

    // MARK: URLSessionDelegate

    /// The underlying session was invalidated (the ``Session`` went away): the monitors hear it.
    open func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        eventMonitor?.urlSession(session, didBecomeInvalidWithError: error)
    }

    // MARK: URLSessionTaskDelegate

    /// A server asked for credentials (HTTP Basic, Digest): Alamofire's answer — an answer already
    /// refused is not repeated (the 401 is the response); else the request's credential, else the
    /// configuration's stored one, else the default handling.
    @preconcurrency open func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let (request, loadingTask) = loading(of: task) else { return completionHandler(.performDefaultHandling, nil) }
        let challenge = UncheckedSendable(challenge)
        let answer = answerChallenge(
            in: challenge.value.protectionSpace, previousFailureCount: challenge.value.previousFailureCount, for: request,
            task: loadingTask, monitorsSee: { challenge.value })
        switch answer {
        case .useCredential(let credential): completionHandler(.useCredential, credential)
        case .performDefaultHandling: completionHandler(.performDefaultHandling, nil)
        case .rejectProtectionSpace: completionHandler(.rejectProtectionSpace, nil)
        case .cancelAuthenticationChallenge: completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    /// Body bytes were sent: the monitors hear it and the request's upload progress moves.
    open func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let (request, loadingTask) = loading(of: task) else { return }
        didSendBodyData(
            bytesSent, totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend == NSURLSessionTransferSizeUnknown ? nil : totalBytesExpectedToSend,
            for: request, task: loadingTask)
    }

    /// The task needs its streamed body again (after a redirect or an authentication challenge): the
    /// stream already read cannot be sent again, so the task fails with `.requestBodyStreamExhausted`.
    @preconcurrency open func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        guard let (request, loadingTask) = loading(of: task) else { return completionHandler(nil) }
        needNewBodyStream(for: request, task: loadingTask, completionHandler: completionHandler)
    }

    /// A redirect: the monitors hear it, then the request's (or the session's) ``RedirectHandler``
    /// decides on the root queue; without one, it is followed.
    @preconcurrency open func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let (owner, loadingTask) = loading(of: task) else { return completionHandler(request) }
        performRedirection(to: request, from: response, for: owner, task: loadingTask, completionHandler: completionHandler)
    }

    /// The task's metrics: the monitors hear them and the request records them (``Request/allMetrics``).
    ///
    /// `TaskMetrics` is what AlamofireNIO's `URLSessionTaskMetrics` names, so an override written as in
    /// Alamofire (`didFinishCollecting metrics: URLSessionTaskMetrics`) overrides this method.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics) {
        guard let (request, loadingTask) = loading(of: task) else { return }
        didFinishCollecting(metrics, for: request, task: loadingTask)
    }

    /// The task completed: the monitors hear it, and the request finishes (validation, retry, serialization).
    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let (request, loadingTask) = loading(of: task) else { return }
        didComplete(
            request, task: loadingTask, with: error.map { $0 as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: $0]) })
    }

    /// A task found no route to the network and waits for one, its session's configuration having
    /// `waitsForConnectivity` set: the monitors hear it. Called at most once per task, as URLSession calls it.
    open func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        guard let (request, loadingTask) = loading(of: task) else { return }
        tell(request, about: loadingTask, .taskIsWaitingForConnectivity) { $0.urlSession($1, taskIsWaitingForConnectivity: $2) }
    }

    // MARK: URLSessionDataDelegate

    /// The response head arrived: the monitors hear it and the request's response handler, if any, decides
    /// whether the task goes on (`DataRequest.onHTTPResponse(on:perform:)`).
    @preconcurrency open func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let (request, loadingTask) = loading(of: dataTask) else { return completionHandler(.allow) }
        let received =
            loadingTask.snapshot.receivedResponse.flatMap { $0.urlResponse === response ? $0 : nil } ?? ReceivedResponse(response)
        didReceive(received, for: request, task: loadingTask) { completionHandler($0 == .cancel ? .cancel : .allow) }
    }

    /// Body bytes arrived: the monitors hear them and the request keeps or streams them.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let (request, loadingTask) = loading(of: dataTask) else { return }
        didReceive(data, for: request, task: loadingTask)
    }

    /// A response may be cached: the monitors hear it, then the request's (or the session's)
    /// ``CachedResponseHandler`` decides on the root queue; without one, it is cached as proposed.
    @preconcurrency open func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        guard let (request, loadingTask) = loading(of: dataTask) else { return completionHandler(proposedResponse) }
        willCache(proposedResponse, for: request, task: loadingTask, dataTask: dataTask, completionHandler: completionHandler)
    }

    // MARK: URLSessionDownloadDelegate

    /// A download continues from resume data: the monitors hear it and the progress starts at `fileOffset`.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64
    ) {
        guard let (request, loadingTask) = loading(of: downloadTask), let download = request as? DownloadRequest else { return }
        didResume(download, task: loadingTask, atOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
    }

    /// Downloaded bytes were written: the monitors hear it and the download's progress moves.
    open func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        guard let (request, loadingTask) = loading(of: downloadTask) else { return }
        didWrite(
            bytesWritten, totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite == NSURLSessionTransferSizeUnknown ? nil : totalBytesExpectedToWrite,
            for: request, task: loadingTask)
    }

    /// The body is in a temporary file at `location`, there only until this returns: the monitors hear it and the
    /// download moves it where its destination says.
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let (request, loadingTask) = loading(of: downloadTask), let download = request as? DownloadRequest else { return }
        didFinishDownloading(download, task: loadingTask, to: location)
    }
}
