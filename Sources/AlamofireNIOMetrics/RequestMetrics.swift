#if Metrics
import AFSynchronization
public import AlamofireNIO
public import CoreMetrics
import Foundation
import Synchronization

/// swift-metrics for the requests of a `Session`: an ``EventMonitor`` a session opts into, with the
/// metrics factory it is given (no global state of its own).
///
/// ```swift
/// let session = Session(eventMonitors: [RequestMetrics(factory: MetricsSystem.factory)])
/// ```
///
/// Names follow OpenTelemetry's `http.client.*` where one exists, dimensions its attribute names:
///
/// | metric | kind | dimensions |
/// | --- | --- | --- |
/// | `http.client.request.duration` | timer, from creation to finish | `http.request.method`, `url.scheme`, `server.address`, `http.response.status_class` (`2xx`…, or `none`), `error.type` (when it failed) |
/// | `http.client.active_requests` | meter | `http.request.method`, `url.scheme`, `server.address` |
/// | `http.client.request.body.size` | recorder, bytes sent per request | as active requests |
/// | `http.client.response.body.size` | recorder, bytes received per request | as active requests |
/// | `alamofire.client.connection.establishment.duration` | timer, a new connection's connect and TLS time | `url.scheme`, `server.address` |
/// | `http.client.open_connections` | meter, the session's open connections to an origin | `http.connection.state` (`active` or `idle`), `url.scheme`, `server.address`, `server.port` |
/// | `alamofire.client.retries` | counter | as active requests |
/// | `alamofire.client.redirects` | counter | as active requests |
/// | `alamofire.client.cache.hits` | counter, responses from the URL cache | as active requests |
public final class RequestMetrics: RequestLifetimeMonitor, ConnectionPoolMonitor, Sendable {
    /// Where the events run.
    public let queue: DispatchQueue

    private let factory: any MetricsFactory
    private let inFlight = Mutex<[UUID: InFlight]>([:])

    /// A request between its creation and its finish.
    private struct InFlight {
        let start: DispatchTime
        let dimensions: [(String, String)]
    }

    /// Creates the monitor.
    /// - Parameters:
    ///   - factory: Where the metrics go. `MetricsSystem.factory` by default.
    ///   - queue:   Where the events run. A serial queue of its own by default.
    public init(
        factory: any MetricsFactory = MetricsSystem.factory, queue: DispatchQueue = DispatchQueue(label: "org.alamofirenio.metrics")
    ) {
        self.factory = factory
        self.queue = queue
    }

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        let url = urlRequest.url
        let dimensions = [
            ("http.request.method", urlRequest.httpMethod ?? "GET"), ("url.scheme", url?.scheme ?? "none"),
            ("server.address", url?.host ?? "none"),
        ]
        // Each attempt builds its URLRequest again: the first counts.
        let isFirst = inFlight.withLock { inFlight in
            guard inFlight[request.id] == nil else { return false }
            inFlight[request.id] = InFlight(start: .now(), dimensions: dimensions)
            return true
        }
        if isFirst { Meter(label: "http.client.active_requests", dimensions: dimensions, factory: factory).increment() }
    }

    public func requestIsRetrying(_ request: Request) {
        guard let dimensions = inFlight.withLock({ $0[request.id]?.dimensions }) else { return }
        Counter(label: "alamofire.client.retries", dimensions: dimensions, factory: factory).increment()
    }

    public func request(_ request: Request, didGatherMetrics metrics: TaskMetrics) {
        guard let dimensions = inFlight.withLock({ $0[request.id]?.dimensions }) else { return }
        let transactions = metrics.transactionMetrics
        Recorder(label: "http.client.request.body.size", dimensions: dimensions, factory: factory)
            .record(transactions.reduce(Int64(0)) { $0 + $1.countOfRequestBodyBytesSent })
        Recorder(label: "http.client.response.body.size", dimensions: dimensions, factory: factory)
            .record(transactions.reduce(Int64(0)) { $0 + $1.countOfResponseBodyBytesReceived })
        if metrics.redirectCount > 0 {
            Counter(label: "alamofire.client.redirects", dimensions: dimensions, factory: factory).increment(by: metrics.redirectCount)
        }
        if transactions.last?.resourceFetchType == .localCache {
            Counter(label: "alamofire.client.cache.hits", dimensions: dimensions, factory: factory).increment()
        }
        for transaction in transactions where !transaction.isReusedConnection {
            guard let start = transaction.connectStartDate, let end = transaction.connectEndDate else { continue }
            let url = transaction.request.url
            Timer(
                label: "alamofire.client.connection.establishment.duration",
                dimensions: [("url.scheme", url?.scheme ?? "none"), ("server.address", url?.host ?? "none")], factory: factory
            )
            .recordNanoseconds(Int64(end.timeIntervalSince(start) * 1e9))
        }
    }

    /// Records the duration once nothing more can happen to the request (a response serializer
    /// may retry a finished one).
    public func requestDidEnd(_ request: Request) {
        guard let entry = inFlight.withLock({ $0.removeValue(forKey: request.id) }) else { return }
        let elapsed = DispatchTime.now().uptimeNanoseconds - entry.start.uptimeNanoseconds
        Meter(label: "http.client.active_requests", dimensions: entry.dimensions, factory: factory).decrement()
        var dimensions = entry.dimensions
        dimensions.append(("http.response.status_class", request.response.map { "\($0.statusCode / 100)xx" } ?? "none"))
        if let errorType = request.telemetryErrorType { dimensions.append(("error.type", errorType)) }
        Timer(label: "http.client.request.duration", dimensions: dimensions, factory: factory).recordNanoseconds(Int64(elapsed))
    }

    public func connectionsChanged(_ counts: ConnectionCounts) {
        let origin = [("url.scheme", counts.scheme), ("server.address", counts.host), ("server.port", String(counts.port))]
        Meter(label: "http.client.open_connections", dimensions: [("http.connection.state", "active")] + origin, factory: factory)
            .set(counts.active)
        Meter(label: "http.client.open_connections", dimensions: [("http.connection.state", "idle")] + origin, factory: factory)
            .set(counts.idle)
    }
}
#endif
