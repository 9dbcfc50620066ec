import AFCollections
import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Logging
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `Request` is the common superclass of all Alamofire request types and provides common state, delegate, and callback
/// handling.
///
/// A request is made by a ``Session`` and, by default, does nothing until it is resumed (the first
/// response handler resumes it when the session starts requests immediately). Resuming sets it
/// up: the session builds its `URLRequest` (the convertible, then the adapters, the session's
/// first), and a loading task is made for it, which follows the request's state (resumed,
/// suspended, cancelled). The session's delegate hands the task's events to the request: response,
/// data or file, metrics, completion. When the task completes, validators run, then the retriers
/// may start it over; otherwise the response serializers run one after another on the
/// serialization queue, and their completion handlers are called in order, each on its own queue,
/// once all are done. A serializer that fails asks the retriers too. A serializer added later runs
/// at once.
///
/// The rules live in one `RequestStateMachine` value; the request keeps it, with what the
/// attempts produced, behind one `Mutex`, and performs what the machine returns after releasing
/// the lock. Event monitors are told at the moments Alamofire tells them, and user code runs on
/// the queues the user chose, never under the lock.
public class Request: @unchecked Sendable {
    /// State of the `Request`, with managed transitions between states set when calling `resume()`, `suspend()`, or
    /// `cancel()` on the `Request`.
    public enum State: Sendable {
        /// Initial state of the `Request`.
        case initialized
        /// `State` set when `resume()` is called. Any tasks created for the `Request` will have `resume()` called on
        /// them in this state.
        case resumed
        /// `State` set when `suspend()` is called. Any tasks created for the `Request` will have `suspend()` called on
        /// them in this state.
        case suspended
        /// `State` set when `cancel()` is called. Any tasks created for the `Request` will have `cancel()` called on
        /// them. Unlike `resumed` or `suspended`, once in the `cancelled` state, the `Request` can no longer transition
        /// to any other state.
        case cancelled
        /// `State` set when all response serialization completion closures have been cleared on the `Request` and
        /// enqueued on their respective queues.
        case finished

        /// Determines whether `self` can be transitioned to the provided `State`.
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

    /// Type indicating how a `DataRequest` should proceed after receiving an `HTTPURLResponse`.
    public enum ResponseDisposition: Sendable {
        /// Allow the request to continue normally.
        case allow
        /// Cancel the request, similar to calling `cancel()`.
        case cancel
    }

    /// Used to represent whether a validation succeeded or failed.
    public typealias ValidationResult = Result<Void, any Error>

    /// What an `onHTTPResponse` handler is given: the response, and the completion it must call with its decision.
    typealias HTTPResponseHandler = @Sendable (HTTPURLResponse, @escaping @Sendable (ResponseDisposition) -> Void) -> Void

    /// Closure type executed when monitoring the upload or download progress of a request.
    public typealias ProgressHandler = @Sendable (_ progress: Progress) -> Void

    struct MutableState {
        var machine = RequestStateMachine<LoadingTask>()
        var interceptor: (any RequestInterceptor)?
        var eventMonitor: CompositeEventMonitor?
        var redirectHandler: (any RedirectHandler)?
        var cachedResponseHandler: (any CachedResponseHandler)?
        var credential: URLCredential?
        /// The client certificate set by `authenticate(with: SecIdentity)`.
        var clientIdentity: SecIdentity?
        var requests: InlineFirstList<URLRequest> = []
        /// The loading tasks made, one per attempt, and the `URLSessionTask` stand-ins made for them so far.
        var tasks: InlineFirstList<LoadingTask> = []
        var sessionTasks: [ObjectIdentifier: URLSessionTask] = [:]
        var allMetrics: InlineFirstList<TaskMetrics> = []
        /// The last attempt's HTTP response, made into Foundation's type when first read.
        var response: ReceivedResponse?
        var data: Data?
        /// Where a download's body was written (and then moved to).
        var fileURL: URL?
        /// The resume data a download's cancel produced.
        var resumeData: Data?
        var uploadProgressState = TransferProgress()
        var downloadProgressState = TransferProgress()
        var validators: [@Sendable () -> Void] = []
        var cURLHandler: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
        var urlRequestHandler: (queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)?
        var urlSessionTaskHandler: (queue: DispatchQueue, handler: @Sendable (URLSessionTask) -> Void)?
        /// A data or stream request's `onHTTPResponse` handler.
        var httpResponseHandler: (queue: DispatchQueue, handler: HTTPResponseHandler)?
        /// Called once serialization has ended (the async streams finish there).
        var finishHandlers: [@Sendable () -> Void] = []
        /// Whether the request has cleaned up after its serializers (its finish handlers have run).
        var isCleanedUp = false
        /// Work decided under the lock and waiting to be performed outside it, in order (see
        /// ``Request/decideThenPerform(_:)``), and whether a thread is performing it.
        var outbox: [@Sendable () -> Void] = []
        var isPerformingOutbox = false
        /// The logger given by ``Request/logging(to:)``.
        var ownLogger: Logger?
        /// The `userInfo` of the request's notifications while it is under way
        /// (see ``Request/notificationUserInfo(finishing:)``).
        var notificationUserInfo: [AnyHashable: Any]?
        /// Whether the ``RequestLifetimeMonitor``s have been told the request starts, and that it ended.
        var startAnnounced = false
        var endAnnounced = false
    }

    /// `UUID` providing a unique identifier for the `Request`, used in the `Hashable` and `Equatable` conformances.
    public let id: UUID
    /// The serial queue for all internal async actions.
    public let underlyingQueue: DispatchQueue
    /// The queue used for all serialization actions. By default it's a serial queue that targets `underlyingQueue`.
    public let serializationQueue: DispatchQueue
    /// Whether the instance should call `resume()` automatically once the first response handler has been added.
    /// Overrides the same setting from `Session`, if set. `nil` by default (defers to the `Session`).
    public let shouldAutomaticallyResume: Bool?
    /// The session that made the request, held weakly as Alamofire holds its delegate: a request
    /// does not keep its session alive, and a session that goes away finishes its requests.
    weak let session: Session?
    let mutableState: Mutex<MutableState>
    /// Whether any of the request's monitors is a ``RequestLifetimeMonitor``: read without the lock,
    /// so a request with none (the usual case) pays nothing to start and end.
    let hasLifetimeMonitors: Atomic<Bool>

    /// Whether the session's logger is the no-op one: a request without a logger of its own then
    /// logs nothing, and looks no further.
    let sessionLogsNothing: Bool
    /// Whether ``logging(to:)`` gave the request a logger of its own (in `MutableState.ownLogger`):
    /// read without the lock, so a request without one pays nothing for the choice.
    let hasOwnLogger = Atomic(false)

    /// `Progress` of the upload of the body of the executed `URLRequest`. Reset to `0` if the `Request` is retried.
    public let uploadProgress: Progress
    /// `Progress` of the download of any response data. Reset to `0` if the `Request` is retried.
    public let downloadProgress: Progress

    init(
        id: UUID = .unique(), underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?, session: Session
    ) {
        self.id = id
        self.underlyingQueue = underlyingQueue
        self.serializationQueue = serializationQueue
        self.shouldAutomaticallyResume = shouldAutomaticallyResume
        self.session = session
        self.sessionLogsNothing = session.logsNothing
        // What `Progress(totalUnitCount: 0)` makes, twice, with the thread's current progress (a
        // thread-dictionary lookup on Linux) asked for once: the first becomes its implicit child.
        let current = Progress.current()
        (uploadProgress, downloadProgress) = (Progress(parent: current), Progress(parent: current))
        uploadProgress.totalUnitCount = 0
        downloadProgress.totalUnitCount = 0
        var state = MutableState()
        state.interceptor = interceptor
        state.eventMonitor = eventMonitor
        self.mutableState = Mutex(state)
        self.hasLifetimeMonitors = Atomic(eventMonitor?.hasLifetimeMonitors ?? false)
    }

    // MARK: What each kind of request does differently

    /// Builds the initial `URLRequest`; each kind of request knows how.
    func makeInitialURLRequest() throws -> URLRequest {
        throw AFError.createURLRequestFailed(error: URLError(.unsupportedURL))
    }

    /// Readies what the task needs beyond its `URLRequest` (an upload's body), once per attempt;
    /// returns the error that ends the attempt, if any.
    func prepareTask() -> AFError? { nil }

    /// A kind of request's word on its task as it first starts (an upload of a stream provides it).
    func willStartLoadingTask(_ task: LoadingTask) {}

    /// Where the body comes from when it is not the `URLRequest`'s `httpBody` (uploads).
    func loadingBody() -> RequestBody? { nil }

    /// Where the response body goes: memory, or a file for downloads.
    func loadingDestination() -> LoadingTask.Destination { .memory }

    /// The partial file a download's task continues, if any.
    func loadingResumption(for urlRequest: URLRequest) -> DownloadResumption? { nil }

    /// The `URLSessionTask` that stands for `task` (a data task unless the kind says otherwise).
    func makeSessionTask(for task: LoadingTask) -> URLSessionTask { LoadingDataTask(task, request: self) }

    /// The final response's head arrived: record it, and say whether the body may come (a data or
    /// stream request's `onHTTPResponse` handler decides, on its queue).
    func didReceiveResponse(_ response: ReceivedResponse, completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void) {
        guard response.isHTTP else { return completionHandler(.allow) }
        guard
            let handler = mutableState.withLock({ state in
                state.response = response
                return state.httpResponseHandler
            }), let httpResponse = response.httpURLResponse
        else { return completionHandler(.allow) }
        handler.queue.async {
            handler.handler(httpResponse) { disposition in
                guard disposition == .cancel else { return completionHandler(.allow) }
                self.mutableState.withLock { $0.machine.responseDispositionCancelled() }
                completionHandler(.cancel)
            }
        }
    }

    /// Sets the `onHTTPResponse` handler of a data or stream request.
    func setHTTPResponseHandler(on queue: DispatchQueue, _ handler: @escaping HTTPResponseHandler) {
        mutableState.withLock { $0.httpResponseHandler = (queue, handler) }
    }

    /// An `onHTTPResponse` handler that lets every response through once `handler` has seen it.
    static func allowing(_ handler: @escaping @Sendable (HTTPURLResponse) -> Void) -> HTTPResponseHandler {
        { response, completionHandler in
            handler(response)
            completionHandler(.allow)
        }
    }

    /// An `onHTTPResponse` handler whose decision comes from an async closure.
    static func awaiting(_ handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition) -> HTTPResponseHandler {
        { response, completionHandler in Task { completionHandler(await handler(response)) } }
    }

    /// An `onHTTPResponse` handler that lets every response through once an async closure has seen it.
    static func allowing(after handler: @escaping @Sendable (HTTPURLResponse) async -> Void) -> HTTPResponseHandler {
        { response, completionHandler in
            Task {
                await handler(response)
                completionHandler(.allow)
            }
        }
    }

    /// Body bytes arrived (all of a collected body at once, or one chunk of a streamed one).
    func didReceiveData(_ data: Data) {
        mutableState.withLock { state in
            if state.data == nil { state.data = data } else { state.data?.append(data) }
        }
    }

    /// Serialization has ended: the finish handlers run and the session lets the request go.
    func cleanup() {
        let handlers = mutableState.withLock { state in
            defer { state.finishHandlers.removeAll() }
            state.isCleanedUp = true
            state.notificationUserInfo = nil
            return state.finishHandlers
        }
        handlers.forEach { $0() }
        if hasLifetimeMonitors.load(ordering: .relaxed) { announceEnd() }
        session?.cleanup(after: self)
    }

    /// Tells the request's ``RequestLifetimeMonitor``s, once (again only after a retry), that it ended.
    private func announceEnd() {
        let lifetimeMonitors = mutableState.withLock { state -> CompositeEventMonitor? in
            guard !state.endAnnounced, let monitors = state.eventMonitor, monitors.hasLifetimeMonitors else { return nil }
            state.endAnnounced = true
            return monitors
        }
        lifetimeMonitors?.requestDidEnd(self)
    }

    /// Stops `task` for a `cancel()`; a download may first keep what it needs to resume.
    func cancelLoadingTask(_ task: LoadingTask) {
        task.cancel()
    }

    /// The load completed but the request had failed (it was cancelled meanwhile): a kind of
    /// request drops what the load left behind.
    func didAbandonLoad() {}

    /// Clears the last attempt's outcome before the next one.
    func prepareForRetry() {
        mutableState.withLock { state in
            // A retry after the end (a response serializer added later asked for it) ends again.
            state.endAnnounced = false
            state.response = nil
            state.data = nil
            state.fileURL = nil
            state.resumeData = nil
        }
        resetProgress()
    }

    // MARK: State

    /// `State` of the `Request`.
    public var state: State { mutableState.withLock { $0.machine.state } }
    /// Returns whether `state` is `.initialized`.
    public var isInitialized: Bool { state == .initialized }
    /// Returns whether `state` is `.resumed`.
    public var isResumed: Bool { state == .resumed }
    /// Returns whether `state` is `.suspended`.
    public var isSuspended: Bool { state == .suspended }
    /// Returns whether `state` is `.cancelled`.
    public var isCancelled: Bool { state == .cancelled }
    /// Returns whether `state` is `.finished`.
    public var isFinished: Bool { state == .finished }
    /// Whether the request has begun running its serializers (for this attempt).
    var hasBegunFinishing: Bool { mutableState.withLock { $0.machine.isFinishing } }

    /// `EventMonitor` used for event callbacks: the session's monitors, then any added with ``eventMonitor(_:)``.
    public var eventMonitor: (any EventMonitor)? { mutableState.withLock { $0.eventMonitor } }
    /// The `Request`'s interceptor, run after the session's.
    public var interceptor: (any RequestInterceptor)? { mutableState.withLock { $0.interceptor } }
    /// The `Request`'s delegate: its ``Session``.
    public var delegate: (any RequestDelegate)? { session }

    /// `RedirectHandler` set on the instance.
    public internal(set) var redirectHandler: (any RedirectHandler)? {
        get { mutableState.withLock { $0.redirectHandler } }
        set { mutableState.withLock { $0.redirectHandler = newValue } }
    }

    /// `CachedResponseHandler` set on the instance.
    public internal(set) var cachedResponseHandler: (any CachedResponseHandler)? {
        get { mutableState.withLock { $0.cachedResponseHandler } }
        set { mutableState.withLock { $0.cachedResponseHandler = newValue } }
    }

    /// The client certificate this request presents, set by `authenticate(with: SecIdentity)`; nil
    /// presents the session's, if any. (AlamofireNIO's own.)
    public var clientIdentity: SecIdentity? { mutableState.withLock { $0.clientIdentity } }

    /// `URLCredential` used for authentication challenges. Created by calling one of the `authenticate` methods.
    public internal(set) var credential: URLCredential? {
        get { mutableState.withLock { $0.credential } }
        set { mutableState.withLock { $0.credential = newValue } }
    }

    /// `ProgressHandler` called when `uploadProgress` is updated, on the provided `DispatchQueue`.
    public var uploadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.withLock { $0.uploadProgressState.handler }
    }

    /// `ProgressHandler` called when `downloadProgress` is updated, on the provided `DispatchQueue`.
    public var downloadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.withLock { $0.downloadProgressState.handler }
    }

    // MARK: What the attempts produced

    /// All `URLRequest`s created on behalf of the `Request`, including original and adapted requests.
    public var requests: [URLRequest] { mutableState.withLock { $0.requests.array } }
    /// First `URLRequest` created on behalf of the `Request`. May not be the first one actually executed.
    public var firstRequest: URLRequest? { mutableState.withLock { $0.requests.first } }
    /// Last `URLRequest` created on behalf of the `Request`.
    public var lastRequest: URLRequest? { mutableState.withLock { $0.requests.last } }
    /// Current `URLRequest` created on behalf of the `Request`.
    public var request: URLRequest? { lastRequest }
    /// `URLRequest`s from all of the `URLSessionTask`s executed on behalf of the `Request`. May be different from
    /// `requests` due to redirects.
    public var performedRequests: [URLRequest] { mutableState.withLock { $0.tasks.map(\.snapshot.currentRequest) } }

    /// `HTTPURLResponse` received from the server, if any. If the `Request` was retried, this is the response of the
    /// last `URLSessionTask`.
    public var response: HTTPURLResponse? { mutableState.withLock { $0.response }?.httpURLResponse }

    /// Whether a response has been received (without making Foundation's type for it).
    var hasReceivedResponse: Bool { mutableState.withLock { $0.response != nil } }

    /// Whether the retriers are asked at all; a kind of request whose consumer cannot take a second
    /// response says no once it has one.
    var mayBeRetried: Bool { true }

    /// The last response's header fields as received, repeated fields apart and in order (an
    /// `HTTPURLResponse` joins them): for integrations that hand responses on in other types.
    package var receivedHeaderFields: [(name: String, value: String)]? { mutableState.withLock { $0.response }?.headerFields }

    /// All `URLSessionTask`s created on behalf of the `Request`.
    public var tasks: [URLSessionTask] {
        let tasks = mutableState.withLock { $0.tasks }
        return tasks.map(sessionTask(for:))
    }
    /// First `URLSessionTask` created on behalf of the `Request`.
    public var firstTask: URLSessionTask? { mutableState.withLock { $0.tasks.first }.map(sessionTask(for:)) }
    /// Last `URLSessionTask` created on behalf of the `Request`.
    public var lastTask: URLSessionTask? { mutableState.withLock { $0.tasks.last }.map(sessionTask(for:)) }
    /// Current `URLSessionTask` created on behalf of the `Request`.
    public var task: URLSessionTask? { lastTask }

    /// All metrics gathered on behalf of the `Request`, one per task.
    public var allMetrics: [TaskMetrics] { mutableState.withLock { $0.allMetrics.array } }
    /// First metrics gathered on behalf of the `Request`.
    public var firstMetrics: TaskMetrics? { mutableState.withLock { $0.allMetrics.first } }
    /// Last metrics gathered on behalf of the `Request`.
    public var lastMetrics: TaskMetrics? { mutableState.withLock { $0.allMetrics.last } }
    /// Current metrics gathered on behalf of the `Request`.
    public var metrics: TaskMetrics? { lastMetrics }

    /// Number of times the `Request` has been retried.
    public var retryCount: Int { mutableState.withLock { $0.machine.retryCount } }
    /// `Error` returned from Alamofire internally, from the network request directly, or any validators executed.
    public var error: AFError? { mutableState.withLock { $0.machine.error } }

    /// The `URLSessionTask` standing for `task`, made the first time it is asked for.
    func sessionTask(for task: LoadingTask) -> URLSessionTask {
        if let made = mutableState.withLock({ $0.sessionTasks[ObjectIdentifier(task)] }) { return made }
        // Made outside the lock (a kind's override runs user-visible initialisers); the first one kept wins.
        let made = makeSessionTask(for: task)
        return mutableState.withLock { state in
            if let kept = state.sessionTasks[ObjectIdentifier(task)] { return kept }
            state.sessionTasks[ObjectIdentifier(task)] = made
            return made
        }
    }

    /// Decides under the lock, then performs what was decided outside it, in the order the decisions
    /// were made, whichever threads made them: a thread that finds another performing leaves its
    /// work to that one. So a `suspend()` racing a `resume()`, or a `cancel()` racing the task's
    /// creation, reaches the task and the monitors in the order the state machine saw them, and the
    /// work may call back into the request (a task failing at once) without deadlocking.
    ///
    /// A decision is one closure (nil for nothing to do) doing its steps in order: steps decided together
    /// run together whether in one closure or several, since later work is queued behind them. The
    /// outbox holds only work that arrived while another thread was performing; otherwise the
    /// deciding thread runs its closure straight away.
    func decideThenPerform(_ decide: (inout MutableState) -> (@Sendable () -> Void)?) {
        let decided = mutableState.withLock { state -> (@Sendable () -> Void)? in
            guard let work = decide(&state) else { return nil }
            // The outbox is empty whenever no thread is performing it.
            guard !state.isPerformingOutbox else {
                state.outbox.append(work)
                return nil
            }
            state.isPerformingOutbox = true
            return work
        }
        var next = decided
        while let work = next {
            work()
            next = mutableState.withLock { state -> (@Sendable () -> Void)? in
                guard !state.outbox.isEmpty else {
                    state.isPerformingOutbox = false
                    return nil
                }
                return state.outbox.removeFirst()
            }
        }
    }

    /// The monitors to tell of an event: nil when none would hear it (an event ``AlamofireNotifications``
    /// posts no notification for is heard only by the others), so callers skip building it.
    func monitor(posting notification: Notification.Name? = nil) -> CompositeEventMonitor? {
        guard let monitor = mutableState.withLock({ $0.eventMonitor }) else { return nil }
        return notification == nil && monitor.isEmpty ? nil : monitor
    }
}

extension Request: Equatable, Hashable {
    /// Whether both are the same request, by ``Request/id``.
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs.id == rhs.id }
    /// Hashes the request's ``Request/id``.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension Request: CustomStringConvertible {
    /// A textual representation of this instance, including the `HTTPMethod` and `URL` if the `URLRequest` has been
    /// created, as well as the response status code, if a response has been received.
    public var description: String {
        guard let request = performedRequests.last ?? lastRequest, let url = request.url, let method = request.httpMethod else {
            return "No request created yet."
        }
        let status = response.map { " (\($0.statusCode))" } ?? ""
        return "\(method) \(url.absoluteString)\(status)"
    }
}

/// Protocol abstraction for `Request`'s communication back to its ``Session``.
public protocol RequestDelegate: AnyObject, Sendable {
    /// `URLSessionConfiguration` used to create the underlying `URLSessionTask`s.
    var sessionConfiguration: URLSessionConfiguration { get }
    /// Determines whether the `Request` should automatically call `resume()` when adding the first response handler.
    var startImmediately: Bool { get }
    /// Starts setting up `request`: called by `resume()` the first time (with `.lazy` request setup).
    func readyToPerform(request: Request)
    /// Notifies the delegate the `Request` has reached a point where it needs cleanup.
    func cleanup(after request: Request)
    /// Asynchronously ask the delegate whether a `Request` will be retried.
    func retryResult(for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void)
    /// Asynchronously retry the `Request`.
    func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?)
}
