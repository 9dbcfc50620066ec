import AFSynchronization
import AlamofireNIOLoading
import Foundation
import Synchronization

/// The network's changes counted as a value: the routing table followed from a source's messages,
/// one change when it is first whole (a task that failed before it was may find its route there),
/// and one more each time it differs, once whole, from the last whole one.
struct NetworkChangeCount: Sendable {
    private var followed = FollowedRoutingTable()
    /// The table as last whole.
    private(set) var lastWhole: RoutingTable?
    /// The changes so far.
    private(set) var count = 0

    /// Applies what the source delivered; returns whether it was a change.
    mutating func apply(_ event: RoutingSourceEvent) -> Bool {
        guard let whole = followed.apply(event) else { return false }
        defer { lastWhole = whole }
        guard lastWhole != whole else { return false }
        count += 1
        return true
    }

    /// Whether the whole table has no default route out through a usable interface; true while the
    /// table is not yet whole, so a name that failed then waits for it (it is change 1) and is tried
    /// again once it is known.
    var isOffline: Bool { lastWhole.map { $0.defaultRouteInterface() == nil } ?? true }
}

/// A session's ``ConnectivityMonitor`` when its configuration `waitsForConnectivity`: follows the
/// kernel's links and routes through rtnetlink from the session's start, as
/// ``NetworkReachabilityManager`` does, and ends the waits of tasks that found no route when the
/// network changes. Any change counts (a link up or down, a route added or removed): the task's next
/// exchange says whether it was the right one, and waits again if not. The session stops it as it
/// goes.
final class NetworkChangeMonitor: ConnectivityMonitor {
    private struct State {
        var changes = NetworkChangeCount()
        var waiters: [Int: @Sendable (ConnectivityWaitOutcome) -> Void] = [:]
        var nextWaiter = 0
        var isStopped = false

        /// Every waiter, taken (to be told outside the lock).
        mutating func takeWaiters() -> [@Sendable (ConnectivityWaitOutcome) -> Void] {
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
    }

    private let source: any RoutingMessageSource
    /// Where the source delivers and the waits end.
    private let queue = DispatchQueue(label: "org.alamofire.session.connectivity")
    private let state = Mutex(State())

    /// Starts following the network from `source`; nil when it cannot (a sandbox without rtnetlink),
    /// and tasks then fail offline at once, as without `waitsForConnectivity`.
    init?(source: any RoutingMessageSource) {
        self.source = source
        guard source.start(on: queue, deliver: { [weak self] event in self?.received(event) }) else { return nil }
    }

    deinit {
        source.stop()
    }

    var changeCount: Int { state.withLock { $0.changes.count } }

    var isOffline: Bool { state.withLock { $0.changes.isOffline } }

    func waitForChange(after count: Int, _ ended: @escaping @Sendable (ConnectivityWaitOutcome) -> Void) -> @Sendable () -> Void {
        let id = state.withLock { state -> Int? in
            guard state.changes.count <= count, !state.isStopped else { return nil }
            defer { state.nextWaiter += 1 }
            state.waiters[state.nextWaiter] = ended
            return state.nextWaiter
        }
        guard let id else {
            let outcome: ConnectivityWaitOutcome = state.withLock { $0.isStopped } ? .cancelled : .changed
            queue.async { ended(outcome) }
            return {}
        }
        return { [weak self] in self?.end(id) }
    }

    func stop() {
        let waiters = state.withLock { state in
            state.isStopped = true
            return state.takeWaiters()
        }
        source.stop()
        for waiter in waiters { queue.async { waiter(.cancelled) } }
    }

    /// Ends one wait as cancelled (once: a change and a cancel that race end it once).
    private func end(_ id: Int) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        queue.async { waiter(.cancelled) }
    }

    private func received(_ event: RoutingSourceEvent) {
        let waiters = state.withLock { state in
            state.changes.apply(event) ? state.takeWaiters() : []
        }
        for waiter in waiters { waiter(.changed) }
    }
}
