import Foundation

/// Runs work on a queue after a delay. A session's retry delays (`RetryResult.retryWithDelay`), its
/// WebSocket requests' automatic pings and pong deadlines, and ``OfflineRetrier``'s wait go through
/// one, so that their tests drive them with a manual clock instead of waiting for real time to pass.
package protocol DelayedWorkScheduler: Sendable {
    /// Runs `work` on `queue` once `delay` seconds have passed, unless it is cancelled first.
    func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: DispatchWorkItem)
}

/// The real clock: Dispatch's timers.
package struct DispatchDelayedWorkScheduler: DelayedWorkScheduler {
    package init() {}

    package func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: DispatchWorkItem) {
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }
}

extension DispatchTimeInterval {
    /// The interval in seconds; `.never` is infinite.
    var seconds: TimeInterval {
        switch self {
        case .seconds(let value): TimeInterval(value)
        case .milliseconds(let value): TimeInterval(value) / 1e3
        case .microseconds(let value): TimeInterval(value) / 1e6
        case .nanoseconds(let value): TimeInterval(value) / 1e9
        case .never: .infinity
        @unknown default: .infinity
        }
    }
}
