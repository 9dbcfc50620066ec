package import Foundation

/// How a wait for connectivity ended.
package enum ConnectivityWaitOutcome: Sendable, Equatable {
    /// The network changed (a link, an address or a route came or went): the exchange is tried again.
    case changed
    /// The time given ran out first.
    case timedOut
    /// The wait was stopped (its task was cancelled).
    case cancelled
}

/// Tells the tasks of a session whose configuration `waitsForConnectivity` when the network changes,
/// so that one that found no route (URLSession's `-1009`, `.notConnectedToInternet`) tries again
/// then instead of failing.
///
/// It counts the changes from the moment the session was made. A task reads the count as each
/// exchange starts and, when that exchange finds no route, waits for a change after it: a route that
/// appeared while the exchange was failing is not missed, and a task is tried again only after a
/// change, so a host that stays unreachable while the table says otherwise never spins.
package protocol ConnectivityMonitor: Sendable {
    /// How many times the network has changed so far.
    var changeCount: Int { get }

    /// Calls `ended` once, on a queue of the monitor's: `.changed` once the count has passed `count`
    /// (at once when it already has), `.timedOut` after `timeout` seconds, or `.cancelled` when the
    /// returned closure is called first.
    func waitForChange(
        after count: Int, timeout: TimeInterval, _ ended: @escaping @Sendable (ConnectivityWaitOutcome) -> Void
    ) -> @Sendable () -> Void
}
