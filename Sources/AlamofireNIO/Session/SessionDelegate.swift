package import AlamofireNIOLoading
public import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Receives the loading tasks' events — the moments URLSession calls its delegate — and hands each
/// to the ``Request`` the task runs for, as Alamofire's `SessionDelegate` does for URLSession's.
///
/// Events arrive on the transport's event loops; the request records them under its lock and moves
/// to its own queue only when the task completes, so a request costs one hop between the wire and
/// its validators and serializers.
public final class SessionDelegate: Sendable {
    /// Used by downloads to move and remove files.
    public let fileManager: FileManager

    /// - Parameter fileManager: used by downloads to move and remove files (`.default`).
    public init(fileManager: FileManager = .default) {
        self.fileManager = fileManager
    }

    private func request(for task: LoadingTask) -> Request? {
        task.owner as? Request
    }
}

extension SessionDelegate: LoadingTaskDelegate {
    package func loadingTask(
        _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The redirect handlers' seat: every redirect URLSession's rules allow is followed.
        completionHandler(newRequest)
    }

    package func loadingTask(_ task: LoadingTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    {
        request(for: task)?.updateProgress(.upload, completed: totalBytesSent, total: totalBytesExpectedToSend)
    }

    package func loadingTask(_ task: LoadingTask, didReceiveBodyBytes totalBytesReceived: Int64, totalBytesExpected: Int64?) {
        request(for: task)?.updateProgress(.download, completed: totalBytesReceived, total: totalBytesExpected)
    }

    package func loadingTask(
        _ task: LoadingTask, didReceive response: HTTPURLResponse,
        completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void
    ) {
        request(for: task)?.didReceiveResponse(response)
        completionHandler(.allow)
    }

    package func loadingTask(_ task: LoadingTask, didReceive data: Data) {
        request(for: task)?.didReceiveData(data)
    }

    package func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL) {
        request(for: task)?.didFinishDownloading(to: location)
    }

    package func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics) {
        request(for: task)?.didGatherMetrics(metrics)
    }

    package func loadingTask(_ task: LoadingTask, didCompleteWithError error: URLError?) {
        request(for: task)?.didCompleteTask(with: error)
    }
}
