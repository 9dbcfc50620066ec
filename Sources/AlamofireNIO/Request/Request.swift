public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The life of one request, whatever its kind, shared by ``DataRequest`` and the kinds to come.
///
/// A request is created by a ``Session``, which builds its `URLRequest` (through the convertible, then
/// the adapters), then loads it when it is resumed. When the load ends, validators run, the retrier
/// may start it over, and then the response serializers run one after another on the serialization
/// queue; their completion handlers are called in order, each on its own queue, once all are done.
/// A serializer added later runs at once. All mutable state lives in one `Mutex`; user code runs on
/// the queues the user chose, never under the lock.
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
        var state: State = .initialized
        var requests: [URLRequest] = []
        var allMetrics: [TaskMetrics] = []
        var retryCount = 0
        var error: AFError?
        var response: HTTPURLResponse?
        var data: Data?
        /// Where a download's body was written (and then moved to).
        var fileURL: URL?
        var uploadProgressState = TransferProgress()
        var downloadProgressState = TransferProgress()
        /// The request waiting for `resume()` to be loaded.
        var pendingURLRequest: URLRequest?
        var loadOperation: LoadOperation?
        var isLoading = false
        var isFinishing = false
        var validators: [@Sendable () -> Void] = []
        var responseSerializers: [@Sendable () -> Void] = []
        var responseSerializerCompletions: [@Sendable () -> Void] = []
        var responseSerializerProcessingFinished = false
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

    public var state: State { mutableState.withLock { $0.state } }
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
    public var retryCount: Int { mutableState.withLock { $0.retryCount } }
    /// Why the request failed, if it did.
    public internal(set) var error: AFError? {
        get { mutableState.withLock { $0.error } }
        set { mutableState.withLock { $0.error = newValue } }
    }

    /// How this kind of request is loaded: its body source and file destination, and progress.
    func loadOptions() -> LoadOptions {
        var options = LoadOptions()
        options.onUploadProgress = { [weak self] sent, total in
            self?.updateProgress(.upload, completed: sent, total: total)
        }
        options.onDownloadProgress = { [weak self] received, total in
            self?.updateProgress(.download, completed: received, total: total)
        }
        return options
    }

    /// A kind of request's last word on a finished load before validation (a download moves its
    /// file here); returns the error that ends the request, if any.
    func didFinishLoad(_ result: LoadResult) -> AFError? { nil }

    /// The load finished but the request had already failed (it was cancelled meanwhile): a kind
    /// of request drops what the load left behind (a download's file).
    func didAbandonLoad(_ result: LoadResult) {}

    // MARK: Control

    /// Cancels the request; its result becomes ``AFError/explicitlyCancelled``.
    @discardableResult
    public func cancel() -> Self {
        let (cancelled, wasLoading, operation) = mutableState.withLock { state -> (Bool, Bool, LoadOperation?) in
            guard state.state.canTransitionTo(.cancelled) else { return (false, false, nil) }
            state.state = .cancelled
            state.error = .explicitlyCancelled
            state.pendingURLRequest = nil
            return (true, state.isLoading, state.loadOperation)
        }
        guard cancelled else { return self }
        operation?.cancel()
        eventMonitor?.performEvent { $0.requestDidCancel(self) }
        // A load in flight reports its end itself; otherwise there is nothing to wait for.
        if !wasLoading { underlyingQueue.async { self.finish() } }
        return self
    }

    /// Stops the request from starting (a transfer already under way continues).
    @discardableResult
    public func suspend() -> Self {
        let suspended = mutableState.withLock { state -> Bool in
            guard state.state.canTransitionTo(.suspended) else { return false }
            state.state = .suspended
            return true
        }
        if suspended { eventMonitor?.performEvent { $0.requestDidSuspend(self) } }
        return self
    }

    /// Starts the request, or lets a suspended one start.
    @discardableResult
    public func resume() -> Self {
        let (resumed, pending) = mutableState.withLock { state -> (Bool, URLRequest?) in
            guard state.state.canTransitionTo(.resumed) else { return (false, nil) }
            state.state = .resumed
            defer { state.pendingURLRequest = nil }
            return (true, state.pendingURLRequest)
        }
        guard resumed else { return self }
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
        self.error = error
        eventMonitor?.performEvent { $0.request(self, didFailToCreateURLRequestWithError: error) }
        callCURLHandlers()
        retryOrFinish(error: error)
    }

    func didAdaptInitialRequest(_ initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        mutableState.withLock { $0.requests.append(adaptedRequest) }
        eventMonitor?.performEvent { $0.request(self, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    func didFailToAdaptURLRequest(_ request: URLRequest, withError error: AFError) {
        self.error = error
        eventMonitor?.performEvent { $0.request(self, didFailToAdaptURLRequest: request, withError: error) }
        callCURLHandlers()
        retryOrFinish(error: error)
    }

    /// The final `URLRequest` is ready: load it now if resumed, else when resumed.
    func didCreateURLRequest(_ urlRequest: URLRequest) {
        eventMonitor?.performEvent { $0.request(self, didCreateURLRequest: urlRequest) }
        callCURLHandlers()
        let (startNow, cancelled) = mutableState.withLock { state -> (Bool, Bool) in
            switch state.state {
            case .resumed: return (true, false)
            case .cancelled: return (false, true)
            default:
                state.pendingURLRequest = urlRequest
                return (false, false)
            }
        }
        if startNow { startLoading(urlRequest) }
        if cancelled { finish() }
    }

    private func startLoading(_ urlRequest: URLRequest) {
        mutableState.withLock { $0.isLoading = true }
        // The load reports on an event loop; the request's own work (validators, user code) moves to
        // its queue from there: the one hop between the wire and the serializers.
        let operation = session.loader.load(urlRequest, options: loadOptions()) { result in
            self.underlyingQueue.async { self.didCompleteLoad(result) }
        }
        let cancelledMeanwhile = mutableState.withLock { state -> Bool in
            if state.isLoading { state.loadOperation = operation }
            return state.state == .cancelled
        }
        if cancelledMeanwhile { operation.cancel() }
    }

    private func didCompleteLoad(_ result: LoadResult) {
        var error = mutableState.withLock { state -> AFError? in
            state.isLoading = false
            state.loadOperation = nil
            state.response = result.response
            state.data = result.data
            state.fileURL = result.fileURL
            if let metrics = result.metrics { state.allMetrics.append(metrics) }
            if state.error == nil, let failure = result.error { state.error = .sessionTaskFailed(error: failure) }
            return state.error
        }
        if result.error == nil { completeUnknownDownloadProgress() }
        if error == nil {
            error = didFinishLoad(result)
            if let error { self.error = error }
        } else {
            didAbandonLoad(result)
        }
        if let metrics = result.metrics { eventMonitor?.performEvent { $0.request(self, didGatherMetrics: metrics) } }
        eventMonitor?.performEvent { [error] in $0.request(self, didCompleteWith: error) }
        guard error == nil else { return retryOrFinish(error: error) }
        // Validators may set the error.
        mutableState.withLock { $0.validators }.forEach { $0() }
        retryOrFinish(error: self.error)
    }

    /// Asks the retriers, unless there is no error or the request was cancelled.
    func retryOrFinish(error: AFError?) {
        guard let error, !isCancelled, !error.isExplicitlyCancelledError else { return finish() }
        session.retryResult(for: self, dueTo: error) { result in
            switch result {
            case .retry, .retryWithDelay:
                self.prepareForRetry()
                self.eventMonitor?.performEvent { $0.requestIsRetrying(self) }
                self.session.retryRequest(self, withDelay: result.delay ?? 0)
            case .doNotRetry:
                self.finish()
            case .doNotRetryWithError(let retryError):
                self.error = AFError.requestRetryFailed(retryError: retryError, originalError: error)
                self.finish()
            }
        }
    }

    /// Clears the last attempt's outcome before the next one (a download also drops its file).
    func prepareForRetry() {
        mutableState.withLock { state in
            state.retryCount += 1
            state.error = nil
            state.response = nil
            state.data = nil
            state.fileURL = nil
        }
    }

    /// Ends the request: runs the response serializers, tells the monitors and the session.
    func finish() {
        let alreadyFinishing = mutableState.withLock { state -> Bool in
            defer { state.isFinishing = true }
            return state.isFinishing
        }
        guard !alreadyFinishing else { return }
        processNextResponseSerializer()
        eventMonitor?.performEvent { $0.requestDidFinish(self) }
        session.requestDidFinish(self)
    }

    // MARK: Response serializers

    /// What a serializer needs of the finished request, read under one lock.
    struct Outcome {
        let request: URLRequest?
        let response: HTTPURLResponse?
        let data: Data?
        let fileURL: URL?
        let metrics: TaskMetrics?
        let error: AFError?
    }

    var outcome: Outcome {
        mutableState.withLock { state in
            Outcome(
                request: state.requests.last, response: state.response, data: state.data, fileURL: state.fileURL,
                metrics: state.allMetrics.last, error: state.error)
        }
    }

    /// Runs one validation on the outcome, unless the request has already failed or has no response;
    /// a failure becomes the request's error. Returns what was checked, for the event monitors.
    func applyValidation(
        _ check: (Outcome, HTTPURLResponse) -> ValidationResult
    )
        -> (outcome: Outcome, response: HTTPURLResponse, result: ValidationResult)?
    {
        let outcome = self.outcome
        guard outcome.error == nil, let response = outcome.response else { return nil }
        let result = check(outcome, response)
        if case .failure(let failure) = result {
            error = failure.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: failure)))
        }
        return (outcome, response, result)
    }

    /// Runs a serializer and times it; an error that is not an ``AFError`` becomes
    /// `.responseSerializationFailed(.customSerializationFailed)`, as in Alamofire.
    func serializeTimed<Value>(_ serialize: () throws -> Value) -> (result: Result<Value, AFError>, duration: TimeInterval) {
        let start = ProcessInfo.processInfo.systemUptime
        let result: Result<Value, AFError>
        do {
            result = .success(try serialize())
        } catch {
            result = .failure(error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        return (result, ProcessInfo.processInfo.systemUptime - start)
    }

    /// Adds a serializer; it runs when the request has finished (at once if it has), and resumes
    /// the request if the session starts requests immediately.
    func appendResponseSerializer(_ serializer: @escaping @Sendable () -> Void) {
        let (processNow, resumeNow) = mutableState.withLock { state -> (Bool, Bool) in
            state.responseSerializers.append(serializer)
            if state.state == .finished { state.state = .resumed }
            let processNow = state.responseSerializerProcessingFinished
            if processNow { state.responseSerializerProcessingFinished = false }
            return (processNow, state.state.canTransitionTo(.resumed) && state.state == .initialized)
        }
        if processNow { underlyingQueue.async { self.processNextResponseSerializer() } }
        if resumeNow, session.startRequestsImmediately { resume() }
    }

    /// Runs `completion` on `queue`: inline when that is the serialization queue, where completions
    /// are already being delivered (as for the async APIs), else dispatched to it.
    func deliver(on queue: DispatchQueue, _ completion: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        if queue === serializationQueue { return completion }
        return { queue.async(execute: completion) }
    }

    /// Called by a serializer when it is done; `completion` is the call to the user's handler.
    func responseSerializerDidComplete(completion: @escaping @Sendable () -> Void) {
        mutableState.withLock { $0.responseSerializerCompletions.append(completion) }
        processNextResponseSerializer()
    }

    /// Runs the next serializer, or, when none is left, marks processing finished and calls the
    /// completions. Both are decided under one lock: a serializer appended from another thread
    /// either is run here or finds processing finished and starts it again; it is never dropped.
    private func processNextResponseSerializer() {
        enum Step {
            case run(@Sendable () -> Void)
            case complete([@Sendable () -> Void])
        }
        let step = mutableState.withLock { state -> Step in
            let index = state.responseSerializerCompletions.count
            if index < state.responseSerializers.count { return .run(state.responseSerializers[index]) }
            let completions = state.responseSerializerCompletions
            state.responseSerializers.removeAll()
            state.responseSerializerCompletions.removeAll()
            if state.state.canTransitionTo(.finished) { state.state = .finished }
            state.responseSerializerProcessingFinished = true
            return .complete(completions)
        }
        switch step {
        case .run(let serializer): serializationQueue.async { serializer() }
        case .complete(let completions): completions.forEach { $0() }
        }
    }

    // MARK: cURL

    /// Calls `handler` on `queue` with the request as a cURL command, once the request exists.
    @discardableResult
    public func cURLDescription(on queue: DispatchQueue = .main, calling handler: @escaping @Sendable (String) -> Void) -> Self {
        let hasRequest = mutableState.withLock { state -> Bool in
            if state.requests.isEmpty && state.error == nil {
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

extension UUID {
    /// A version 4 UUID from the system's random source. Foundation's `UUID()` opens, reads and
    /// closes `/dev/urandom` on Linux each time: three system calls per request.
    static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // RFC 4122 variant
        return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { bytes in
            UUID(uuid: bytes.load(as: uuid_t.self))
        }
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
