import AlamofireNIOLoading
import Foundation
public import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each request's logger: the one bound with swift-log's `withLogger(_:_:)` where the request was
/// created, else its session's ``Session/logger``. Its lines carry the request's id, method and
/// (redacted) URL as metadata, and so do the transport's lines for its exchanges.
///
/// ```swift
/// // In a service's handler: the requests made here log with the handler's metadata.
/// try await withLogger(context.logger) { _ in
///     try await AF.request(url).serializingDecodable(Item.self).value
/// }
/// ```
///
/// The library's own lines are few: `.debug` for a redirect and a retry, `.trace` for each attempt
/// sent and for the finish. ``LoggingEventMonitor`` writes a line per request with its timing.
extension Request {
    /// The request's logger, with its id, method and URL (through ``URLRedaction/default``) as
    /// metadata (`request.id`, `http.request.method`, `url.full`). (AlamofireNIO's own.)
    public var logger: Logger {
        var logger = baseLogger
        for (key, value) in logMetadata() { logger[metadataKey: key] = value }
        return logger
    }

    /// The logger a request created now uses: the task-local one, if a `withLogger` scope bound one
    /// (swift-log's unbound default has an empty label), else the session's.
    static func creationLogger(session: Session) -> Logger {
        let bound = Logger.current
        return bound.label.isEmpty ? session.logger : bound
    }

    /// Logs `message` with the request's metadata and `extra`, if the logger logs at `level`;
    /// nothing is formatted otherwise.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, _ extra: @autoclosure () -> Logger.Metadata = [:]) {
        guard baseLogger.logLevel <= level else { return }
        baseLogger.log(level: level, message(), metadata: logMetadata().merging(extra()) { $1 })
    }

    /// The logger the transport uses for this request's exchanges, when it would log at all.
    var transportLogger: Logger? {
        baseLogger.logLevel <= .debug ? logger : nil
    }

    /// What the finish line says: the status, and the error's type if it failed.
    func finishMetadata() -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let status = response?.statusCode { metadata["http.response.status_code"] = "\(status)" }
        if let errorType = telemetryErrorType { metadata["error.type"] = "\(errorType)" }
        return metadata
    }

    private func logMetadata() -> Logger.Metadata {
        var metadata: Logger.Metadata = ["request.id": "\(id)"]
        if let urlRequest = request {
            metadata["http.request.method"] = "\(urlRequest.httpMethod ?? "GET")"
            if let url = urlRequest.url { metadata["url.full"] = "\(URLRedaction.default.redacted(url))" }
        }
        return metadata
    }
}
