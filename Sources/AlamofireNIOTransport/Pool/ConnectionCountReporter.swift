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
/// Reports are made one at a time, outside every lock: a pool whose counts changed is marked, and
/// whichever thread finds no report under way makes them until no pool is marked, reading each
/// marked pool's counts as they are then. So the last report for an origin holds its latest counts,
/// whatever order the pools' threads arrive in, and a pool that closed its last connection leaves
/// nothing behind.
final class ConnectionCountReporter: Sendable {
    private struct Key: Hashable {
        let scheme: String
        let host: String
        let port: Int
    }

    private struct State {
        /// The pools with open connections, by pool, as last read.
        var byPool: [ObjectIdentifier: (key: Key, active: Int, idle: Int)] = [:]
        var reported: [Key: TransportConnectionCounts] = [:]
        /// Pools whose counts changed since they were last read.
        var marked: [ObjectIdentifier: ConnectionPool] = [:]
        var isReporting = false
    }

    private let observer: @Sendable (TransportConnectionCounts) -> Void
    private let state = NIOLockedValueBox(State())

    init(observer: @escaping @Sendable (TransportConnectionCounts) -> Void) {
        self.observer = observer
    }

    /// The pool's counts changed: reports its origin's new sum, now or by the report under way.
    func poolChanged(_ pool: ConnectionPool) {
        let reports = state.withLockedValue { state in
            state.marked[ObjectIdentifier(pool)] = pool
            defer { state.isReporting = true }
            return !state.isReporting
        }
        guard reports else { return }
        while let changed = nextReports() {
            changed.forEach(observer)
        }
    }

    /// Reads the marked pools and returns the sums that changed; nil (and no report under way) once
    /// no pool is marked.
    private func nextReports() -> [TransportConnectionCounts]? {
        state.withLockedValue { state in
            guard !state.marked.isEmpty else {
                state.isReporting = false
                return nil
            }
            var keys: Set<Key> = []
            for (id, pool) in state.marked {
                let origin = pool.originKey
                let key = Key(scheme: origin.scheme, host: origin.host, port: origin.port)
                let counts = pool.connectionCounts
                keys.insert(key)
                state.byPool[id] = counts.active == 0 && counts.idle == 0 ? nil : (key, counts.active, counts.idle)
            }
            state.marked.removeAll()
            var changed: [TransportConnectionCounts] = []
            for key in keys {
                var sum = TransportConnectionCounts(scheme: key.scheme, host: key.host, port: key.port, active: 0, idle: 0)
                for entry in state.byPool.values where entry.key == key {
                    sum.active += entry.active
                    sum.idle += entry.idle
                }
                if state.reported[key] != sum {
                    // An origin with nothing open is reported once, then forgotten.
                    state.reported[key] = sum.active == 0 && sum.idle == 0 ? nil : sum
                    changed.append(sum)
                }
            }
            return changed
        }
    }
}
