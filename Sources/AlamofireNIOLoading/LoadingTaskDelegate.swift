package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Hears what a ``LoadingTask`` does, at the moments URLSession calls its task delegate, so the API
/// layer maps each onto Alamofire's events one to one. Methods may be called on any thread (an
/// event loop, usually); those with a completion handler wait for it, which may be called from any
/// thread, later. Each task reports in this order:
///
/// ```
/// (willPerformHTTPRedirection | didReceiveChallenge | needNewBodyStream)*   per extra hop
/// didSendBodyData* and didReceiveBodyBytes*                                 as bytes move
/// didReceiveResponse → didReceiveData (memory) or [didResumeAtOffset] didFinishDownloadingTo (file)
/// willCacheResponse (when the cache policy would store it)
/// didFinishCollectingMetrics → didCompleteWithError, exactly once
/// ```
package protocol LoadingTaskDelegate: AnyObject, Sendable {
    /// A redirect is about to be followed: pass `newRequest` (or a changed one) to follow it, nil to
    /// stop and make the redirect response the result.
    func loadingTask(
        _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void)

    /// The server asked for credentials.
    func loadingTask(
        _ task: LoadingTask, didReceive challenge: LoadingChallenge,
        completionHandler: @escaping @Sendable (LoadingChallenge.Disposition) -> Void)

    /// The next hop repeats a body stream that was already read: give a new stream, or nil to fail
    /// the task with `.requestBodyStreamExhausted`.
    func loadingTaskNeedsNewBodyStream(_ task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void)

    /// Body bytes were written to the connection.
    func loadingTask(_ task: LoadingTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)

    /// Response body bytes arrived (decoded): how many now, the running total and the
    /// `Content-Length`, if known.
    func loadingTask(_ task: LoadingTask, didReceiveBodyBytes bytesReceived: Int64, totalBytesReceived: Int64, totalBytesExpected: Int64?)

    /// The final response's head (an HTTP response, or a plain `URLResponse` for `file:` and
    /// `data:` URLs), made into Foundation's type only if read: `.allow` goes on with its body,
    /// `.cancel` ends the task as cancelled.
    func loadingTask(
        _ task: LoadingTask, didReceive response: ReceivedResponse,
        completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void)

    /// The final response's body, when kept in memory (nothing is reported for an empty body).
    func loadingTask(_ task: LoadingTask, didReceive data: Data)

    /// A chunk of a streamed body was handed over with `didReceive data`: the task reads the next
    /// one only once this returns, so a delegate whose consumer falls behind stops the socket's
    /// reads (back-pressure). It must return when the calling `Task` is cancelled.
    func loadingTaskAwaitsBodyDemand(_ task: LoadingTask) async

    /// Whether a streamed body's `didReceive data` (a WebSocket's `didReceive message` and
    /// `didCloseWith`) and ``loadingTaskAwaitsBodyDemand(_:)``, and the metrics and completion that
    /// follow the body (or its failure), may be called on the connection's event loop, which saves a
    /// thread crossing per read. A delegate that says yes neither blocks in
    /// them nor runs a user's code inline. No, unless the delegate says so.
    func loadingTaskTakesStreamedBodyOnEventLoop(_ task: LoadingTask) -> Bool

    /// A download continued from a resumption is receiving its body from `fileOffset` (0 when the
    /// server sent the whole body again); `expectedTotalBytes` is the whole length, or -1.
    func loadingTask(_ task: LoadingTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64)

    /// The final response's body, when written to a file: the file at `location` is the delegate's
    /// to move or remove. Called on a Dispatch thread, never an event loop or the concurrency pool,
    /// so the delegate may block on file I/O.
    func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL)

    /// The response is about to be stored by the cache policy: pass it on (or a changed one) to store
    /// it, nil to skip. Only asked when the cache policy stores responses.
    func loadingTask(
        _ task: LoadingTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void)

    /// A WebSocket task's server switched protocols (with the subprotocol it chose, if any): its
    /// messages follow.
    func loadingTask(_ task: LoadingTask, didOpenWebSocketWithProtocol protocol: String?)

    /// A WebSocket message arrived; the task reads the next one after ``loadingTaskAwaitsBodyDemand(_:)``.
    func loadingTask(_ task: LoadingTask, didReceive message: URLSessionWebSocketTask.Message)

    /// The WebSocket's server closed it with `code` (`.noStatusReceived` when it gave none) and
    /// `reason`; the task then completes.
    func loadingTask(_ task: LoadingTask, didCloseWith code: URLSessionWebSocketTask.CloseCode, reason: Data?)

    /// The task found no route to the network and waits for connectivity (its session's configuration
    /// `waitsForConnectivity`): told once per task, as URLSession tells `taskIsWaitingForConnectivity`.
    func loadingTaskIsWaitingForConnectivity(_ task: LoadingTask)

    /// The task's metrics: one transaction per exchange, a failed one included (none when the task
    /// was cancelled before its first exchange).
    func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics)

    /// The task ended: nil on success, else a `URLError` with URLSession's code.
    func loadingTask(_ task: LoadingTask, didCompleteWithError error: URLError?)
}

extension LoadingTaskDelegate {
    package func loadingTask(
        _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) { completionHandler(newRequest) }

    package func loadingTask(
        _ task: LoadingTask, didReceive challenge: LoadingChallenge,
        completionHandler: @escaping @Sendable (LoadingChallenge.Disposition) -> Void
    ) { completionHandler(.performDefaultHandling) }

    package func loadingTaskNeedsNewBodyStream(_ task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        completionHandler(nil)
    }

    package func loadingTask(_ task: LoadingTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    {}

    package func loadingTask(
        _ task: LoadingTask, didReceiveBodyBytes bytesReceived: Int64, totalBytesReceived: Int64, totalBytesExpected: Int64?
    ) {}

    package func loadingTask(_ task: LoadingTask, didReceive data: Data) {}

    package func loadingTaskAwaitsBodyDemand(_ task: LoadingTask) async {}

    package func loadingTaskTakesStreamedBodyOnEventLoop(_ task: LoadingTask) -> Bool { false }

    package func loadingTask(_ task: LoadingTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64) {}

    package func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL) {}

    package func loadingTask(
        _ task: LoadingTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) { completionHandler(proposedResponse) }

    package func loadingTaskIsWaitingForConnectivity(_ task: LoadingTask) {}

    package func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics) {}

    package func loadingTask(_ task: LoadingTask, didOpenWebSocketWithProtocol protocol: String?) {}

    package func loadingTask(_ task: LoadingTask, didReceive message: URLSessionWebSocketTask.Message) {}

    package func loadingTask(_ task: LoadingTask, didCloseWith code: URLSessionWebSocketTask.CloseCode, reason: Data?) {}
}

/// What to do with a response whose head has arrived (URLSession's `ResponseDisposition`, reduced
/// to what a data or download task can do).
package enum LoadingResponseDisposition: Sendable {
    case allow
    case cancel
}

/// A server's request for credentials, as the loading layer hands it to its delegate.
package struct LoadingChallenge: Sendable {
    /// How the delegate answers.
    package enum Disposition: Sendable {
        /// Send the request again with this credential.
        case useCredential(URLCredential)
        /// Let the credential policy answer (the configuration's credential storage).
        case performDefaultHandling
        /// Do not answer: the challenging response is the result.
        case rejectProtectionSpace
        /// Cancel the task.
        case cancelAuthenticationChallenge
    }

    /// The host, port, scheme and realm asking.
    package let protectionSpace: URLProtectionSpace
    /// How many times credentials were already sent for this space in this task.
    package let previousFailureCount: Int
    /// The 401 (or 407) response.
    package let failureResponse: HTTPURLResponse
    /// The scheme and parameters answered.
    package let offer: AuthenticationChallengeOffer

    package init(
        protectionSpace: URLProtectionSpace, previousFailureCount: Int, failureResponse: HTTPURLResponse,
        offer: AuthenticationChallengeOffer
    ) {
        self.protectionSpace = protectionSpace
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
        self.offer = offer
    }
}
