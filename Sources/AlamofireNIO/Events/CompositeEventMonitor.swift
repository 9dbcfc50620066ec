import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// An `EventMonitor` which can contain multiple `EventMonitor`s and calls their methods on their queues.
///
/// Each event goes straight to each monitor's queue from the moment that raises it (Alamofire hops
/// through ``queue`` first; events of one request are raised in order, so the monitors see them in
/// order without it). Events raised while a monitor's earlier ones still wait for its queue join
/// them, so a burst (a request's creation, its response) wakes the queue once, not once per event.
/// Alamofire's own ``AlamofireNotifications`` is only told of the events it posts, and posts them at
/// once, so a session with no other monitor pays nothing for the rest and no thread hop for those.
public final class CompositeEventMonitor: EventMonitor {
    /// The queue the composite was created with. Events do not pass through it: each monitor gets them on its own
    /// ``EventMonitor/queue``.
    public let queue: DispatchQueue
    /// Underlying `EventMonitor`s performed by the instance.
    public let monitors: [any EventMonitor]
    private let notifications: [AlamofireNotifications]
    private let others: [EventDelivery]
    /// The monitors told when a request starts and ends; usually none.
    private let starters: [any RequestLifetimeMonitor]

    init(queue: DispatchQueue = DispatchQueue(label: "org.alamofire.compositeEventMonitor"), monitors: [any EventMonitor]) {
        self.queue = queue
        self.monitors = monitors
        self.notifications = monitors.compactMap { $0 as? AlamofireNotifications }
        self.others = monitors.filter { !($0 is AlamofireNotifications) }.map(EventDelivery.init)
        self.starters = monitors.compactMap { $0 as? any RequestLifetimeMonitor }
    }

    private init(
        queue: DispatchQueue, monitors: [any EventMonitor], notifications: [AlamofireNotifications], others: [EventDelivery],
        starters: [any RequestLifetimeMonitor]
    ) {
        self.queue = queue
        self.monitors = monitors
        self.notifications = notifications
        self.others = others
        self.starters = starters
    }

    /// Whether any monitor is a ``RequestLifetimeMonitor``.
    var hasLifetimeMonitors: Bool { !starters.isEmpty }

    /// Tells the ``RequestLifetimeMonitor``s, on this thread, that `request` is starting.
    func requestWillStart(_ request: Request) {
        for starter in starters { starter.requestWillStart(request) }
    }

    /// Tells the ``RequestLifetimeMonitor``s, each on its queue and after the events already raised
    /// for it, that `request` has ended.
    func requestDidEnd(_ request: Request) {
        for delivery in others where delivery.monitor is any RequestLifetimeMonitor {
            delivery.enqueue { ($0 as? any RequestLifetimeMonitor)?.requestDidEnd(request) }
        }
    }

    /// A composite that also calls `monitor`, after these. The monitors it shares with this one keep
    /// their deliveries, so their events stay in the order they were raised, whichever of the two
    /// composites raised them.
    func adding(_ monitor: any EventMonitor) -> CompositeEventMonitor {
        let starters = starters + [monitor as? any RequestLifetimeMonitor].compactMap { $0 }
        guard let added = monitor as? AlamofireNotifications else {
            return CompositeEventMonitor(
                queue: queue, monitors: monitors + [monitor], notifications: notifications, others: others + [EventDelivery(monitor)],
                starters: starters)
        }
        return CompositeEventMonitor(
            queue: queue, monitors: monitors + [monitor], notifications: notifications + [added], others: others, starters: starters)
    }

    /// Whether any monitor would hear `event`s that post no notification.
    var isEmpty: Bool { others.isEmpty }

    /// Runs `event`, which calls `kind`, for each monitor on its queue, unless the monitor's type is
    /// known to leave `kind` to the empty default (see ``MonitorEvent``); ``AlamofireNotifications``
    /// instead posts `notification` for `request`, when the event has one.
    func performEvent(
        _ kind: MonitorEvent, posting notification: Notification.Name? = nil, for request: Request? = nil,
        _ event: @escaping @Sendable (any EventMonitor) -> Void
    ) {
        if let notification, let request {
            for monitor in notifications { monitor.post(notification, for: request) }
        }
        for monitor in others { monitor.deliver(kind, event) }
    }

    /// Whether any monitor but ``AlamofireNotifications`` may implement `kind`: when none does, the
    /// event need not be made.
    func hears(_ kind: MonitorEvent) -> Bool {
        others.contains { $0.hears(kind) }
    }

    // MARK: URLSession events

    /// Called when the session becomes invalid: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let error = UncheckedSendable(error)
        performEvent(.didBecomeInvalid) { $0.urlSession(session, didBecomeInvalidWithError: error.value) }
    }

    /// Called when a task receives an authentication challenge: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge) {
        let challenge = UncheckedSendable(challenge)
        performEvent(.taskDidReceiveChallenge) { $0.urlSession(session, task: task, didReceive: challenge.value) }
    }

    /// Called when a task has sent body data: forwards the event to every monitor.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        performEvent(.taskDidSendBodyData) {
            $0.urlSession(
                session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend)
        }
    }

    /// Called when a task needs a new body stream: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) {
        performEvent(.taskNeedsNewBodyStream) { $0.urlSession(session, taskNeedsNewBodyStream: task) }
    }

    /// Called when a task is about to follow an HTTP redirection: forwards the event to every monitor.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
    ) {
        performEvent(.taskWillPerformHTTPRedirection) {
            $0.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request)
        }
    }

    /// Called when a task has finished collecting its metrics: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: TaskMetrics) {
        performEvent(.taskDidFinishCollectingMetrics) { $0.urlSession(session, task: task, didFinishCollecting: metrics) }
    }

    /// Called when a task completes, with or without an error: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let error = UncheckedSendable(error)
        performEvent(.taskDidComplete) { $0.urlSession(session, task: task, didCompleteWithError: error.value) }
    }

    /// Called when a task waits for connectivity: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        performEvent(.taskIsWaitingForConnectivity) { $0.urlSession(session, taskIsWaitingForConnectivity: task) }
    }

    /// Called when a data task receives its response: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        performEvent(.dataTaskDidReceiveResponse) { $0.urlSession(session, dataTask: dataTask, didReceive: response) }
    }

    /// Called when a data task receives data: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        performEvent(.dataTaskDidReceiveData) { $0.urlSession(session, dataTask: dataTask, didReceive: data) }
    }

    /// Called when a data task is about to cache its response: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse) {
        performEvent(.dataTaskWillCacheResponse) { $0.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse) }
    }

    /// Called when a download task resumes from an offset: forwards the event to every monitor.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64
    ) {
        performEvent(.downloadTaskDidResumeAtOffset) {
            $0.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
        }
    }

    /// Called when a download task has written data: forwards the event to every monitor.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        performEvent(.downloadTaskDidWriteData) {
            $0.urlSession(
                session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
                totalBytesExpectedToWrite: totalBytesExpectedToWrite)
        }
    }

    /// Called when a download task has finished downloading to a temporary file: forwards the event to every monitor.
    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        performEvent(.downloadTaskDidFinishDownloading) {
            $0.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        }
    }

    // MARK: Request events

    /// Called when a request's initial `URLRequest` has been created, before any adaptation: forwards the event to every
    /// monitor.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        performEvent(.requestDidCreateInitialURLRequest) { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }

    /// Called when creating a request's `URLRequest` fails: forwards the event to every monitor.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        performEvent(.requestDidFailToCreateURLRequest) { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }

    /// Called when a `RequestAdapter` has adapted a request's initial `URLRequest`: forwards the event to every monitor.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        performEvent(.requestDidAdaptInitialRequest) { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    /// Called when a `RequestAdapter` fails to adapt a request's initial `URLRequest`: forwards the event to every monitor.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        performEvent(.requestDidFailToAdaptURLRequest) { $0.request(request, didFailToAdaptURLRequest: initialRequest, withError: error) }
    }

    /// Called when the final `URLRequest` of a request has been created: forwards the event to every monitor.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        performEvent(.requestDidCreateURLRequest) { $0.request(request, didCreateURLRequest: urlRequest) }
    }

    /// Called when the task of a request has been created: forwards the event to every monitor.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        performEvent(.requestDidCreateTask) { $0.request(request, didCreateTask: task) }
    }

    /// Called when a request receives its task's metrics: forwards the event to every monitor.
    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) {
        performEvent(.requestDidGatherMetrics) { $0.request(request, didGatherMetrics: metrics) }
    }

    /// Called when a request's task fails early with an error of AlamofireNIO's own, such as failed pinning: forwards the
    /// event to every monitor.
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        performEvent(.requestDidFailTaskEarly) { $0.request(request, didFailTask: task, earlyWithError: error) }
    }

    /// Called when a request's task completes, possibly with an error (once per attempt): forwards the event to every
    /// monitor.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        performEvent(.requestDidCompleteTask, posting: Request.didCompleteTaskNotification, for: request) {
            $0.request(request, didCompleteTask: task, with: error)
        }
    }

    /// Called when a request is about to be retried: forwards the event to every monitor.
    public func requestIsRetrying(_ request: Request) {
        performEvent(.requestIsRetrying) { $0.requestIsRetrying(request) }
    }

    /// Called when a request finishes and its response serializers are about to run: forwards the event to every monitor.
    public func requestDidFinish(_ request: Request) {
        performEvent(.requestDidFinish, posting: Request.didFinishNotification, for: request) { $0.requestDidFinish(request) }
    }

    /// Called when `resume()` is called on a request: forwards the event to every monitor.
    public func requestDidResume(_ request: Request) {
        performEvent(.requestDidResume, posting: Request.didResumeNotification, for: request) { $0.requestDidResume(request) }
    }

    /// Called when a request's task is resumed: forwards the event to every monitor.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        performEvent(.requestDidResumeTask, posting: Request.didResumeTaskNotification, for: request) {
            $0.request(request, didResumeTask: task)
        }
    }

    /// Called when `suspend()` is called on a request: forwards the event to every monitor.
    public func requestDidSuspend(_ request: Request) {
        performEvent(.requestDidSuspend, posting: Request.didSuspendNotification, for: request) { $0.requestDidSuspend(request) }
    }

    /// Called when a request's task is suspended: forwards the event to every monitor.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        performEvent(.requestDidSuspendTask, posting: Request.didSuspendTaskNotification, for: request) {
            $0.request(request, didSuspendTask: task)
        }
    }

    /// Called when `cancel()` is called on a request: forwards the event to every monitor.
    public func requestDidCancel(_ request: Request) {
        performEvent(.requestDidCancel, posting: Request.didCancelNotification, for: request) { $0.requestDidCancel(request) }
    }

    /// Called when a request's task is cancelled: forwards the event to every monitor.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        performEvent(.requestDidCancelTask, posting: Request.didCancelTaskNotification, for: request) {
            $0.request(request, didCancelTask: task)
        }
    }

    /// Called when a ``DataRequest`` runs a validation: forwards the event to every monitor.
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {
        let result = UncheckedSendable(result)
        performEvent(.dataRequestDidValidate) {
            $0.request(request, didValidateRequest: urlRequest, response: response, data: data, withResult: result.value)
        }
    }

    /// Called when a ``DataRequest`` makes its `DataResponse<Data?, AFError>` without a serializer: forwards the event to
    /// every monitor.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        performEvent(.dataRequestDidParseData) { $0.request(request, didParseResponse: response) }
    }

    /// Called when a ``DataRequest`` has serialized its response into a `DataResponse`: forwards the event to every
    /// monitor.
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        performEvent(.dataRequestDidParseResponse) { $0.request(request, didParseResponse: response) }
    }

    /// Called when a ``DataStreamRequest`` runs a validation: forwards the event to every monitor.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {
        let result = UncheckedSendable(result)
        performEvent(.streamRequestDidValidate) {
            $0.request(request, didValidateRequest: urlRequest, response: response, withResult: result.value)
        }
    }

    /// Called when a ``DataStreamRequest``'s serializer has turned streamed data into a value or an error: forwards the
    /// event to every monitor.
    public func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        performEvent(.streamRequestDidParseStream) { $0.request(request, didParseStream: result) }
    }

    /// Called when an ``UploadRequest`` has created its `Uploadable`: forwards the event to every monitor.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        performEvent(.uploadRequestDidCreateUploadable) { $0.request(request, didCreateUploadable: uploadable) }
    }

    /// Called when an ``UploadRequest`` fails to create its `Uploadable`: forwards the event to every monitor.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        performEvent(.uploadRequestDidFailToCreateUploadable) { $0.request(request, didFailToCreateUploadableWithError: error) }
    }

    /// Called when an ``UploadRequest`` provides the `InputStream` it uploads: forwards the event to every monitor.
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        let stream = UncheckedSendable(stream)
        performEvent(.uploadRequestDidProvideInputStream) { $0.request(request, didProvideInputStream: stream.value) }
    }

    /// Called when a ``DownloadRequest``'s downloaded file has been moved, or failed to move: forwards the event to every
    /// monitor.
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        performEvent(.downloadRequestDidFinishDownloading) { $0.request(request, didFinishDownloadingUsing: task, with: result) }
    }

    /// Called when a ``DownloadRequest``'s destination closure has produced the file's final URL: forwards the event to
    /// every monitor.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        performEvent(.downloadRequestDidCreateDestinationURL) { $0.request(request, didCreateDestinationURL: url) }
    }

    /// Called when a ``DownloadRequest`` runs a validation: forwards the event to every monitor.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
        withResult result: Request.ValidationResult
    ) {
        let result = UncheckedSendable(result)
        performEvent(.downloadRequestDidValidate) {
            $0.request(request, didValidateRequest: urlRequest, response: response, fileURL: fileURL, withResult: result.value)
        }
    }

    /// Called when a ``DownloadRequest`` makes its `DownloadResponse<URL?, AFError>` without a serializer: forwards the
    /// event to every monitor.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        performEvent(.downloadRequestDidParseURL) { $0.request(request, didParseResponse: response) }
    }

    /// Called when a ``DownloadRequest`` has serialized its response into a `DownloadResponse`: forwards the event to every
    /// monitor.
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
        performEvent(.downloadRequestDidParseResponse) { $0.request(request, didParseResponse: response) }
    }
}

/// Delivers one monitor's events on its queue, in the order they were raised. An event raised while
/// earlier ones wait for the queue joins them; each dispatch runs the events waiting when it
/// starts, and dispatches again if more came meanwhile, so other work on the queue still gets its turn.
private final class EventDelivery: Sendable {
    typealias Event = @Sendable (any EventMonitor) -> Void

    let monitor: any EventMonitor
    private let waiting = Mutex<(events: [Event], dispatched: Bool)>(([], false))
    /// The events the monitor's type leaves to the empty defaults, as last read (``MonitorEvent``), and
    /// ``DefaultedMonitorEvents/generation`` when they were read.
    private let defaulted: Atomic<UInt64>
    private let defaultedGeneration: Atomic<UInt64>

    init(_ monitor: any EventMonitor) {
        self.monitor = monitor
        self.defaultedGeneration = Atomic(DefaultedMonitorEvents.generation)
        self.defaulted = Atomic(DefaultedMonitorEvents.events(of: monitor))
    }

    /// Whether the monitor may implement `kind`.
    func hears(_ kind: MonitorEvent) -> Bool {
        defaulted.load(ordering: .relaxed) & kind.bit == 0
    }

    func deliver(_ kind: MonitorEvent, _ event: @escaping Event) {
        guard hears(kind) else { return }
        enqueue(event)
    }

    /// Queues `event` behind the ones raised before it, whatever the monitor implements.
    func enqueue(_ event: @escaping Event) {
        let dispatch = waiting.withLock { waiting in
            waiting.events.append(event)
            defer { waiting.dispatched = true }
            return !waiting.dispatched
        }
        if dispatch { monitor.queue.async { self.runWaitingEvents() } }
    }

    private func runWaitingEvents() {
        let events = waiting.withLock { waiting in
            var events: [Event] = []
            swap(&events, &waiting.events)
            return events
        }
        for event in events { event(monitor) }
        // The defaults these events ran have recorded themselves.
        let generation = DefaultedMonitorEvents.generation
        if generation != defaultedGeneration.load(ordering: .relaxed) {
            defaultedGeneration.store(generation, ordering: .relaxed)
            defaulted.store(DefaultedMonitorEvents.events(of: monitor), ordering: .relaxed)
        }
        let more = waiting.withLock { waiting in
            waiting.dispatched = !waiting.events.isEmpty
            return waiting.dispatched
        }
        if more { monitor.queue.async { self.runWaitingEvents() } }
    }
}
