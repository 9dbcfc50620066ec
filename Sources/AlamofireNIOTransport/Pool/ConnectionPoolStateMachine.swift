import DequeModule

/// The connections to one origin and the requests waiting for one.
///
/// Every connection counts against the per-host limit from the moment it starts connecting until
/// its socket has closed (`closing` included), so the server never sees more than the limit. Waiters
/// are served in arrival order. A waiter that must not reuse a connection (a retry after a stale one)
/// is served only by a connection opened after it arrived. The owner performs the returned actions
/// after releasing its lock; nothing here does I/O.
struct ConnectionPoolStateMachine {
    enum ConnectionState: Equatable {
        case connecting
        case idle
        case leased
        /// Asked to close (or closing by itself); still counts until its socket closes.
        case closing
    }

    struct Waiter: Equatable {
        var id: Int
        var needsFreshConnection: Bool
    }

    enum FailureReason: Equatable {
        case cancelled
        case shutDown
        /// The connection opened for this request failed; the owner has the error.
        case connectionFailed
        /// The pool was retired (empty and unused): ask the transport for the origin's new pool.
        case retired
    }

    enum Action: Equatable {
        /// Hand the connection to the request.
        case lease(connection: Int, request: Int)
        /// Open a new connection.
        case createConnection(Int)
        /// Close the connection.
        case closeConnection(Int)
        /// Start the idle timer of a connection that just became idle.
        case scheduleIdleTimeout(Int)
        case failRequest(Int, FailureReason)
    }

    let maximumConnections: Int
    private(set) var connections: [Int: ConnectionState] = [:]
    private(set) var waiters: Deque<Waiter> = []
    private(set) var isShutDown = false
    /// Dropped by its owner for being empty: every later request goes to a new pool.
    private(set) var isRetired = false
    private var nextConnectionID: Int

    init(maximumConnections: Int, firstConnectionID: Int = 0) {
        self.maximumConnections = max(1, maximumConnections)
        self.nextConnectionID = firstConnectionID
    }

    var connectingCount: Int { connections.values.count { $0 == .connecting } }

    /// True when no connection exists and nobody waits: the pool can be dropped.
    var isEmpty: Bool { connections.isEmpty && waiters.isEmpty }

    // MARK: Requests

    /// Retires the pool if it is empty; whether it did.
    mutating func retireIfEmpty() -> Bool {
        guard isEmpty, !isShutDown else { return false }
        isRetired = true
        return true
    }

    mutating func requestLease(_ request: Int, needsFreshConnection: Bool = false) -> [Action] {
        if isShutDown { return [.failRequest(request, .shutDown)] }
        if isRetired { return [.failRequest(request, .retired)] }
        if !needsFreshConnection, let idle = connections.first(where: { $0.value == .idle })?.key {
            connections[idle] = .leased
            return [.lease(connection: idle, request: request)]
        }
        waiters.append(Waiter(id: request, needsFreshConnection: needsFreshConnection))
        var actions = openConnectionsForWaiters()
        if actions.isEmpty, needsFreshConnection, waiters.count > connectingCount,
            let idle = connections.first(where: { $0.value == .idle })?.key
        {
            // Full of idle connections this request may not use: close one to make room.
            connections[idle] = .closing
            actions.append(.closeConnection(idle))
        }
        return actions
    }

    mutating func cancelRequest(_ request: Int) -> [Action] {
        guard let index = waiters.firstIndex(where: { $0.id == request }) else { return [] }
        waiters.remove(at: index)
        return [.failRequest(request, .cancelled)]
    }

    // MARK: Connections

    mutating func connectionEstablished(_ connection: Int) -> [Action] {
        guard connections[connection] == .connecting else { return [] }
        if isShutDown {
            connections[connection] = .closing
            return [.closeConnection(connection)]
        }
        if !waiters.isEmpty {
            let waiter = waiters.removeFirst()
            connections[connection] = .leased
            return [.lease(connection: connection, request: waiter.id)]
        }
        connections[connection] = .idle
        return [.scheduleIdleTimeout(connection)]
    }

    /// The attempt failed: the oldest waiter gets the error, and the others get a new attempt if
    /// there is room.
    mutating func connectionFailed(_ connection: Int) -> [Action] {
        guard connections.removeValue(forKey: connection) != nil else { return [] }
        var actions: [Action] = []
        if !waiters.isEmpty {
            actions.append(.failRequest(waiters.removeFirst().id, .connectionFailed))
        }
        return actions + openConnectionsForWaiters()
    }

    /// An exchange ended; a `reusable` connection can serve again, any other is closing.
    mutating func exchangeFinished(on connection: Int, reusable: Bool) -> [Action] {
        guard connections[connection] == .leased else { return [] }
        guard reusable, !isShutDown else {
            connections[connection] = .closing
            return [.closeConnection(connection)] + openConnectionsForWaiters()
        }
        if let index = waiters.firstIndex(where: { !$0.needsFreshConnection }) {
            let waiter = waiters.remove(at: index)
            return [.lease(connection: connection, request: waiter.id)]
        }
        if !waiters.isEmpty && roomForMore == 0 {
            // Only waiters that need a new connection remain and the limit is reached: make room.
            connections[connection] = .closing
            return [.closeConnection(connection)]
        }
        connections[connection] = .idle
        return [.scheduleIdleTimeout(connection)] + openConnectionsForWaiters()
    }

    mutating func idleTimeoutFired(_ connection: Int) -> [Action] {
        guard connections[connection] == .idle else { return [] }
        connections[connection] = .closing
        return [.closeConnection(connection)]
    }

    /// The socket closed, for whatever reason: the connection stops counting.
    mutating func connectionClosed(_ connection: Int) -> [Action] {
        guard let state = connections[connection], state != .connecting else { return [] }
        connections.removeValue(forKey: connection)
        return openConnectionsForWaiters()
    }

    mutating func shutDown() -> [Action] {
        isShutDown = true
        var actions = waiters.map { Action.failRequest($0.id, .shutDown) }
        waiters.removeAll()
        for (connection, state) in connections where state == .idle {
            connections[connection] = .closing
            actions.append(.closeConnection(connection))
        }
        return actions
    }

    // MARK: Helpers

    private var roomForMore: Int { maximumConnections - connections.count }

    /// Opens connections until every waiter has one coming or the limit is reached.
    private mutating func openConnectionsForWaiters() -> [Action] {
        guard !isShutDown else { return [] }
        var actions: [Action] = []
        while waiters.count > connectingCount, roomForMore > 0 {
            let id = nextConnectionID
            nextConnectionID += 1
            connections[id] = .connecting
            actions.append(.createConnection(id))
        }
        return actions
    }
}
