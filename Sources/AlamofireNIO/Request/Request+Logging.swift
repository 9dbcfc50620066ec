import AFSynchronization
import AlamofireNIOLoading
import Foundation
public import Logging
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each request's logger: its session's ``Session/logger``, or one given with ``Request/logging(to:)``.
/// Its lines carry the request's id, method and (redacted) URL as metadata, and so does the
/// transport's line when it sends one of the request's exchanges again.
///
/// ```swift
/// // In a service's handler: this request logs with the handler's logger and metadata.
/// let item = try await AF.request(url).logging(to: context.logger).serializingDecodable(Item.self).value
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

    /// Makes `logger` the request's logger, in place of its session's, as AsyncHTTPClient's
    /// per-call `logger:` does. (AlamofireNIO's own.)
    ///
    /// Give it in the chain that makes the request, before a response handler starts it: a request
    /// is set up on its first `resume()` (unless its session's `requestSetup` is `.eager`), and lines
    /// logged before this call went to the session's logger. Inside swift-log's `withLogger(_:_:)`,
    /// `logging(to: Logger.current)` takes the task's logger.
    ///
    /// - Parameter logger: Where the request logs.
    /// - Returns: The instance.
    @discardableResult
    public func logging(to logger: Logger) -> Self {
        mutableState.withLock { $0.ownLogger = logger }
        hasOwnLogger.store(true, ordering: .releasing)
        return self
    }

    /// Where the request logs, before its metadata is added (see ``logger``).
    var baseLogger: Logger {
        if hasOwnLogger.load(ordering: .acquiring), let own = mutableState.withLock({ $0.ownLogger }) { return own }
        return session?.logger ?? Self.silentLogger
    }

    /// Whether the request logs nothing at all: no logger of its own, and a silent session. The
    /// usual case, decided without copying a logger.
    private var logsNothing: Bool {
        sessionLogsNothing && !hasOwnLogger.load(ordering: .acquiring)
    }

    /// The logger of a request whose session has gone.
    private static let silentLogger = Logger(label: "org.alamofire.request", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Logs `message` with the request's metadata and `extra`, if the logger logs at `level`;
    /// nothing is formatted otherwise.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, _ extra: @autoclosure () -> Logger.Metadata = [:]) {
        guard !logsNothing else { return }
        let logger = baseLogger
        guard logger.logLevel <= level else { return }
        logger.log(level: level, message(), metadata: logMetadata().merging(extra()) { $1 })
    }

    /// The logger the transport uses for this request's exchanges, when it would log at all.
    var transportLogger: Logger? {
        guard !logsNothing else { return nil }
        let logger = baseLogger
        if logger.logLevel <= .debug { return self.logger }
        // A logger of the request's own keeps the transport's lines from the session's, even unwritten.
        return hasOwnLogger.load(ordering: .acquiring) ? logger : nil
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
