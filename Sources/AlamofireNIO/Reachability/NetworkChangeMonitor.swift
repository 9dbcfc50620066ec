import AFSynchronization
import AlamofireNIOLoading
import Foundation
import Synchronization

/// The network's changes counted as a value: the routing table followed from a source's messages,
/// and each time it differs, once whole, from the last whole one, one change more. The first whole
/// table is where counting starts, not a change.
struct NetworkChangeCount: Sendable {
    private var followed = FollowedRoutingTable()
    private var lastWhole: RoutingTable?
    /// The changes so far.
    private(set) var count = 0

    /// Applies what the source delivered; returns whether it was a change.
    mutating func apply(_ event: RoutingSourceEvent) -> Bool {
        guard let whole = followed.apply(event) else { return false }
        defer { lastWhole = whole }
        guard let lastWhole, lastWhole != whole else { return false }
        count += 1
        return true
    }
}

/// A session's ``ConnectivityMonitor`` when its configuration `waitsForConnectivity`: follows the
/// kernel's links, addresses and routes through rtnetlink from the session's start, as
/// ``NetworkReachabilityManager`` does, and ends the waits of tasks that found no route when the
/// network changes. Any change counts (a link up, a new address, a new route): the task's next
/// exchange says whether it was the right one, and waits again if not.
final class NetworkChangeMonitor: ConnectivityMonitor {
    private struct Waiter: @unchecked Sendable {
        // Unchecked: Dispatch's work item is thread-safe but not marked `Sendable` on Linux.
        let after: Int
        let ended: @Sendable (ConnectivityWaitOutcome) -> Void
        let timer: DispatchWorkItem?
    }

    private struct State {
        var changes = NetworkChangeCount()
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0

        /// The waiters a change ends: those waiting for a count the network has now passed.
        mutating func takeWaitersPassed() -> [Waiter] {
            let passed = waiters.filter { $0.value.after < changes.count }
            for id in passed.keys { waiters[id] = nil }
            return Array(passed.values)
        }
    }

    private let source: any RoutingMessageSource
    private let scheduler: any DelayedWorkScheduler
    /// Where the source delivers, the timers fire and the waits end.
    private let queue = DispatchQueue(label: "org.alamofire.session.connectivity")
    private let state = Mutex(State())

    /// Starts following the network from `source`; nil when it cannot (a sandbox without rtnetlink),
    /// and tasks then fail offline at once, as without `waitsForConnectivity`. The waits' timers run
    /// on `scheduler`.
    init?(source: any RoutingMessageSource, scheduler: any DelayedWorkScheduler = DispatchDelayedWorkScheduler()) {
        self.source = source
        self.scheduler = scheduler
        guard source.start(on: queue, deliver: { [weak self] event in self?.received(event) }) else { return nil }
    }

    deinit {
        source.stop()
    }

    var changeCount: Int { state.withLock { $0.changes.count } }

    func waitForChange(
        after count: Int, timeout: TimeInterval, _ ended: @escaping @Sendable (ConnectivityWaitOutcome) -> Void
    ) -> @Sendable () -> Void {
        // A resource timeout too far off to count (7 days is the default) needs no timer.
        let timed = timeout.isFinite && timeout < 1e9
        let waiting = state.withLock { state -> (id: Int, waiter: Waiter)? in
            guard state.changes.count <= count else { return nil }
            let id = state.nextWaiter
            state.nextWaiter += 1
            let timer = timed ? DispatchWorkItem { [weak self] in self?.end(id, .timedOut) } : nil
            let waiter = Waiter(after: count, ended: ended, timer: timer)
            state.waiters[id] = waiter
            return (id, waiter)
        }
        guard let waiting else {
            queue.async { ended(.changed) }
            return {}
        }
        if let timer = waiting.waiter.timer { scheduler.schedule(after: timeout, on: queue, timer) }
        return { self.end(waiting.id, .cancelled) }
    }

    /// Ends one wait (once: a timer and a cancel that race end it once).
    private func end(_ id: Int, _ outcome: ConnectivityWaitOutcome) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.timer?.cancel()
        queue.async { waiter.ended(outcome) }
    }

    private func received(_ event: RoutingSourceEvent) {
        let ended = state.withLock { state -> [Waiter] in
            state.changes.apply(event) ? state.takeWaitersPassed() : []
        }
        for waiter in ended {
            waiter.timer?.cancel()
            waiter.ended(.changed)
        }
    }
}
