import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The life of one request, whatever its kind: the core that data, download and upload requests share.
///
/// A request is created by a ``Session``, which builds its `URLRequest` (through the convertible, then
/// the adapters), then loads it with a loading task when it is resumed. The session's delegate hands
/// the task's events to the request (response, data or file, metrics, completion). When the task
/// completes, validators run, the retriers may start it over, and then the response serializers run
/// one after another on the serialization queue; their completion handlers are called in order, each
/// on its own queue, once all are done. A serializer added later runs at once.
///
/// The rules live in one ``RequestStateMachine`` value; the request keeps it, with what the
/// attempts produced, behind one `Mutex`, and performs what the machine returns after releasing the
/// lock. User code runs on the queues the user chose, never under the lock.
public class Request: @unchecked Sendable {
    /// Where a request is in its life.
    public enum State: Sendable {
        case initialized
        case resumed
        case suspended
        case cancelled
        case finished

        func canTransitionTo(_ state: State) -> Bool {
            switch (self, state) {
            case (.initialized, _): true
            case (_, .initialized), (.cancelled, _), (.finished, _): false
            case (.resumed, .cancelled), (.suspended, .cancelled), (.resumed, .suspended), (.suspended, .resumed): true
            case (.suspended, .suspended), (.resumed, .resumed): false
            case (_, .finished): true
            }
        }
    }

    /// What a validation closure returns.
    public typealias ValidationResult = Result<Void, any Error>

    /// Called with a request's upload or download progress.
    public typealias ProgressHandler = @Sendable (Progress) -> Void

    struct MutableState {
        var machine = RequestStateMachine<LoadingTask>()
        var requests: [URLRequest] = []
        var allMetrics: [TaskMetrics] = []
        var response: HTTPURLResponse?
        var data: Data?
        /// Where a download's body was written (and then moved to).
        var fileURL: URL?
        var uploadProgressState = TransferProgress()
        var downloadProgressState = TransferProgress()
        var validators: [@Sendable () -> Void] = []
        var cURLHandlers: [(DispatchQueue, @Sendable (String) -> Void)] = []
    }

    /// Identifies the request.
    public let id: UUID
    /// The queue the request's own work is serialized on.
    public let underlyingQueue: DispatchQueue
    /// Where response serializers run.
    public let serializationQueue: DispatchQueue
    /// The request's own interceptor, used with the session's.
    public let interceptor: (any RequestInterceptor)?
    let eventMonitor: CompositeEventMonitor?
    let session: Session
    let mutableState = Mutex(MutableState())

    /// How much of the body has been sent (updated as the transport writes it).
    public let uploadProgress = Progress(totalUnitCount: 0)
    /// How much of the response body has arrived; the total is `-1` while unknown.
    public let downloadProgress = Progress(totalUnitCount: 0)

    init(
        id: UUID = .random(), underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?, session: Session
    ) {
        self.id = id
        self.underlyingQueue = underlyingQueue
        self.serializationQueue = serializationQueue
        self.eventMonitor = eventMonitor
        self.interceptor = interceptor
        self.session = session
    }

    /// Builds the initial `URLRequest`; each kind of request knows how.
    func makeInitialURLRequest() throws -> URLRequest {
        throw AFError.createURLRequestFailed(error: URLError(.unsupportedURL))
    }

    // MARK: State

    public var state: State { mutableState.withLock { $0.machine.state } }
    public var isInitialized: Bool { state == .initialized }
    public var isResumed: Bool { state == .resumed }
    public var isSuspended: Bool { state == .suspended }
    public var isCancelled: Bool { state == .cancelled }
    public var isFinished: Bool { state == .finished }

    /// Every `URLRequest` made for this request, adapted and retried ones included.
    public var requests: [URLRequest] { mutableState.withLock { $0.requests } }
    public var firstRequest: URLRequest? { requests.first }
    public var lastRequest: URLRequest? { requests.last }
    /// The latest `URLRequest`.
    public var request: URLRequest? { lastRequest }
    /// The response of the latest attempt.
    public var response: HTTPURLResponse? { mutableState.withLock { $0.response } }
    /// Metrics of every attempt.
    public var allMetrics: [TaskMetrics] { mutableState.withLock { $0.allMetrics } }
    /// Metrics of the latest attempt.
    public var metrics: TaskMetrics? { allMetrics.last }
    /// How many times the request was retried.
    public var retryCount: Int { mutableState.withLock { $0.machine.retryCount } }
    /// Why the request failed, if it did.
    public var error: AFError? { mutableState.withLock { $0.machine.error } }

    // MARK: What each kind of request does differently

    /// Where the body comes from when it is not the `URLRequest`'s `httpBody` (uploads).
    func loadingBody() -> RequestBody? { nil }

    /// Where the response body goes: memory, or a file for downloads.
    func loadingDestination() -> LoadingTask.Destination { .memory }

    /// A kind of request's last word on a completed load before validation (a download moves its
    /// file here); returns the error that ends the request, if any.
    func didFinishLoad() -> AFError? { nil }

    /// The load completed but the request had failed (it was cancelled meanwhile): a kind of
    /// request drops what the load left behind (a download's file).
    func didAbandonLoad() {}

    /// Clears the last attempt's outcome before the next one (a download also drops its file).
    func prepareForRetry() {
        mutableState.withLock { state in
            state.response = nil
            state.data = nil
            state.fileURL = nil
        }
    }

    // MARK: Control

    /// Cancels the request; its result becomes ``AFError/explicitlyCancelled``.
    @discardableResult
    public func cancel() -> Self {
        let action = mutableState.withLock { $0.machine.cancel() }
        if case .none = action { return self }
        // Told first, so monitors hear of the cancel before the finish it causes.
        eventMonitor?.performEvent { $0.requestDidCancel(self) }
        switch action {
        case .none, .notify: break
        case .cancelTask(let task): task.cancel()
        case .finish: underlyingQueue.async { self.finish() }
        }
        return self
    }

    /// Stops the request from starting (a transfer already under way continues).
    @discardableResult
    public func suspend() -> Self {
        if mutableState.withLock({ $0.machine.suspend() }) { eventMonitor?.performEvent { $0.requestDidSuspend(self) } }
        return self
    }

    /// Starts the request, or lets a suspended one start.
    @discardableResult
    public func resume() -> Self {
        guard case .resumed(let pending) = mutableState.withLock({ $0.machine.resume() }) else { return self }
        eventMonitor?.performEvent { $0.requestDidResume(self) }
        if let pending { startLoading(pending) }
        return self
    }

    // MARK: Lifecycle, driven by the Session

    func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(urlRequest) }
        eventMonitor?.performEvent { $0.request(self, didCreateInitialURLRequest: urlRequest) }
    }

    func didFailToCreateURLRequest(with error: AFError) {
        eventMonitor?.performEvent { $0.request(self, didFailToCreateURLRequestWithError: error) }
        callCURLHandlers()
        retryOrFinish(creationFailure: error)
    }

    func didAdaptInitialRequest(_ initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(adaptedRequest) }
        eventMonitor?.performEvent { $0.request(self, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    func didFailToAdaptURLRequest(_ request: URLRequest, withError error: AFError) {
        eventMonitor?.performEvent { $0.request(self, didFailToAdaptURLRequest: request, withError: error) }
        callCURLHandlers()
        retryOrFinish(creationFailure: error)
    }

    /// The final `URLRequest` is ready: load it now if resumed, else when resumed.
    func didCreateURLRequest(_ urlRequest: URLRequest) {
        eventMonitor?.performEvent { $0.request(self, didCreateURLRequest: urlRequest) }
        callCURLHandlers()
        if case .load(let urlRequest) = mutableState.withLock({ $0.machine.urlRequestCreated(urlRequest) }) {
            startLoading(urlRequest)
        }
    }

    private func startLoading(_ urlRequest: URLRequest) {
        let task = session.loading.makeTask(
            with: urlRequest, body: loadingBody(), destination: loadingDestination(), delegate: session.delegate, owner: self)
        if case .resume(let task) = mutableState.withLock({ $0.machine.loadingTaskCreated(task) }) { task.resume() }
    }

    // MARK: Loading task events, from the SessionDelegate

    func didReceiveResponse(_ response: HTTPURLResponse) {
        mutableState.withLock { $0.response = response }
    }

    func didReceiveData(_ data: Data) {
        mutableState.withLock { state in
            if state.data == nil { state.data = data } else { state.data?.append(data) }
        }
    }

    func didFinishDownloading(to location: URL) {
        mutableState.withLock { $0.fileURL = location }
    }

    func didGatherMetrics(_ metrics: TaskMetrics) {
        mutableState.withLock { $0.allMetrics.append(metrics) }
        eventMonitor?.performEvent { $0.request(self, didGatherMetrics: metrics) }
    }

    /// The task completed: on the request's queue, validate, then retry or finish.
    func didCompleteTask(with failure: URLError?) {
        if failure == nil { completeUnknownDownloadProgress() }
        underlyingQueue.async { self.didCompleteLoad(failure) }
    }

    private func didCompleteLoad(_ failure: URLError?) {
        let loadError = failure.map { AFError.sessionTaskFailed(error: $0) }
        var error = mutableState.withLock { $0.machine.loadCompleted(error: loadError) }
        if error == nil {
            if let failure = didFinishLoad() {
                error = mutableState.withLock { state in
                    state.machine.recordFailure(failure)
                    return state.machine.error
                }
            }
        } else {
            didAbandonLoad()
        }
        eventMonitor?.performEvent { [error] in $0.request(self, didCompleteWith: error) }
        if error == nil {
            // Validators may record an error.
            mutableState.withLock { $0.validators }.forEach { $0() }
        }
        retryOrFinish()
    }

    /// Asks the retriers when the request failed with an error worth retrying, else finishes.
    func retryOrFinish(creationFailure: AFError? = nil) {
        switch mutableState.withLock({ $0.machine.retryOrFinish(creationFailure: creationFailure) }) {
        case .none:
            break
        case .finish:
            finish()
        case .askRetrier(let error):
            session.retryResult(for: self, dueTo: error) { result in self.didDecideRetry(result) }
        }
    }

    private func didDecideRetry(_ result: RetryResult) {
        switch mutableState.withLock({ $0.machine.retryDecided(result) }) {
        case .none:
            break
        case .finish:
            finish()
        case .retry(let delay):
            prepareForRetry()
            eventMonitor?.performEvent { $0.requestIsRetrying(self) }
            session.retryRequest(self, withDelay: delay)
        }
    }

    /// The retry delay has passed: whether the session should build the request again.
    func retryDelayElapsed() -> Bool {
        mutableState.withLock { $0.machine.retryDelayElapsed() }
    }

    /// Records a validator's failure; a cancellation or earlier failure wins.
    func recordFailure(_ failure: AFError) {
        mutableState.withLock { $0.machine.recordFailure(failure) }
    }

    /// Ends the request: runs the response serializers, tells the monitors and the session.
    func finish() {
        let finishing = mutableState.withLock { state in
            guard state.machine.finish() else { return false }
            // No load follows: let go of the validators (and whatever their closures hold).
            state.validators.removeAll()
            return true
        }
        guard finishing else { return }
        processNextResponseSerializer()
        eventMonitor?.performEvent { $0.requestDidFinish(self) }
        session.requestDidFinish(self)
    }

    // MARK: cURL

    /// Calls `handler` on `queue` with the request as a cURL command, once the request exists.
    @discardableResult
    public func cURLDescription(on queue: DispatchQueue = .main, calling handler: @escaping @Sendable (String) -> Void) -> Self {
        let hasRequest = mutableState.withLock { state -> Bool in
            if state.requests.isEmpty && state.machine.error == nil {
                state.cURLHandlers.append((queue, handler))
                return false
            }
            return true
        }
        if hasRequest {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        return self
    }

    private func callCURLHandlers() {
        let handlers = mutableState.withLock { state in
            defer { state.cURLHandlers.removeAll() }
            return state.cURLHandlers
        }
        guard !handlers.isEmpty else { return }
        let description = cURLDescription()
        for (queue, handler) in handlers { queue.async { handler(description) } }
    }

    /// The latest request as a cURL command, with the session's headers.
    public func cURLDescription() -> String {
        guard let request = lastRequest, let url = request.url else { return "$ curl command could not be created" }
        var components = ["$ curl -v"]
        if let method = request.httpMethod, method != "GET" { components.append("-X \(method)") }
        var headers = session.configuration.headers
        for header in request.headers { headers.update(header) }
        for header in headers where header.name.lowercased() != "cookie" {
            components.append("-H \"\(header.name): \(header.value.replacingOccurrences(of: "\"", with: "\\\""))\"")
        }
        if let body = request.httpBody {
            let text = String(decoding: body, as: UTF8.self)
                .replacingOccurrences(of: "\\\"", with: "\\\\\"")
                .replacingOccurrences(of: "\"", with: "\\\"")
            components.append("-d \"\(text)\"")
        }
        components.append("\"\(url.absoluteString)\"")
        return components.joined(separator: " \\\n\t")
    }
}

extension Request: Equatable, Hashable {
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension Request: CustomStringConvertible {
    /// `GET https://host/path (200)`, or without the status before a response.
    public var description: String {
        guard let request, let url = request.url, let method = request.httpMethod else { return "No request created yet." }
        let status = response.map { " (\($0.statusCode))" } ?? ""
        return "\(method) \(url.absoluteString)\(status)"
    }
}
