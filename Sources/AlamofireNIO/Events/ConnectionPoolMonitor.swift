/// How many connections a session holds to one origin (AlamofireNIO's own). A connection still
/// opening, or closing (an HTTP/2 connection finishing its streams after the server's `GOAWAY`),
/// is neither active nor idle.
public struct ConnectionCounts: Sendable, Hashable {
    /// `http` or `https`.
    public var scheme: String
    /// The origin's host.
    public var host: String
    /// The origin's port.
    public var port: Int
    /// Open connections carrying at least one request.
    public var active: Int
    /// Open connections waiting in the pool for one.
    public var idle: Int

    /// - Parameters:
    ///   - scheme: `http` or `https`.
    ///   - host:   The origin's host.
    ///   - port:   The origin's port.
    ///   - active: Open connections carrying at least one request.
    ///   - idle:   Open connections waiting in the pool for one.
    public init(scheme: String, host: String, port: Int, active: Int, idle: Int) {
        (self.scheme, self.host, self.port, self.active, self.idle) = (scheme, host, port, active, idle)
    }
}

/// An ``EventMonitor`` that also hears how many connections its session holds to each origin, as
/// they change (AlamofireNIO's own; URLSession shows no connections). `RequestMetrics` is one.
///
/// Only monitors given to `Session(eventMonitors:)` (directly or within a ``CompositeEventMonitor``)
/// hear it; a session without one counts nothing.
/// Reports come one at a time, on the transport's threads rather than the monitor's `queue`, so the
/// last one for an origin always holds its latest counts: record them and return.
public protocol ConnectionPoolMonitor: EventMonitor {
    /// The connections to `counts`' origin changed: some opened, closed, took a request or let one go.
    func connectionsChanged(_ counts: ConnectionCounts)
}

extension CompositeEventMonitor {
    /// `monitors`, with those inside composite monitors in their place.
    static func flattened(_ monitors: [any EventMonitor]) -> [any EventMonitor] {
        monitors.flatMap { monitor -> [any EventMonitor] in
            (monitor as? CompositeEventMonitor).map { flattened($0.monitors) } ?? [monitor]
        }
    }
}
