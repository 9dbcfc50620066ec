import Foundation

/// How a wait for connectivity ended.
package enum ConnectivityWaitOutcome: Sendable, Equatable {
    /// The network changed (a link or a route came or went): the exchange is tried again.
    case changed
    /// The wait was stopped: its task was cancelled or timed out, or the monitor stopped.
    case cancelled
}

/// Tells the tasks of a session whose configuration `waitsForConnectivity` when the network changes,
/// so that one that found no route (URLSession's `-1009`, `.notConnectedToInternet`, or a name that
/// could not be resolved while no route leaves the machine) tries again then instead of failing.
///
/// It counts the changes from the moment the session was made. A task reads the count as each
/// exchange starts and, when that exchange finds no route, waits for a change after it: a route that
/// appeared while the exchange was failing is not missed, and a task is tried again only after a
/// change, so a host that stays unreachable while the table says otherwise never spins. The task
/// bounds the wait itself (the resource timeout).
package protocol ConnectivityMonitor: Sendable {
    /// How many times the network has changed so far.
    var changeCount: Int { get }

    /// Whether no usable route leaves the machine now (no default route through an interface that is
    /// up): a host name that cannot be resolved then means offline. True while unknown, so that such a
    /// name waits for the first answer.
    var isOffline: Bool { get }

    /// Calls `ended` once, off the caller's stack: `.changed` once the count has passed `count` (at
    /// once when it already has), or `.cancelled` when the returned closure is called first or the
    /// monitor stops.
    func waitForChange(after count: Int, _ ended: @escaping @Sendable (ConnectivityWaitOutcome) -> Void) -> @Sendable () -> Void

    /// Stops following the network (the session is gone): every wait ends as cancelled.
    func stop()
}
