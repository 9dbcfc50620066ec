import AFSynchronization
import AlamofireNIO
import Foundation
import Logging
import Synchronization

/// Runs after everything already queued on `queue`: a monitor's events raised before are handled.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// State a test waits on: each change is checked against the waiting conditions, so a wait ends at
/// the change that meets it rather than at the next poll.
final class Watched<State: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Storage {
        var state: State
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let storage: Mutex<Storage>

    init(_ state: State) {
        storage = Mutex(Storage(state: state))
    }

    /// The state now.
    var value: State { storage.withLock { $0.state } }

    /// Changes the state, then resumes the waits it satisfies (after the lock is released).
    func change(_ body: (inout State) -> Void) {
        let met = storage.withLock { storage -> [CheckedContinuation<Bool, Never>] in
            body(&storage.state)
            let state = storage.state
            let ready = storage.waiters.filter { $0.value.condition(state) }
            for id in ready.keys { storage.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in met { continuation.resume(returning: true) }
    }

    /// Waits until `condition` holds, for at most `seconds`; false when it did not in time (or the
    /// waiting task was cancelled).
    func waitUntil(seconds: Double = 10, _ condition: @escaping @Sendable (State) -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(for: condition) }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func wait(for condition: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = storage.withLock { storage in
            defer { storage.nextWaiter += 1 }
            return storage.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let holds = storage.withLock { storage -> Bool? in
                    if condition(storage.state) { return true }
                    if Task.isCancelled { return false }
                    storage.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let holds { continuation.resume(returning: holds) }
            }
        } onCancel: {
            storage.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`: for state with no
/// change to wait on (a weak reference's release, the tracing and metrics libraries' test doubles).
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

    let entries = Watched<[Entry]>([])

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines that carry `request`'s id.
    func lines(of request: Request) -> [Entry] {
        entries.value.filter { $0.metadata["request.id"] == "\(request.id)" }
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
            capture.entries.change { $0.append(Entry(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }
}
