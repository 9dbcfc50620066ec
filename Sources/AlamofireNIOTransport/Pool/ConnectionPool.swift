import AFCollections
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// What a ``ConnectionPool`` needs of whoever opens its connections: ``ConnectionFactory`` in use,
/// a scripted one in the tests' simulated pool runs.
protocol ConnectionEstablishing: Sendable {
    /// Where the pool arms its timers, and its clock: the pool reads the time from one of its event
    /// loops' `now`, so a `NIOAsyncTestingEventLoop` lets a test turn the pool's clock. The
    /// deadlines given to ``ConnectionPool/lease(request:needsFreshConnection:deadline:completion:)``
    /// must be on that clock: ``HTTPTransport`` computes them from one of the same group's loops' `now`.
    var eventLoopGroup: any EventLoopGroup { get }
    /// Whether TLS connections offer `h2` by ALPN.
    var offersHTTP2: Bool { get }
    /// Opens connection `id` to `origin` on `eventLoop`, by `deadline` if there is one.
    func makeConnection(
        id: Int, origin: Origin, deadline: NIODeadline?, eventLoop: any EventLoop,
        delegate: any ExchangeHandlerDelegate & HTTP2ConnectionDelegate
    ) async throws -> EstablishedConnection
}

extension ConnectionFactory: ConnectionEstablishing {}

/// Owns the connections to one origin: runs ``ConnectionPoolStateMachine`` under a lock and performs
/// its actions (open, hand out, close, arm and cancel timers) after the lock is released. Its time
/// is its factory's event loops' `now`, never the system clock read directly.
final class ConnectionPool: ExchangeHandlerDelegate, HTTP2ConnectionDelegate, Sendable {
    typealias Machine = ConnectionPoolStateMachine
    typealias LeaseCompletion = @Sendable (Result<any TransportConnection, any Error>) -> Void

    private struct State {
        var machine: Machine
        let eventLoops: any EventLoopGroup
        /// How many loops `eventLoops` has.
        let eventLoopCount: Int
        var connections: [Int: any TransportConnection] = [:]
        var waiters: [Int: LeaseCompletion] = [:]
        /// Errors to give waiters being failed (cancelled, or their connection failed), read in the
        /// lock section that fails them.
        var failures: [Int: any Error] = [:]
        /// The handles of the timers the machine has armed.
        var timers: [Machine.Timer: Scheduled<Void>] = [:]
        /// The connection counts last seen, when someone watches them.
        var counts = (active: 0, idle: 0)

        /// The loops of the connections still opening.
        var connectingLoops: [Int: any EventLoop] = [:]

        /// Where connection `id` opens (see ``ConnectionPool/eventLoop(in:count:avoiding:)``), away
        /// from the loops of the pool's connections, those still opening included.
        mutating func eventLoopForNewConnection(_ id: Int) -> any EventLoop {
            let used = connections.values.map(\.channel.eventLoop) + connectingLoops.values
            let loop = ConnectionPool.eventLoop(in: eventLoops, count: eventLoopCount, avoiding: used)
            connectingLoops[id] = loop
            return loop
        }

        /// Turns the machine's actions into work for after the lock: a lease or a failure becomes the
        /// waiter's completion with its connection or error, taken under the same lock as the
        /// machine's decision, so a connection that closes meanwhile cannot slip between the two.
        mutating func work(for actions: Machine.Actions, origin: Origin) -> InlineFirstList<Work> {
            actions.mapInline { action in
                switch action {
                case .lease(let connectionID, let request):
                    // Closed between the machine's lease and now: the request goes again on a new connection.
                    let connection = connections[connectionID].map { Result<any TransportConnection, any Error>.success($0) }
                    return .complete(
                        waiters.removeValue(forKey: request),
                        connection
                            ?? .failure(
                                RetryableExchangeError(
                                    .connectionLost("the pooled connection closed as it was leased"), onFreshConnection: true,
                                    reason: .unprocessed(connectionAnswered: false))))
                case .failRequest(let request, let reason):
                    let failure = failures.removeValue(forKey: request)
                    let error: any Error
                    switch reason {
                    case .cancelled: error = failure ?? TransportError.cancelled
                    case .timedOut: error = TransportError.timedOut("waiting for a connection (the request's timeout)")
                    case .shutDown: error = TransportError.shutDown
                    case .connectionFailed: error = failure ?? TransportError(.cannotConnectToHost, "could not connect to \(origin)")
                    case .retired: error = RetiredPoolError()
                    }
                    return .complete(waiters.removeValue(forKey: request), .failure(error))
                case .closeConnection(let connectionID):
                    return .close(connections[connectionID])
                case .cancel(let timer):
                    return .cancel(timers.removeValue(forKey: timer))
                case .createConnection(let connectionID):
                    return .connect(
                        connectionID, deadline: machine.deadlineForNewConnection, eventLoop: eventLoopForNewConnection(connectionID))
                case .schedule:
                    return .perform(action)
                }
            }
        }
    }

    /// The group's next event loop that none of `used` is (so that an origin's connections, HTTP/2's
    /// above all, spread over the cores), or simply the next one when `used` has as many loops as the
    /// group's `count`.
    static func eventLoop(in group: any EventLoopGroup, count: Int, avoiding used: [any EventLoop]) -> any EventLoop {
        var candidate = group.next()
        // Every loop taken (HTTP/1.1's many connections): no scan.
        guard used.count < count else { return candidate }
        for _ in 1..<max(1, count) where used.contains(where: { $0 === candidate }) {
            candidate = group.next()
        }
        return candidate
    }

    /// What is left to do once the lock is released.
    private enum Work {
        case complete(LeaseCompletion?, Result<any TransportConnection, any Error>)
        case close((any TransportConnection)?)
        case cancel(Scheduled<Void>?)
        /// Opens a connection on the loop given, bounded by the waiters' latest deadline.
        case connect(Int, deadline: NIODeadline?, eventLoop: any EventLoop)
        case perform(Machine.Action)
    }

    let origin: Origin
    private let factory: any ConnectionEstablishing
    /// The event loop whose `now` is the pool's clock.
    private let clock: any EventLoop
    private let state: NIOLockedValueBox<State>
    private let logger: Logger
    /// Told when the pool's last connection has closed and nobody waits.
    private let onEmpty: @Sendable (ConnectionPool) -> Void
    /// Told when the pool's connection counts have changed, when someone watches them.
    private let onChange: (@Sendable (ConnectionPool) -> Void)?

    init(
        origin: Origin, factory: any ConnectionEstablishing, maximumConnections: Int, idleTimeout: TimeAmount, logger: Logger,
        onEmpty: @escaping @Sendable (ConnectionPool) -> Void = { _ in },
        onChange: (@Sendable (ConnectionPool) -> Void)? = nil
    ) {
        self.onEmpty = onEmpty
        self.onChange = onChange
        self.origin = origin
        self.factory = factory
        self.clock = factory.eventLoopGroup.next()
        self.logger = logger
        let group = factory.eventLoopGroup
        let loopCount = group.makeIterator().reduce(0) { count, _ in count + 1 }
        let machine = Machine(
            maximumConnections: maximumConnections, maximumHTTP2Connections: min(2, loopCount), idleTimeout: idleTimeout,
            mayNegotiateHTTP2: origin.isTLS && factory.offersHTTP2)
        self.state = NIOLockedValueBox(State(machine: machine, eventLoops: group, eventLoopCount: loopCount))
    }

    /// Asks for a connection; `completion` gets it (or why there is none), at once if one has room,
    /// else on the event loop that frees or opens one. `cancel(request:error:)` with the same id ends
    /// the wait, and so does `deadline` if the request has to queue.
    func lease(request: Int, needsFreshConnection: Bool, deadline: NIODeadline?, completion: @escaping LeaseCompletion) {
        update { state in
            state.waiters[request] = completion
            return state.machine.requestLease(request, needsFreshConnection: needsFreshConnection, deadline: deadline, now: clock.now)
        }
    }

    /// Stops waiting for a connection, failing the wait with `error`. Harmless once leased, and
    /// before the request has asked for its lease: the pool keeps nothing of a request not waiting.
    func cancel(request: Int, error: any Error) {
        update { state in
            let actions = state.machine.cancelRequest(request)
            // The failure the wait ends with, read as the actions become work (in this lock section).
            if !actions.isEmpty { state.failures[request] = error }
            return actions
        }
    }

    func shutDown() {
        update { $0.machine.shutDown() }
    }

    /// Requests waiting for a connection, for the tests.
    var waitingRequestCount: Int { state.withLockedValue { $0.machine.waiters.count } }

    /// Connections being opened, for the tests: the count changes in the call that decides to open
    /// one, before the factory is asked.
    var connectingCount: Int { state.withLockedValue { $0.machine.connectingCount } }

    /// The open connections carrying exchanges and those idle, now.
    var connectionCounts: (active: Int, idle: Int) {
        state.withLockedValue { $0.machine.connectionCounts }
    }

    /// Whether the pool's origin is reached over TLS, and its host and port, for reports.
    var originKey: (scheme: String, host: String, port: Int) {
        (origin.isTLS ? "https" : "http", origin.host, origin.port)
    }

    /// Timers armed and not yet fired or cancelled, for the tests.
    var scheduledTimerCount: Int {
        state.withLockedValue { $0.timers.count }
    }

    // MARK: Connection events

    func exchangeFinished(connectionID: Int, reusable: Bool) {
        update { $0.machine.exchangeFinished(on: connectionID, reusable: reusable, now: clock.now) }
    }

    func idleConnectionClosed(connectionID: Int) {
        // The close future reports it too; nothing more to do here.
    }

    func http2Connection(_ connectionID: Int, maximumStreamsChanged maximum: Int) {
        update { $0.machine.connectionCapacityChanged(connectionID, capacity: maximum, now: clock.now) }
    }

    func http2ConnectionGoingAway(_ connectionID: Int) {
        update { $0.machine.connectionGoingAway(connectionID) }
    }

    // MARK: Actions

    /// Runs `change` under the lock, then performs what the machine asked for.
    private func update(_ change: (inout State) -> Machine.Actions) {
        let watched = onChange != nil
        let (work, countsChanged) = state.withLockedValue { state in
            let work = state.work(for: change(&state), origin: origin)
            guard watched else { return (work, false) }
            let counts = state.machine.connectionCounts
            defer { state.counts = counts }
            return (work, counts != state.counts)
        }
        for item in work {
            switch item {
            case .complete(let waiter, let result): waiter?(result)
            case .close(let connection): connection?.close()
            case .cancel(let timer): timer?.cancel()
            case .connect(let connectionID, let deadline, let eventLoop): createConnection(connectionID, deadline: deadline, on: eventLoop)
            case .perform(.schedule(let timer, let deadline)): schedule(timer, at: deadline)
            case .perform: break
            }
        }
        if countsChanged { onChange?(self) }
    }

    private func createConnection(_ connectionID: Int, deadline: NIODeadline?, on eventLoop: any EventLoop) {
        let factory = self.factory
        Task {
            do {
                let connection = try await factory.makeConnection(
                    id: connectionID, origin: origin, deadline: deadline, eventLoop: eventLoop, delegate: self)
                update { state in
                    state.connectingLoops[connectionID] = nil
                    state.connections[connectionID] = connection.connection
                    return state.machine.connectionEstablished(
                        connectionID, version: connection.version, capacity: connection.maximumStreams, now: clock.now)
                }
                connection.connection.channel.closeFuture.whenComplete { _ in self.connectionClosed(connectionID) }
            } catch {
                logger.debug("connection failed", metadata: ["origin": "\(origin)", "error": "\(error)"])
                let timedOut = (error as? TransportError)?.code == .timedOut
                update { state in
                    state.connectingLoops[connectionID] = nil
                    let actions = state.machine.connectionFailed(connectionID, timedOut: timedOut, now: clock.now)
                    // The waiters that fail learn why.
                    for case .failRequest(let request, .connectionFailed) in actions { state.failures[request] = error }
                    return actions
                }
                notifyIfEmpty()
            }
        }
    }

    private func connectionClosed(_ connectionID: Int) {
        update { state in
            state.connections.removeValue(forKey: connectionID)
            return state.machine.connectionClosed(connectionID)
        }
        notifyIfEmpty()
    }

    /// Tells the owner when no connection is left and nobody waits (the last connection of an
    /// origin no one uses closed, or every attempt to reach it failed): it may drop the pool.
    private func notifyIfEmpty() {
        if state.withLockedValue({ $0.machine.isEmpty }) { onEmpty(self) }
    }

    /// Retires the pool if it is still empty, so that no request is served by it any more; whether
    /// it did. The owner then drops it.
    func retireIfEmpty() -> Bool {
        state.withLockedValue { $0.machine.retireIfEmpty() }
    }

    // MARK: Timers

    /// Arms the timer: a connection's on its event loop, the others on the clock's. It is armed outside the
    /// lock and its handle kept only if the machine still wants it then: one that fired or was
    /// cancelled in between is not kept.
    private func schedule(_ timer: Machine.Timer, at deadline: NIODeadline) {
        let eventLoop: any EventLoop
        if case .idle(let connectionID) = timer {
            guard let connection = state.withLockedValue({ $0.connections[connectionID] }) else { return }
            eventLoop = connection.channel.eventLoop
        } else {
            eventLoop = clock
        }
        let scheduled = eventLoop.scheduleTask(deadline: deadline) {
            self.update { state in
                state.timers[timer] = nil
                return state.machine.timerFired(timer, now: self.clock.now)
            }
            // A pool that waited out its backoff with nothing left to do may now be dropped.
            if timer == .backoff { self.notifyIfEmpty() }
        }
        let kept = state.withLockedValue { state in
            guard state.machine.armedTimers.contains(timer) else { return false }
            state.timers[timer] = scheduled
            return true
        }
        if !kept { scheduled.cancel() }
    }
}

/// A lease on a pool that its owner has dropped: the request asks for the origin's new pool.
struct RetiredPoolError: Error {}
