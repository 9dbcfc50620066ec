import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `Request` subclass which manages a WebSocket connection, as Alamofire's does on Apple platforms
/// with `URLSessionWebSocketTask`.
///
/// The handshake is a request like any other: its `URLRequest` is made and adapted by the
/// interceptors, sent with the session's headers, cookies and credentials, and its redirects and
/// challenges handled by the session; a refused handshake fails with
/// `AFError.sessionTaskFailed(URLError(.badServerResponse))` and asks the retriers. Once the server
/// switches protocols, every handler added with `streamMessageEvents`, `streamDecodableEvents` or
/// `streamSerializer` hears `.connected`, then each message (serialized on the serialization queue,
/// then handed to the handler on its queue, in order), `.disconnected` when the server closes or
/// ``close(sending:reason:)`` is answered, and `.completed` last.
///
/// Back-pressure: while more than 1 MiB (or one message of the maximum size, if larger) of
/// messages wait for handlers or async consumers, the connection reads nothing more from the socket.
///
/// - Note: Experimental in Alamofire (`@_spi(WebSocket)`); reachable here with
///   `@_spi(WebSocket) import AlamofireNIO`, on Linux too.
@_spi(WebSocket) public final class WebSocketRequest: Request, @unchecked Sendable {
    enum IncomingEvent: Sendable {
        case connected(protocol: String?)
        case receivedMessage(URLSessionWebSocketTask.Message)
        case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
        case completed(Completion)
    }

    /// An event of the WebSocket, as a handler gets it.
    public struct Event<Success: Sendable, Failure: Error>: Sendable {
        /// What happened.
        public enum Kind: Sendable {
            /// The server switched protocols, with the subprotocol it chose.
            case connected(protocol: String?)
            /// A message arrived (serialized).
            case receivedMessage(Success)
            /// A message could not be serialized.
            case serializerFailed(Failure)
            /// The server closed, or answered ``WebSocketRequest/close(sending:reason:)``.
            ///
            /// Not received when the request is cancelled without a code, or fails.
            case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
            /// The request completed: the last event.
            case completed(Completion)
        }

        weak var socket: WebSocketRequest?

        /// What happened.
        public let kind: Kind
        /// The message of a `.receivedMessage` event.
        public var message: Success? {
            guard case .receivedMessage(let message) = kind else { return nil }
            return message
        }

        init(socket: WebSocketRequest, kind: Kind) {
            self.socket = socket
            self.kind = kind
        }

        /// Closes the WebSocket with `closeCode` (see ``WebSocketRequest/close(sending:reason:)``).
        public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
            socket?.close(sending: closeCode, reason: reason)
        }

        /// Cancels the `WebSocketRequest`.
        public func cancel() {
            socket?.cancel()
        }

        /// Sends a ping (see ``WebSocketRequest/sendPing(respondingOn:onResponse:)``).
        @preconcurrency public func sendPing(
            respondingOn queue: DispatchQueue = .main, onResponse: @escaping @Sendable (PingResponse) -> Void
        ) {
            socket?.sendPing(respondingOn: queue, onResponse: onResponse)
        }
    }

    /// The state of the request when it completed.
    public struct Completion: Sendable {
        /// Last `URLRequest` issued by the instance.
        public let request: URLRequest?
        /// Last `HTTPURLResponse` received by the instance.
        public let response: HTTPURLResponse?
        /// Last `URLSessionTaskMetrics` produced for the instance.
        public let metrics: URLSessionTaskMetrics?
        /// `AFError` produced for the instance, if any.
        public let error: AFError?
    }

    /// How the WebSocket is opened and kept.
    public struct Configuration: Sendable {
        /// No subprotocol, 1 MiB messages, no automatic pings.
        public static var `default`: Self { Self() }

        /// Offers `protocol` as the subprotocol (`Sec-WebSocket-Protocol`).
        public static func `protocol`(_ protocol: String) -> Self {
            Self(protocol: `protocol`)
        }

        /// Accepts messages of up to `maximumMessageSize` bytes; a larger one fails the request.
        public static func maximumMessageSize(_ maximumMessageSize: Int) -> Self {
            Self(maximumMessageSize: maximumMessageSize)
        }

        /// Pings the server every `pingInterval` seconds once connected; a pong that does not come
        /// within the interval fails the request with `URLError(.timedOut)`.
        public static func pingInterval(_ pingInterval: TimeInterval) -> Self {
            Self(pingInterval: pingInterval)
        }

        /// The subprotocol offered, if any.
        public let `protocol`: String?
        /// The largest message accepted, in bytes.
        public let maximumMessageSize: Int
        /// The automatic ping interval, if any.
        public let pingInterval: TimeInterval?

        init(protocol: String? = nil, maximumMessageSize: Int = 1_048_576, pingInterval: TimeInterval? = nil) {
            self.protocol = `protocol`
            self.maximumMessageSize = maximumMessageSize
            self.pingInterval = pingInterval
        }
    }

    /// Response to a sent ping.
    public enum PingResponse: Sendable {
        /// The pong's timing.
        public struct Pong: Sendable {
            /// When the ping was sent.
            public let start: Date
            /// When the pong arrived.
            public let end: Date
            /// The round trip, in seconds.
            public let latency: TimeInterval
        }

        /// Received a pong with the associated state.
        case pong(Pong)
        /// Received an error.
        case error(any Error)
        /// Did not send the ping, the request is cancelled or suspended.
        case unsent
    }

    struct SocketState {
        var handlers: [@Sendable (IncomingEvent) -> Void] = []
        /// Sends made before the WebSocket opened, sent (in order) when it does; each completion is
        /// called on its queue (nil: where the send completes).
        var enqueuedSends:
            [(message: URLSessionWebSocketTask.Message, queue: DispatchQueue?, completion: @Sendable (Result<Void, any Error>) -> Void)] =
                []
        var isOpen = false
        /// Whether the request has cleaned up: a send made now fails at once.
        var hasEnded = false
        /// Counts automatic pings scheduled; a scheduled one that is not the latest does nothing.
        var pingGeneration = 0
        /// Message bytes handed to handlers and not yet handled, and the loading task waiting on them.
        var bufferedBytes = 0
        var demandWaiter: CheckedContinuation<Void, Never>?
        /// Run the next time the loading task waits (see `whenAwaitingDemand(_:)`).
        var demandObservers = DemandObservers()
    }

    /// The most message bytes handlers may have been handed without having handled them before the
    /// connection stops reading (1 MiB, or one message of the maximum size if larger).
    var maximumBufferedBytes: Int { max(1 << 20, configuration.maximumMessageSize) }

    let socketState = Mutex(SocketState())

    /// `URLRequestConvertible` value used to create `URLRequest`s for this instance.
    public let convertible: any URLRequestConvertible
    /// The instance's configuration.
    public let configuration: Configuration

    init(
        convertible: any URLRequestConvertible, configuration: Configuration, underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?, session: Session
    ) {
        self.convertible = convertible
        self.configuration = configuration
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        try convertible.asURLRequest()
    }

    override func loadingDestination() -> LoadingTask.Destination {
        .webSocket(subprotocols: configuration.protocol.map { [$0] } ?? [], maximumMessageSize: configuration.maximumMessageSize)
    }

    override func makeSessionTask(for task: LoadingTask) -> URLSessionTask { LoadingWebSocketTask(task, request: self) }

    override func prepareForRetry() {
        socketState.withLock { $0.isOpen = false }
        super.prepareForRetry()
    }

    override func cleanup() {
        let (sends, waiter) = socketState.withLock { state in
            state.pingGeneration += 1
            state.isOpen = false
            state.hasEnded = true
            // The handlers (and observers of a wait, which may) hold the request: let them go with it.
            state.handlers.removeAll()
            state.demandObservers.requestEnded()
            defer {
                state.enqueuedSends.removeAll()
                state.demandWaiter = nil
            }
            return (state.enqueuedSends, state.demandWaiter)
        }
        waiter?.resume()
        // Sends never made: they fail, rather than leaving their callers waiting.
        let error = sendRefusal
        for send in sends { Self.call(send.completion, with: .failure(error), on: send.queue) }
        super.cleanup()
    }

    /// The loading task of the attempt under way.
    var loadingTask: LoadingTask? { mutableState.withLock { $0.machine.runningTask } }

    // MARK: Events from the loading task

    func didConnect(protocol: String?) {
        let task = loadingTask
        let handlers = socketState.withLock { state in
            state.isOpen = true
            // Issued under the lock, as `send` issues its own: a send racing this one stays behind the queued ones.
            if let task {
                for send in state.enqueuedSends { perform(send.message, on: task, queue: send.queue, completion: send.completion) }
                state.enqueuedSends.removeAll()
            }
            return state.handlers
        }
        handlers.forEach { $0(.connected(protocol: `protocol`)) }
        if let pingInterval = configuration.pingInterval { startAutomaticPing(every: pingInterval) }
    }

    func didReceiveMessage(_ message: URLSessionWebSocketTask.Message) {
        let size = Self.size(of: message)
        let handlers = socketState.withLock { state in
            state.bufferedBytes += size * state.handlers.count
            return state.handlers
        }
        handlers.forEach { $0(.receivedMessage(message)) }
    }

    func didDisconnect(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let handlers = socketState.withLock { state in
            state.pingGeneration += 1
            return state.handlers
        }
        handlers.forEach { $0(.disconnected(closeCode: closeCode, reason: reason)) }
    }

    /// Returns once handlers hold at most ``maximumBufferedBytes`` not yet handled, or the calling
    /// task is cancelled.
    func awaitDemand() async {
        guard socketState.withLock({ $0.bufferedBytes > maximumBufferedBytes }) else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (waits, observers) = socketState.withLock { state -> (Bool, [@Sendable () -> Void]) in
                    guard state.bufferedBytes > maximumBufferedBytes, !Task.isCancelled else { return (false, []) }
                    state.demandWaiter = continuation
                    return (true, state.demandObservers.taskParked())
                }
                observers.forEach { $0() }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            socketState.withLock { state in
                defer { state.demandWaiter = nil }
                return state.demandWaiter
            }?.resume()
        }
    }

    /// Whether the loading task is waiting for the handlers to catch up.
    var isAwaitingDemand: Bool { socketState.withLock { $0.demandWaiter != nil } }

    /// Runs `observer` once the loading task is waiting for the handlers to catch up: now, if it
    /// is, or as it starts waiting (on the loading task's thread).
    func whenAwaitingDemand(_ observer: @escaping @Sendable () -> Void) {
        let runNow = socketState.withLock { state in
            state.demandObservers.add(observer, isAwaitingDemand: state.demandWaiter != nil, hasEnded: state.hasEnded)
        }
        runNow?()
    }

    /// A handler is done with a message of `bytes`.
    private func handled(bytes: Int) {
        let waiter = socketState.withLock { state -> CheckedContinuation<Void, Never>? in
            state.bufferedBytes -= bytes
            guard state.bufferedBytes <= maximumBufferedBytes else { return nil }
            defer { state.demandWaiter = nil }
            return state.demandWaiter
        }
        waiter?.resume()
    }

    static func size(of message: URLSessionWebSocketTask.Message) -> Int {
        switch message {
        case .data(let data): data.count
        case .string(let string): string.utf8.count
        @unknown default: 0
        }
    }

    // MARK: Control

    /// Closes the WebSocket: sends a close frame with `closeCode` and `reason`, and the request
    /// completes (without an error) once the server answers, when handlers hear `.disconnected`
    /// with the server's code. Before the WebSocket opens, the request is cancelled. The monitors
    /// hear `requestDidCancel`, as in Alamofire.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) -> Self {
        cancelAutomaticPing()
        cancel(deciding: { $0.close() }, stopping: { $0.close(with: closeCode, reason: reason) })
        return self
    }

    /// Sends a ping; `onResponse` hears the pong (with its latency), the error, or `.unsent` when
    /// the request is not resumed or the WebSocket not open.
    @preconcurrency
    public func sendPing(respondingOn queue: DispatchQueue = .main, onResponse: @escaping @Sendable (PingResponse) -> Void) {
        guard isResumed, socketState.withLock({ $0.isOpen }), let task = loadingTask else {
            queue.async { onResponse(.unsent) }
            return
        }
        let start = Date()
        let startUptime = ProcessInfo.processInfo.systemUptime
        task.sendPing { error in
            let response: PingResponse
            if let error {
                response = .error(error)
            } else {
                response = .pong(.init(start: start, end: Date(), latency: ProcessInfo.processInfo.systemUptime - startUptime))
            }
            queue.async { onResponse(response) }
        }
    }

    /// Sends a ping every `pingInterval` seconds while the WebSocket is open; a pong that has not
    /// arrived within the interval fails the request with `URLError(.timedOut)`. Both delays run on
    /// the session's ``Session/delayScheduler``.
    func startAutomaticPing(every pingInterval: TimeInterval) {
        let generation = socketState.withLock { state -> Int? in
            guard state.isOpen else { return nil }
            state.pingGeneration += 1
            return state.pingGeneration
        }
        guard let generation else { return }
        let scheduler = session?.delayScheduler ?? DispatchDelayedWorkScheduler()
        let ping = DispatchWorkItem { [weak self] in
            guard let self, self.isAutomaticPingCurrent(generation), self.isResumed, let task = self.loadingTask else { return }
            let answered = Mutex(false)
            self.sendPing(respondingOn: self.underlyingQueue) { response in
                answered.withLock { $0 = true }
                if case .pong = response { self.startAutomaticPing(every: pingInterval) }
            }
            let deadline = DispatchWorkItem {
                guard !answered.withLock({ $0 }), self.isAutomaticPingCurrent(generation) else { return }
                task.abandonWebSocket(
                    failingWith: URLError(
                        .timedOut,
                        userInfo: [
                            NSLocalizedDescriptionKey: "The server did not answer a ping within \(pingInterval) seconds.",
                            NSURLErrorFailingURLErrorKey: self.request?.url as Any,
                        ]))
            }
            scheduler.schedule(after: pingInterval, on: self.underlyingQueue, deadline)
        }
        scheduler.schedule(after: pingInterval, on: underlyingQueue, ping)
    }

    /// Whether the automatic ping of `generation` is still wanted (the WebSocket open, no newer one).
    private func isAutomaticPingCurrent(_ generation: Int) -> Bool {
        socketState.withLock { $0.isOpen && $0.pingGeneration == generation }
    }

    func cancelAutomaticPing() {
        socketState.withLock { $0.pingGeneration += 1 }
    }

    // MARK: Sending

    /// Sends `message`; `completionHandler` hears the outcome on `queue`. A message sent before the
    /// WebSocket opens is queued and sent (in order) when it does. Once the request is cancelled
    /// or finished, the send fails with its error (Alamofire drops it without calling back).
    @preconcurrency
    public func send(
        _ message: URLSessionWebSocketTask.Message, queue: DispatchQueue = .main,
        completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        send(message, completingOn: queue, completionHandler)
    }

    /// ``send(_:queue:completionHandler:)``, calling `completion` on `queue`, or (nil) where the send
    /// completes: on the connection's event loop, so `completion` must neither block nor run a
    /// user's code (it resumes an awaiting task).
    func send(
        _ message: URLSessionWebSocketTask.Message, completingOn queue: DispatchQueue?,
        _ completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        // Decided and issued under the lock, so that a send racing the opening keeps its place and
        // one racing the cleanup is either flushed by it or refused here.
        let (task, stopped) = (loadingTask, isCancelled || isFinished)
        let refused = socketState.withLock { state in
            guard !state.hasEnded, !stopped else { return true }
            if state.isOpen, let task {
                perform(message, on: task, queue: queue, completion: completionHandler)
            } else {
                state.enqueuedSends.append((message, queue, completionHandler))
            }
            return false
        }
        if refused { Self.call(completionHandler, with: .failure(sendRefusal), on: queue) }
    }

    private static func call(
        _ completion: @escaping @Sendable (Result<Void, any Error>) -> Void, with result: Result<Void, any Error>, on queue: DispatchQueue?
    ) {
        guard let queue else { return completion(result) }
        queue.async { completion(result) }
    }

    /// Why a send after the request was cancelled or finished fails: its error, else
    /// `.explicitlyCancelled` or, for a WebSocket that closed, `URLError(.networkConnectionLost)`.
    private var sendRefusal: AFError {
        error ?? (isCancelled ? .explicitlyCancelled : .sessionTaskFailed(error: URLError(.networkConnectionLost)))
    }

    private func perform(
        _ message: URLSessionWebSocketTask.Message, on task: LoadingTask, queue: DispatchQueue?,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        task.send(message) { error in Self.call(completion, with: error.map { .failure($0) } ?? .success(()), on: queue) }
    }

    // MARK: Handlers

    /// Adds a handler of the incoming events, called on the serialization queue with each event and
    /// what to call once the event has been handled (a message counts against the back-pressure
    /// until then); and a response serializer that hands it `.completed` once the request has finished.
    /// An `inline` handler is called where the event arrives instead (the connection's event loop, for
    /// messages), in the same order: it must neither block nor run a user's code (it feeds a stream).
    func forIncomingEvent(
        inline: Bool = false, handler: @escaping @Sendable (IncomingEvent, _ release: @escaping @Sendable () -> Void) -> Void
    ) -> Self {
        socketState.withLock { state in
            // Added after the end, it would hear nothing but `.completed` (delivered below) and hold the request.
            guard !state.hasEnded else { return }
            state.handlers.append { incomingEvent in
                let release: @Sendable () -> Void
                if case .receivedMessage(let message) = incomingEvent {
                    let size = Self.size(of: message)
                    release = { self.handled(bytes: size) }
                } else {
                    release = {}
                }
                if inline { handler(incomingEvent, release) } else { self.serializationQueue.async { handler(incomingEvent, release) } }
            }
        }
        appendResponseSerializer {
            self.responseSerializerDidComplete {
                self.serializationQueue.async {
                    handler(.completed(.init(request: self.request, response: self.response, metrics: self.metrics, error: self.error)), {})
                }
            }
        }
        return self
    }

    /// Calls `handler` on `queue` with each event, then releases it.
    static func calling<Event: Sendable>(
        _ handler: @escaping @Sendable (Event) -> Void, on queue: DispatchQueue
    )
        -> @Sendable (Event, @escaping @Sendable () -> Void) -> Void
    {
        { event, release in
            queue.async {
                handler(event)
                release()
            }
        }
    }
}
