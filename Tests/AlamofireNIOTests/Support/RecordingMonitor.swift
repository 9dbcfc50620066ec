import AFSynchronization
import Foundation
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event monitor that records every event it hears, by name, in order, on its own queue.
/// Repeated progress events are recorded once per run (`didSendBodyData` then more of the same is
/// one entry), since how many arrive depends on how the bytes were split on the wire.
final class RecordingMonitor: EventMonitor {
    let queue = DispatchQueue(label: "tests.recording-monitor")
    private let recorded = Mutex<[String]>([])

    /// What was recorded so far, once every event raised before this call has been delivered. The
    /// queue is flushed twice: a batch of events running when the first flush is queued dispatches
    /// what arrived meanwhile after it.
    var events: [String] {
        get async {
            for _ in 0..<2 { await withCheckedContinuation { continuation in queue.async { continuation.resume() } } }
            return recorded.withLock { $0 }
        }
    }

    private func record(_ event: String, coalescing: Bool = false) {
        recorded.withLock { events in
            if coalescing, events.last == event { return }
            events.append(event)
        }
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) { record("sessionDidBecomeInvalid") }
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge) {
        record("taskDidReceiveChallenge")
    }
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) { record("taskDidSendBodyData", coalescing: true) }
    func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) { record("taskNeedNewBodyStream") }
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
    ) { record("taskWillPerformHTTPRedirection \(response.statusCode)") }
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics) {
        record("taskDidFinishCollecting \(metrics.transactionMetrics.count)")
    }
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record("taskDidComplete \((error as? URLError).map { "\($0.code.rawValue)" } ?? "ok")")
    }
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) { record("taskIsWaitingForConnectivity") }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        record("dataTaskDidReceiveResponse \((response as? HTTPURLResponse)?.statusCode ?? 0)")
    }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record("dataTaskDidReceiveData", coalescing: true)
    }
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse) {
        record("dataTaskWillCacheResponse")
    }
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64
    ) { record("downloadTaskDidResumeAtOffset") }
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) { record("downloadTaskDidWriteData", coalescing: true) }
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        record("downloadTaskDidFinishDownloading")
    }

    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) { record("didCreateInitialURLRequest") }
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) { record("didFailToCreateURLRequest") }
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        record("didAdaptInitialRequest")
    }
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        record("didFailToAdaptURLRequest")
    }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { record("didCreateURLRequest") }
    func request(_ request: Request, didCreateTask task: URLSessionTask) { record("didCreateTask") }
    func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) { record("didGatherMetrics") }
    func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) { record("didFailTaskEarly") }
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        record("didCompleteTask \(error == nil ? "ok" : "error")")
    }
    func requestIsRetrying(_ request: Request) { record("requestIsRetrying") }
    func requestDidFinish(_ request: Request) { record("requestDidFinish") }
    func requestDidResume(_ request: Request) { record("requestDidResume") }
    func request(_ request: Request, didResumeTask task: URLSessionTask) { record("didResumeTask") }
    func requestDidSuspend(_ request: Request) { record("requestDidSuspend") }
    func request(_ request: Request, didSuspendTask task: URLSessionTask) { record("didSuspendTask") }
    func requestDidCancel(_ request: Request) { record("requestDidCancel") }
    func request(_ request: Request, didCancelTask task: URLSessionTask) { record("didCancelTask") }
    func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) { record("didValidateRequest") }
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) { record("didParseResponse") }
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        record("didParseResponse<\(Value.self)>")
    }
    func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) { record("didValidateStream") }
    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        record("didParseStream<\(Value.self)>", coalescing: true)
    }
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) { record("didCreateUploadable") }
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) { record("didFailToCreateUploadable") }
    func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) { record("didProvideInputStream") }
    func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        record("didFinishDownloadingUsing")
    }
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) { record("didCreateDestinationURL") }
    func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult
    ) { record("didValidateDownload") }
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        record("didParseDownloadResponse")
    }
    func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
        record("didParseDownloadResponse<\(Value.self)>")
    }
}

/// Returns once `request` has finished, serializers and clean-up included (a response handed over
/// may come before its request's clean-up).
func untilFinished(_ request: Request) async throws {
    let finished = OneTimeSignal()
    request.onFinish { finished.fire() }
    try await withTimeout { try await finished.wait() }
}

/// Returns once `request` has its task (at once if it has one): it is under way. The request's
/// task-creation handler becomes this wait's (Alamofire keeps one), so a test that sets its own
/// waits otherwise.
func untilTaskCreated(_ request: Request) async throws {
    let created = OneTimeSignal()
    // The handler stays for a retry's tasks too: only the first one counts.
    request.onURLSessionTaskCreation(on: .global()) { _ in created.fire() }
    try await withTimeout { try await created.wait() }
}

/// Something that happens once, awaited by one task: `wait()` returns once `fire()` has been
/// called (before or after), and throws `CancellationError` when its task is cancelled, so a
/// `withTimeout` around it ends.
final class OneTimeSignal: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, any Error>)
        case ended((any Error)?)
    }

    private let state = Mutex<State>(.idle)

    /// Ends the wait (later calls do nothing).
    func fire() { end(nil) }

    func wait() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ended: (any Error)?? = state.withLock { state in
                    if case .ended(let error) = state { return .some(error) }
                    if case .waiting = state { preconditionFailure("a OneTimeSignal has one waiter") }
                    state = .waiting(continuation)
                    return .none
                }
                switch ended {
                case .none: break
                case .some(.none): continuation.resume()
                case .some(.some(let error)): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            end(CancellationError())
        }
    }

    private func end(_ error: (any Error)?) {
        let waiting: CheckedContinuation<Void, any Error>? = state.withLock { state in
            switch state {
            case .ended: return nil
            case .idle:
                state = .ended(error)
                return nil
            case .waiting(let continuation):
                state = .ended(error)
                return continuation
            }
        }
        if let error { waiting?.resume(throwing: error) } else { waiting?.resume() }
    }
}

/// Collects values from any queue.
final class Collected<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
}
