import AlamofireNIO
import Foundation

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
