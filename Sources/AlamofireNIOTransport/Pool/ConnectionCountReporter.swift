import NIOConcurrencyHelpers

/// How many connections a transport holds to one origin: those carrying exchanges and those idle in
/// the pool (connections opening or closing are neither).
public struct TransportConnectionCounts: Sendable, Hashable {
    /// `http` or `https`.
    public var scheme: String
    /// The origin's host.
    public var host: String
    /// The origin's port.
    public var port: Int
    /// Open connections carrying at least one exchange.
    public var active: Int
    /// Open connections carrying none.
    public var idle: Int

    /// - Parameters:
    ///   - scheme: `http` or `https`.
    ///   - host: the origin's host.
    ///   - port: the origin's port.
    ///   - active: open connections carrying at least one exchange.
    ///   - idle: open connections carrying none.
    public init(scheme: String, host: String, port: Int, active: Int, idle: Int) {
        (self.scheme, self.host, self.port, self.active, self.idle) = (scheme, host, port, active, idle)
    }
}

/// Sums the pools' connection counts per origin (one origin may have several pools: per client
/// certificate, proxy or WebSocket use) and reports each sum that changed.
///
/// Reports are made one at a time, under this reporter's lock, and each reads the pool's counts
/// then: so the last report for an origin always holds its latest counts, whatever order the pools'
/// threads arrive in. The observer runs under that lock and must be short (it records gauges).
final class ConnectionCountReporter: Sendable {
    private struct Key: Hashable {
        let scheme: String
        let host: String
        let port: Int
    }

    private struct State {
        var byPool: [ObjectIdentifier: (key: Key, active: Int, idle: Int)] = [:]
        var reported: [Key: TransportConnectionCounts] = [:]
    }

    private let observer: @Sendable (TransportConnectionCounts) -> Void
    private let state = NIOLockedValueBox(State())

    init(observer: @escaping @Sendable (TransportConnectionCounts) -> Void) {
        self.observer = observer
    }

    /// The pool's state changed: reports its origin's sum if it changed.
    func poolChanged(_ pool: ConnectionPool) {
        state.withLockedValue { state in
            let counts = pool.connectionCounts
            let key = Key(scheme: pool.origin.isTLS ? "https" : "http", host: pool.origin.host, port: pool.origin.port)
            let id = ObjectIdentifier(pool)
            if let known = state.byPool[id], known.active == counts.active, known.idle == counts.idle { return }
            state.byPool[id] = (key, counts.active, counts.idle)
            var sum = TransportConnectionCounts(scheme: key.scheme, host: key.host, port: key.port, active: 0, idle: 0)
            for entry in state.byPool.values where entry.key == key {
                sum.active += entry.active
                sum.idle += entry.idle
            }
            guard state.reported[key] != sum else { return }
            state.reported[key] = sum
            observer(sum)
        }
    }

    /// The pool was dropped (it holds no connection): it counts no more.
    func poolDropped(_ pool: ConnectionPool) {
        _ = state.withLockedValue { $0.byPool.removeValue(forKey: ObjectIdentifier(pool)) }
    }
}
