#if Tracing
import AFSynchronization
public import AlamofireNIO
import Foundation
import Synchronization
public import Tracing

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A swift-distributed-tracing span for each request of a `Session`, from its start to its finish,
/// with OpenTelemetry's HTTP client conventions; and the span's context in each attempt's headers.
///
/// It is both an ``EventMonitor`` (it watches the request) and a ``RequestInterceptor`` (it injects
/// the trace context into every attempt's `URLRequest` with the tracer's propagation, such as W3C
/// `traceparent`), so a session takes it in both places:
///
/// ```swift
/// let tracing = RequestTracer()
/// let session = Session(interceptor: tracing, eventMonitors: [tracing])
/// ```
///
/// Each span is of kind `.client`, named by the method (`GET`; `HTTP` until the `URLRequest`
/// exists), a child of the `ServiceContext` of the task that started the request, and carries
/// `http.request.method`, `url.full` (credentials and, by default, every query value redacted:
/// ``URLRedaction``), `url.scheme`, `server.address`, `server.port`, `network.protocol.version`,
/// `http.response.status_code`, `http.request.resend_count` from the first retry on, and, when it
/// failed, `error.type` with an error status. Redirects and retries are span events
/// (`http.redirect` with the new `url.full`, `http.retry` with the resend count).
///
/// Without a tracer bootstrapped (`InstrumentationSystem.tracer` is a no-op tracer) spans cost
/// next to nothing; a session without a `RequestTracer` pays nothing at all.
public final class RequestTracer: RequestLifetimeMonitor, RequestInterceptor, Sendable {
    /// Where the monitor's events run.
    public let queue: DispatchQueue
    /// How `url.full` hides secrets.
    public let redaction: URLRedaction

    private let tracer: any Tracer
    private let spans = Mutex<[UUID: RequestSpan]>([:])

    /// One request's span and what the monitor needs to match events to it.
    private struct RequestSpan {
        var span: any Span
        var taskIDs: Set<ObjectIdentifier> = []
    }

    /// Creates a tracer of requests.
    /// - Parameters:
    ///   - tracer:    The tracer spans are started with. `InstrumentationSystem.tracer` by default.
    ///   - redaction: How `url.full` hides secrets. Credentials and every query value by default.
    ///   - queue:     Where the events run. A serial queue of its own by default.
    public init(
        tracer: (any Tracer)? = nil, redaction: URLRedaction = .default,
        queue: DispatchQueue = DispatchQueue(label: "org.alamofirenio.tracing")
    ) {
        self.tracer = tracer ?? InstrumentationSystem.tracer
        self.redaction = redaction
        self.queue = queue
    }

    // MARK: - Start, on the caller's thread

    /// Starts the request's span as a child of the caller's `ServiceContext`.
    public func requestWillStart(_ request: Request) {
        let span = tracer.startSpan("HTTP", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        spans.withLock { $0[request.id] = RequestSpan(span: span) }
        // Cancelled between the start's check and now, its end may have come and gone: end the span
        // after the events already queued, unless they did.
        if request.state == .cancelled || request.state == .finished {
            queue.async { self.end(request) }
        }
    }

    // MARK: - Propagation

    /// Injects the request's span context into the attempt's headers.
    public func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard let span = spans.withLock({ $0[state.requestID]?.span }) else { return completion(.success(urlRequest)) }
        var request = urlRequest
        tracer.inject(span.context, into: &request, using: URLRequestHeaderInjector())
        completion(.success(request))
    }

    /// Only ``adapt(_:using:completion:)`` is used; this passes the request through.
    public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.success(urlRequest))
    }

    // MARK: - Events

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        update(request) { entry in
            let method = urlRequest.httpMethod ?? "GET"
            entry.span.operationName = method
            entry.span.attributes["http.request.method"] = method
            guard let url = urlRequest.url else { return }
            entry.span.attributes["url.full"] = redaction.redacted(url)
            if let scheme = url.scheme { entry.span.attributes["url.scheme"] = scheme }
            if let host = url.host { entry.span.attributes["server.address"] = host }
            if let port = url.port ?? Self.defaultPort(of: url.scheme) { entry.span.attributes["server.port"] = port }
        }
    }

    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        update(request) { entry in
            entry.taskIDs.insert(ObjectIdentifier(task))
            if request.retryCount > 0 { entry.span.attributes["http.request.resend_count"] = request.retryCount }
        }
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest
    ) {
        let id = ObjectIdentifier(task)
        let span = spans.withLock { spans in spans.values.first { $0.taskIDs.contains(id) }?.span }
        var attributes = SpanAttributes()
        attributes["http.response.status_code"] = response.statusCode
        if let url = request.url { attributes["url.full"] = redaction.redacted(url) }
        span?.addEvent(SpanEvent(name: "http.redirect", attributes: attributes))
    }

    public func requestIsRetrying(_ request: Request) {
        update(request) { entry in
            var attributes = SpanAttributes()
            attributes["http.request.resend_count"] = request.retryCount
            entry.span.addEvent(SpanEvent(name: "http.retry", attributes: attributes))
        }
    }

    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) {
        guard let name = metrics.transactionMetrics.last?.networkProtocolName else { return }
        update(request) { entry in
            entry.span.attributes["network.protocol.name"] = "http"
            entry.span.attributes["network.protocol.version"] = Self.protocolVersion(name)
        }
    }

    /// Ends the span with the response's status, or the error, once nothing more can happen to the
    /// request (a response serializer may retry a finished one).
    public func requestDidEnd(_ request: Request) {
        end(request)
    }

    private func end(_ request: Request) {
        guard let entry = spans.withLock({ $0.removeValue(forKey: request.id) }) else { return }
        let span = entry.span
        if let status = request.response?.statusCode { span.attributes["http.response.status_code"] = status }
        if let errorType = request.telemetryErrorType {
            span.attributes["error.type"] = errorType
            if let error = request.error, (request.response?.statusCode ?? 0) < 400 {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error, message: error.localizedDescription))
            } else {
                span.setStatus(SpanStatus(code: .error))
            }
        }
        span.end()
    }

    // MARK: - Helpers

    private func update(_ request: Request, _ body: (inout RequestSpan) -> Void) {
        spans.withLock { spans in
            guard var entry = spans[request.id] else { return }
            body(&entry)
            spans[request.id] = entry
        }
    }

    /// `1.1`, `2` or `1.0` from the metrics' ALPN-style name.
    static func protocolVersion(_ name: String) -> String {
        switch name.lowercased() {
        case "h2": "2"
        case "http/1.0": "1.0"
        case "h3": "3"
        default: "1.1"
        }
    }

    static func defaultPort(of scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }
}

/// Writes trace context into a `URLRequest`'s headers, replacing what an earlier attempt wrote.
private struct URLRequestHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}
#endif
