import AFSynchronization
import AlamofireNIO
import Foundation
import Logging
import Synchronization

/// Runs after everything already queued on `queue`: a monitor's events raised before are handled.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Keeps what loggers made by ``logger(_:)`` log: each line with the logger's metadata and the line's own.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    let entries = Mutex<[Entry]>([])

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines that carry `request`'s id.
    func lines(of request: Request) -> [Entry] {
        entries.withLock { $0.filter { $0.metadata["request.id"] == "\(request.id)" } }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }
}
