import AFCollections
import DequeModule
import NIOCore

/// The connections to one origin, the requests waiting for one, and every timer the pool runs.
///
/// Every connection counts against the per-host limit from the moment it starts connecting until
/// its socket has closed (`closing` included), so the server never sees more than the limit. An
/// HTTP/1.1 connection carries one exchange at a time; an HTTP/2 connection as many as the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS`, and requests beyond that wait for one of its streams. An
/// origin that speaks h2 gets one connection while it carries few streams; once one carries
/// ``streamsBeforeSpreading``, a second opens (up to ``maximumHTTP2Connections``, one per event loop
/// and two at most, within the per-host limit), and each new stream goes to the connection carrying
/// the fewest: every stream of a connection is framed and encrypted on its one event loop, so a
/// busy origin's streams then share the cores. A connection going away is replaced as well. While a
/// TLS origin's protocol is unknown, connections open one at a time: the first tells whether the
/// origin speaks h2, so no HTTP/1.1-sized burst is opened to it.
///
/// Waiters are served in arrival order, each until its own deadline (its request's timeout, within
/// its total time limit). A waiter that must not reuse a connection (a retry after a stale one) is
/// served only by a connection opened after it arrived. A connection attempt is bounded by the
/// latest deadline of the waiters it is opened for (``deadlineForNewConnection``), so one request's
/// short timeout never bounds another's wait. An attempt that failed fails the oldest waiter, and
/// every waiter once no other connection is open or opening; one that ran out of time fails only the
/// waiters whose own deadline has passed, or who have none. Later attempts back off exponentially until one succeeds.
///
/// Timers are actions: the machine says when to arm a waiter's deadline, a connection's idle timer
/// or the backoff, and when to cancel them; the owner keeps the `Scheduled` handles. Nothing is kept
/// of a request that is not waiting: a cancellation that overtakes its request's registration is
/// applied by the exchange's controller once the registration is made. The owner performs the returned actions after releasing its lock; nothing here does I/O or reads a
/// clock (`now` comes in with each event), so every path is tested as a value.
struct ConnectionPoolStateMachine {
    enum HTTPVersion: Equatable {
        case http1
        case http2
    }

    enum ConnectionState: Equatable {
        case connecting
        /// Open with `leased` exchanges running, at most `capacity` (1 for HTTP/1.1); idle at 0.
        case open(HTTPVersion, leased: Int, capacity: Int)
        /// Asked to close, closing by itself, or told by its server to go away: takes nothing new
        /// and still counts until its socket closes.
        case closing
    }

    struct Waiter: Equatable {
        var id: Int
        var needsFreshConnection: Bool
        var deadline: NIODeadline?
    }

    enum FailureReason: Equatable {
        case cancelled
        case shutDown
        /// The waiter's deadline passed while it waited.
        case timedOut
        /// The connection opened for this request failed; the owner has the error.
        case connectionFailed
        /// The pool was retired (empty and unused): ask the transport for the origin's new pool.
        case retired
    }

    /// A timer the pool runs; the machine says when to arm and cancel each.
    enum Timer: Hashable {
        /// Closes a connection that stayed idle for the idle timeout.
        case idle(connection: Int)
        /// Fails a queued request at its deadline.
        case wait(request: Int)
        /// Ends the pause after a failed connection attempt.
        case backoff
    }

    /// What one event asks of the pool, in order: most events ask one thing, kept inline.
    typealias Actions = InlineFirstList<Action>

    enum Action: Equatable {
        /// Hand the connection to the request (for HTTP/2, one of its streams).
        case lease(connection: Int, request: Int)
        case createConnection(Int)
        case closeConnection(Int)
        /// Arm the timer; call ``timerFired(_:now:)`` when it fires.
        case schedule(Timer, at: NIODeadline)
        case cancel(Timer)
        case failRequest(Int, FailureReason)
    }

    /// What an HTTP/2 connection reported before the pool had it registered.
    private struct EarlyNews {
        var capacity: Int?
        var goingAway = false
    }

    let maximumConnections: Int
    /// How many HTTP/2 connections the origin's streams may spread over (each on its own event loop).
    let maximumHTTP2Connections: Int
    let idleTimeout: TimeAmount
    /// Whether connections may negotiate HTTP/2 (TLS with h2 offered).
    let mayNegotiateHTTP2: Bool
    private(set) var connections = ConnectionTable()
    private(set) var waiters: Deque<Waiter> = []
    /// What the origin's newest connection negotiated.
    private(set) var httpVersion: HTTPVersion?
    private(set) var isShutDown = false
    /// Dropped by its owner for being empty: every later request goes to a new pool.
    private(set) var isRetired = false
    /// Connection attempts that failed since the last one that succeeded.
    private(set) var consecutiveFailures = 0
    /// When each idle connection became idle. An idle timer is not cancelled when its connection is
    /// leased (that would wake an event loop from another thread on every lease): when it fires it
    /// checks how long the connection has really been idle.
    private(set) var idleSince: [Int: NIODeadline] = [:]
    /// The timers armed and not yet fired or cancelled.
    private(set) var armedTimers: Set<Timer> = []
    /// No connection attempt before this, after a failed one; the backoff timer is armed meanwhile.
    private(set) var retryNotBefore: NIODeadline?
    private var earlyNews: [Int: EarlyNews] = [:]
    private var nextConnectionID: Int

    static let firstBackoff = TimeAmount.milliseconds(25)
    static let longestBackoff = TimeAmount.seconds(2)
    /// The streams an HTTP/2 connection carries when a lease opens another for the origin (W9 on two
    /// cores: 8 and 4 did as well, 16 a little worse).
    static let streamsBeforeSpreading = 8

    init(
        maximumConnections: Int, maximumHTTP2Connections: Int = 1, idleTimeout: TimeAmount = .seconds(60), mayNegotiateHTTP2: Bool = false,
        firstConnectionID: Int = 0
    ) {
        self.maximumConnections = max(1, maximumConnections)
        self.maximumHTTP2Connections = max(1, maximumHTTP2Connections)
        self.idleTimeout = idleTimeout
        self.mayNegotiateHTTP2 = mayNegotiateHTTP2
        self.nextConnectionID = firstConnectionID
    }

    var connectingCount: Int { connections.connectingCount }

    /// True when no connection exists and nobody waits: the pool can be dropped.
    var isEmpty: Bool { connections.isEmpty && waiters.isEmpty }

    /// How long to wait before the next attempt after `failures` consecutive failed ones.
    static func backoff(afterFailures failures: Int) -> TimeAmount {
        let doublings = min(max(failures - 1, 0), 16)
        return min(firstBackoff * (1 << doublings), longestBackoff)
    }

    // MARK: Requests

    /// Retires the pool if it is empty and not backing off (a new pool would forget the failures);
    /// whether it did.
    mutating func retireIfEmpty() -> Bool {
        guard isEmpty, !isShutDown, retryNotBefore == nil else { return false }
        isRetired = true
        return true
    }

    mutating func requestLease(
        _ request: Int, needsFreshConnection: Bool = false, deadline: NIODeadline? = nil, now: NIODeadline
    )
        -> Actions
    {
        if isShutDown { return Actions(.failRequest(request, .shutDown)) }
        if isRetired { return Actions(.failRequest(request, .retired)) }
        if !needsFreshConnection, let connection = connectionWithRoom() {
            return Actions(lease(connection, to: request)) + spreadingHTTP2(from: connection)
        }
        waiters.append(Waiter(id: request, needsFreshConnection: needsFreshConnection, deadline: deadline))
        var actions = deadline.map { Actions(arm(.wait(request: request), at: $0)) } ?? []
        let opening = openConnectionsForWaiters()
        actions += opening
        if opening.isEmpty, needsFreshConnection, waiters.count > connectingCount, let idle = idleConnection() {
            // Full of idle connections this request may not use: close one to make room.
            actions.append(close(idle))
        }
        return actions
    }

    /// Ends a request's wait. A request not waiting (leased already, failed, or not registered yet)
    /// is not the pool's to end: the pool keeps nothing of it. A cancel that overtakes its request's
    /// registration is its owner's to apply once the registration is made
    /// (``ExchangeController/leaseRequested(pool:request:)``).
    mutating func cancelRequest(_ request: Int) -> Actions {
        guard let index = waiters.firstIndex(where: { $0.id == request }) else { return [] }
        return failing(waiters.remove(at: index), .cancelled)
    }

    // MARK: Timers

    mutating func timerFired(_ timer: Timer, now: NIODeadline) -> Actions {
        guard armedTimers.remove(timer) != nil else { return [] }
        switch timer {
        case .idle(let connection):
            guard case .open(_, leased: 0, _) = connections[connection], let since = idleSince[connection] else { return [] }
            // Used since the timer was armed: wait for the rest of the new idle period.
            if since + idleTimeout > now { return Actions(arm(timer, at: since + idleTimeout)) }
            return Actions(close(connection))
        case .wait(let request):
            guard let index = waiters.firstIndex(where: { $0.id == request }) else { return [] }
            waiters.remove(at: index)
            return Actions(.failRequest(request, .timedOut))
        case .backoff:
            // A failure since it was armed pushed the next attempt back.
            if let notBefore = retryNotBefore, notBefore > now { return Actions(arm(.backoff, at: notBefore)) }
            retryNotBefore = nil
            return openConnectionsForWaiters()
        }
    }

    // MARK: Connections

    mutating func connectionEstablished(_ connection: Int, version: HTTPVersion, capacity: Int = 1, now: NIODeadline) -> Actions {
        guard connections[connection] == .connecting else { return [] }
        consecutiveFailures = 0
        retryNotBefore = nil
        httpVersion = version
        var actions = disarm(.backoff)
        let news = earlyNews.removeValue(forKey: connection)
        if isShutDown { return actions + Actions(close(connection)) }
        if news?.goingAway == true {
            // Told to go away before it was registered: it closes itself once its streams end.
            connections[connection] = .closing
            return actions + openConnectionsForWaiters()
        }
        connections[connection] = .open(version, leased: 0, capacity: max(1, news?.capacity ?? capacity))
        actions += serveWaiters(on: connection, isNew: true, now: now)
        return actions + spreadingHTTP2(from: connection) + openConnectionsForWaiters()
    }

    /// An HTTP/2 server changed its stream limit.
    mutating func connectionCapacityChanged(_ connection: Int, capacity: Int, now: NIODeadline) -> Actions {
        switch connections[connection] {
        case .connecting:
            earlyNews[connection, default: EarlyNews()].capacity = capacity
            return []
        case .open(let version, let leased, _):
            connections[connection] = .open(version, leased: leased, capacity: max(1, capacity))
            return serveWaiters(on: connection, isNew: false, now: now)
        case .closing, nil:
            return []
        }
    }

    /// An HTTP/2 server sent GOAWAY: the connection takes no new stream and closes itself once its
    /// streams are done.
    mutating func connectionGoingAway(_ connection: Int) -> Actions {
        switch connections[connection] {
        case .connecting:
            earlyNews[connection, default: EarlyNews()].goingAway = true
            return []
        case .open:
            connections[connection] = .closing
            idleSince[connection] = nil
            return openConnectionsForWaiters()
        case .closing, nil:
            return []
        }
    }

    /// The attempt failed: the oldest waiter gets the error, and so does every other once no
    /// connection is left to serve them. An attempt that ran out of time (`timedOut`) fails only the
    /// waiters whose deadline has passed (and those with none, whose bound was the attempt's): a
    /// later one waits on for its own. Later attempts wait for the backoff.
    mutating func connectionFailed(_ connection: Int, timedOut: Bool = false, now: NIODeadline) -> Actions {
        guard connections.removeValue(forKey: connection) != nil else { return [] }
        earlyNews[connection] = nil
        consecutiveFailures += 1
        let notBefore = now + Self.backoff(afterFailures: consecutiveFailures)
        retryNotBefore = notBefore
        var actions = Actions()
        // An open HTTP/2 connection will serve every waiter but one that needs a fresh connection: an
        // attempt that failed beside it (one opened to spread its streams) fails none of the others.
        let servedByHTTP2 = connections.openHTTP2Count > 0
        let mayFail = { (waiter: Waiter) in !servedByHTTP2 || waiter.needsFreshConnection }
        if timedOut {
            // A waiter with no deadline of its own was bounded by the factory's, which has passed too.
            while let index = waiters.firstIndex(where: { mayFail($0) && ($0.deadline.map { $0 <= now } ?? true) }) {
                actions += failing(waiters.remove(at: index), .connectionFailed)
            }
        } else {
            if let index = waiters.firstIndex(where: mayFail) {
                actions += failing(waiters.remove(at: index), .connectionFailed)
            }
            let othersMayServe = connections.notClosingCount > 0
            if !othersMayServe {
                while !waiters.isEmpty { actions += failing(waiters.removeFirst(), .connectionFailed) }
            }
        }
        // Armed even with nobody waiting: the pool is kept (not retired) until it fires.
        if !armedTimers.contains(.backoff) { actions.append(arm(.backoff, at: notBefore)) }
        return actions
    }

    /// An exchange ended; a `reusable` connection can serve again, any other is closing.
    mutating func exchangeFinished(on connection: Int, reusable: Bool, now: NIODeadline) -> Actions {
        guard case .open(let version, let leased, let capacity) = connections[connection], leased > 0 else { return [] }
        let stillLeased = leased - 1
        guard reusable, !isShutDown || stillLeased > 0 else {
            return Actions(close(connection)) + openConnectionsForWaiters()
        }
        connections[connection] = .open(version, leased: stillLeased, capacity: capacity)
        if isShutDown { return [] }
        if let index = waiters.firstIndex(where: { !$0.needsFreshConnection }) {
            let waiter = waiters.remove(at: index)
            return disarmingTimer(of: waiter) + Actions(lease(connection, to: waiter.id)) + spreadingHTTP2(from: connection)
        }
        if stillLeased == 0, !waiters.isEmpty, roomForMore == 0 {
            // Only waiters that need a new connection remain and the limit is reached: make room.
            return Actions(close(connection))
        }
        let idle = stillLeased == 0 ? becameIdle(connection, now: now) : []
        return idle + openConnectionsForWaiters()
    }

    /// The socket closed, for whatever reason: the connection stops counting.
    mutating func connectionClosed(_ connection: Int) -> Actions {
        guard let state = connections[connection], state != .connecting else { return [] }
        connections.removeValue(forKey: connection)
        idleSince[connection] = nil
        return disarm(.idle(connection: connection)) + openConnectionsForWaiters()
    }

    mutating func shutDown() -> Actions {
        isShutDown = true
        var actions = disarm(.backoff)
        while !waiters.isEmpty { actions += failing(waiters.removeFirst(), .shutDown) }
        for (connection, state) in connections {
            guard case .open(_, leased: 0, _) = state else { continue }
            actions.append(close(connection))
        }
        return actions
    }

    /// How long a connection opened now may take: until the latest deadline among the waiters, or
    /// nil (the factory's own bound) when one of them has none.
    var deadlineForNewConnection: NIODeadline? {
        var latest: NIODeadline?
        for waiter in waiters {
            guard let deadline = waiter.deadline else { return nil }
            latest = max(latest ?? deadline, deadline)
        }
        return latest
    }

    // MARK: Helpers

    private var roomForMore: Int { maximumConnections - connections.count }

    /// The open connection with room for another exchange: the one carrying the fewest (an HTTP/2
    /// connection's streams), the lowest id among equals.
    private func connectionWithRoom() -> Int? {
        guard connections.withRoomCount > 0 else { return nil }
        var best: (id: Int, leased: Int)?
        for (id, state) in connections {
            guard case .open(_, let leased, let capacity) = state, leased < capacity else { continue }
            if best.map({ leased < $0.leased || (leased == $0.leased && id < $0.id) }) ?? true { best = (id, leased) }
        }
        return best?.id
    }

    /// Opens another HTTP/2 connection when `connection`, just leased, carries
    /// ``streamsBeforeSpreading`` streams (or is full, below that) and the origin has fewer than
    /// ``maximumHTTP2Connections`` connections open or opening (whatever they negotiated: one that fell
    /// back to HTTP/1.1 counts), room under the per-host limit, and no backoff running.
    private mutating func spreadingHTTP2(from connection: Int) -> Actions {
        guard case .open(.http2, let leased, let capacity) = connections[connection], leased >= min(Self.streamsBeforeSpreading, capacity),
            connections.notClosingCount < maximumHTTP2Connections, roomForMore > 0, !isShutDown, !isRetired,
            retryNotBefore == nil
        else { return [] }
        return Actions(newConnection())
    }

    private mutating func newConnection() -> Action {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = .connecting
        return .createConnection(id)
    }

    /// Open connections carrying exchanges (`active`) and waiting for one (`idle`); those opening or
    /// closing are neither.
    var connectionCounts: (active: Int, idle: Int) {
        (connections.activeCount, connections.idleCount)
    }

    private func idleConnection() -> Int? {
        guard connections.idleCount > 0 else { return nil }
        return connections.first { if case .open(_, leased: 0, _) = $0.value { true } else { false } }?.key
    }

    private mutating func lease(_ connection: Int, to request: Int) -> Action {
        if case .open(let version, let leased, let capacity) = connections[connection] {
            connections[connection] = .open(version, leased: leased + 1, capacity: capacity)
        }
        idleSince[connection] = nil
        return .lease(connection: connection, request: request)
    }

    /// Marks the connection closing (it counts until its socket closes) and says to close it.
    private mutating func close(_ connection: Int) -> Action {
        connections[connection] = .closing
        idleSince[connection] = nil
        return .closeConnection(connection)
    }

    /// Leases the connection to waiters while it has room; a connection that stays idle arms its timer.
    private mutating func serveWaiters(on connection: Int, isNew: Bool, now: NIODeadline) -> Actions {
        var actions = Actions()
        while case .open(_, let leased, let capacity) = connections[connection], leased < capacity,
            let index = waiters.firstIndex(where: { isNew || !$0.needsFreshConnection })
        {
            let waiter = waiters.remove(at: index)
            actions += disarmingTimer(of: waiter) + Actions(lease(connection, to: waiter.id))
        }
        if case .open(_, leased: 0, _) = connections[connection] { actions += becameIdle(connection, now: now) }
        return actions
    }

    private mutating func becameIdle(_ connection: Int, now: NIODeadline) -> Actions {
        idleSince[connection] = now
        let timer = Timer.idle(connection: connection)
        return armedTimers.contains(timer) ? [] : Actions(arm(timer, at: now + idleTimeout))
    }

    private mutating func arm(_ timer: Timer, at deadline: NIODeadline) -> Action {
        armedTimers.insert(timer)
        return .schedule(timer, at: deadline)
    }

    private mutating func disarm(_ timer: Timer) -> Actions {
        armedTimers.remove(timer) == nil ? [] : Actions(.cancel(timer))
    }

    private mutating func disarmingTimer(of waiter: Waiter) -> Actions {
        disarm(.wait(request: waiter.id))
    }

    private mutating func failing(_ waiter: Waiter, _ reason: FailureReason) -> Actions {
        disarmingTimer(of: waiter) + Actions(.failRequest(waiter.id, reason))
    }

    /// Opens connections until every waiter has one coming or the limit is reached; none while an
    /// HTTP/2 connection serves the origin (its waiters wait for a stream) or during the backoff
    /// after a failure, and only one at a time while the origin may speak HTTP/2.
    private mutating func openConnectionsForWaiters() -> Actions {
        guard !isShutDown, !isRetired, retryNotBefore == nil, waiters.count > connectingCount, roomForMore > 0 else { return [] }
        let servedByHTTP2 = connections.openHTTP2Count > 0
        guard !servedByHTTP2 || waiters.contains(where: \.needsFreshConnection) else { return [] }
        let oneAtATime = mayNegotiateHTTP2 && httpVersion != .http1
        var actions = Actions()
        while waiters.count > connectingCount, roomForMore > 0, !(oneAtATime && connectingCount > 0) {
            actions.append(newConnection())
        }
        return actions
    }
}
