import AlamofireNIOLoading
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `Request.task`, `tasks`, `onURLSessionTaskCreation` and the event monitor's task events hand out
// `URLSessionTask`s, as Alamofire does. No `URLSession` loads anything here, so each is a real
// subclass of FoundationNetworking's task class whose `state`, `taskIdentifier`, requests,
// response, error and byte counts read the `LoadingTask` that does the work, and whose `resume()`,
// `suspend()` and `cancel()` act on it. One is made only when something asks for it.
//
// Swift cannot share overrides between classes, so the four kinds repeat the same one-line
// forwards; the reading itself is in `LoadingTaskMirror`.

/// What the task stand-ins read and do, shared by the four kinds.
struct LoadingTaskMirror: @unchecked Sendable {
    let task: LoadingTask
    /// The request the task runs for, which the ``SessionDelegate``'s URLSession methods hand events to: kept here,
    /// since the task lets its owner go as it completes, and an override may call `super` later.
    weak var request: Request?

    var snapshot: LoadingTask.Snapshot { task.snapshot }

    var state: URLSessionTask.State {
        switch snapshot.status {
        case .running: .running
        case .suspended: .suspended
        case .canceling: .canceling
        case .completed: .completed
        }
    }
}

/// A task stand-in: the ``SessionDelegate``'s URLSession methods find the loading task (and so the
/// request) a stand-in they are handed mirrors.
protocol LoadingTaskStandIn: URLSessionTask {
    var mirror: LoadingTaskMirror { get }
}

/// The `URLSessionDataTask` of a data request.
final class LoadingDataTask: URLSessionDataTask, LoadingTaskStandIn, @unchecked Sendable {
    let mirror: LoadingTaskMirror

    init(_ task: LoadingTask, request: Request? = nil) {
        mirror = LoadingTaskMirror(task: task, request: request)
        super.init()
    }

    override var taskIdentifier: Int { mirror.task.taskIdentifier }
    override var originalRequest: URLRequest? { mirror.task.originalRequest }
    override var currentRequest: URLRequest? { mirror.snapshot.currentRequest }
    override var response: URLResponse? { mirror.snapshot.response }
    override var error: (any Error)? { mirror.snapshot.error }
    override var state: URLSessionTask.State { mirror.state }
    override var countOfBytesSent: Int64 { mirror.snapshot.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { mirror.snapshot.countOfBytesExpectedToSend }
    override var countOfBytesReceived: Int64 { mirror.snapshot.countOfBytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { mirror.snapshot.countOfBytesExpectedToReceive }
    override func resume() { mirror.task.resume() }
    override func suspend() { mirror.task.suspend() }
    override func cancel() { mirror.task.cancel() }
}

/// The `URLSessionUploadTask` of an upload request.
final class LoadingUploadTask: URLSessionUploadTask, LoadingTaskStandIn, @unchecked Sendable {
    let mirror: LoadingTaskMirror

    init(_ task: LoadingTask, request: Request? = nil) {
        mirror = LoadingTaskMirror(task: task, request: request)
        super.init()
    }

    override var taskIdentifier: Int { mirror.task.taskIdentifier }
    override var originalRequest: URLRequest? { mirror.task.originalRequest }
    override var currentRequest: URLRequest? { mirror.snapshot.currentRequest }
    override var response: URLResponse? { mirror.snapshot.response }
    override var error: (any Error)? { mirror.snapshot.error }
    override var state: URLSessionTask.State { mirror.state }
    override var countOfBytesSent: Int64 { mirror.snapshot.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { mirror.snapshot.countOfBytesExpectedToSend }
    override var countOfBytesReceived: Int64 { mirror.snapshot.countOfBytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { mirror.snapshot.countOfBytesExpectedToReceive }
    override func resume() { mirror.task.resume() }
    override func suspend() { mirror.task.suspend() }
    override func cancel() { mirror.task.cancel() }
}

/// The `URLSessionDownloadTask` of a download request.
final class LoadingDownloadTask: URLSessionDownloadTask, LoadingTaskStandIn, @unchecked Sendable {
    let mirror: LoadingTaskMirror

    init(_ task: LoadingTask, request: Request? = nil) {
        mirror = LoadingTaskMirror(task: task, request: request)
        super.init()
    }

    override var taskIdentifier: Int { mirror.task.taskIdentifier }
    override var originalRequest: URLRequest? { mirror.task.originalRequest }
    override var currentRequest: URLRequest? { mirror.snapshot.currentRequest }
    override var response: URLResponse? { mirror.snapshot.response }
    override var error: (any Error)? { mirror.snapshot.error }
    override var state: URLSessionTask.State { mirror.state }
    override var countOfBytesSent: Int64 { mirror.snapshot.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { mirror.snapshot.countOfBytesExpectedToSend }
    override var countOfBytesReceived: Int64 { mirror.snapshot.countOfBytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { mirror.snapshot.countOfBytesExpectedToReceive }
    override func resume() { mirror.task.resume() }
    override func suspend() { mirror.task.suspend() }
    override func cancel() { mirror.task.cancel() }
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        let completionHandler = UncheckedSendable(completionHandler)
        mirror.task.cancel(producingResumeData: { completionHandler.value($0?.encoded()) })
    }
}

/// The `URLSessionWebSocketTask` of a WebSocket request.
final class LoadingWebSocketTask: URLSessionWebSocketTask, LoadingTaskStandIn, @unchecked Sendable {
    let mirror: LoadingTaskMirror

    init(_ task: LoadingTask, request: Request? = nil) {
        mirror = LoadingTaskMirror(task: task, request: request)
        super.init()
    }

    override var taskIdentifier: Int { mirror.task.taskIdentifier }
    override var originalRequest: URLRequest? { mirror.task.originalRequest }
    override var currentRequest: URLRequest? { mirror.snapshot.currentRequest }
    override var response: URLResponse? { mirror.snapshot.response }
    override var error: (any Error)? {
        get { mirror.snapshot.error }
        set {}  // Read-write in FoundationNetworking's declaration; the loading task has the error.
    }
    override var state: URLSessionTask.State { mirror.state }
    override var countOfBytesSent: Int64 { mirror.snapshot.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { mirror.snapshot.countOfBytesExpectedToSend }
    override var countOfBytesReceived: Int64 { mirror.snapshot.countOfBytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { mirror.snapshot.countOfBytesExpectedToReceive }
    override func resume() { mirror.task.resume() }
    override func suspend() { mirror.task.suspend() }
    override func cancel() { mirror.task.cancel() }
}
