public import Foundation
public import Logging

/// An ``EventMonitor`` that logs each request once it has ended (AlamofireNIO's, not Alamofire's):
/// `GET http://host/path?q=REDACTED 200 12.3 ms`, at ``level`` (`.debug` by default), with the
/// request's id, method, URL, status, duration and error as metadata.
///
/// ```swift
/// let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger)])
/// ```
///
/// The duration is the last attempt's, from its metrics; the URL is written through ``redaction``.
public final class LoggingEventMonitor: RequestLifetimeMonitor, Sendable {
    /// Where the events run.
    public let queue: DispatchQueue
    /// Where the lines go.
    public let logger: Logger
    /// The level of a request that succeeded; one that failed logs at the same level with its error.
    public let level: Logger.Level
    /// How URLs are written.
    public let redaction: URLRedaction

    /// Creates the monitor.
    /// - Parameters:
    ///   - logger:    Where the lines go.
    ///   - level:     Their level. `.debug` by default.
    ///   - redaction: How URLs are written. Credentials and every query value hidden by default.
    ///   - queue:     Where the events run. A serial queue of its own by default.
    public init(
        logger: Logger, level: Logger.Level = .debug, redaction: URLRedaction = .default,
        queue: DispatchQueue = DispatchQueue(label: "org.alamofirenio.logging")
    ) {
        self.logger = logger
        self.level = level
        self.redaction = redaction
        self.queue = queue
    }

    /// Logs the request, once nothing more can happen to it.
    public func requestDidEnd(_ request: Request) {
        guard logger.logLevel <= level else { return }
        let urlRequest = request.request
        let method = urlRequest?.httpMethod ?? "GET"
        let url = urlRequest?.url.map(redaction.redacted) ?? "(no URL)"
        var metadata: Logger.Metadata = [
            "request.id": "\(request.id)", "http.request.method": "\(method)", "url.full": "\(url)",
        ]
        var line = "\(method) \(url)"
        if let status = request.response?.statusCode {
            metadata["http.response.status_code"] = "\(status)"
            line += " \(status)"
        }
        if let duration = request.metrics?.taskInterval.duration {
            let milliseconds = (duration * 10_000).rounded() / 10
            metadata["duration_ms"] = "\(milliseconds)"
            line += " \(milliseconds) ms"
        }
        if request.retryCount > 0 { metadata["http.request.resend_count"] = "\(request.retryCount)" }
        if let errorType = request.telemetryErrorType { metadata["error.type"] = "\(errorType)" }
        if let error = request.error {
            metadata["error.message"] = "\(error.localizedDescription)"
            line += " failed: \(error.localizedDescription)"
        }
        logger.log(level: level, "\(line)", metadata: metadata)
    }
}
