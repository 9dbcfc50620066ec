import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Owns the connections to one origin: runs ``ConnectionPoolStateMachine`` under a lock and performs
/// its actions (open, hand out, close, time out) after the lock is released.
final class ConnectionPool: HTTP1ConnectionDelegate, Sendable {
    private struct State {
        var machine: ConnectionPoolStateMachine
        var connections: [Int: HTTP1Connection] = [:]
        var waiters: [Int: @Sendable (Result<HTTP1Connection, any Error>) -> Void] = [:]
        /// Errors to give waiters whose cancellation raced their registration, or whose connection failed.
        var failures: [Int: any Error] = [:]
        /// When each idle connection became idle, and which have an idle timer armed. Timers are
        /// never cancelled (that would wake an event loop from another thread on every lease): when
        /// one fires it checks how long its connection has really been idle.
        var idleSince: [Int: NIODeadline] = [:]
        var idleTimerArmed: Set<Int> = []
        /// Timers of requests queued with a total deadline.
        var waitTimers: [Int: Scheduled<Void>] = [:]
    }

    let origin: Origin
    private let factory: ConnectionFactory
    private let idleTimeout: TimeAmount
    private let connectTimeout: TimeAmount?
    private let state: NIOLockedValueBox<State>
    private let logger: Logger
    /// Told when the pool's last connection has closed and nobody waits.
    private let onEmpty: @Sendable (ConnectionPool) -> Void

    init(
        origin: Origin, factory: ConnectionFactory, maximumConnections: Int, idleTimeout: TimeAmount, connectTimeout: TimeAmount?,
        logger: Logger, onEmpty: @escaping @Sendable (ConnectionPool) -> Void = { _ in }
    ) {
        self.onEmpty = onEmpty
        self.origin = origin
        self.factory = factory
        self.idleTimeout = idleTimeout
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.state = NIOLockedValueBox(State(machine: ConnectionPoolStateMachine(maximumConnections: maximumConnections)))
    }

    /// Asks for a connection; `completion` gets it (or why there is none), at once if one is idle,
    /// else on the event loop that frees or opens one. `cancel(request:error:)` with the same id ends
    /// the wait, and so does `deadline` if the request has to queue.
    func lease(
        request: Int, needsFreshConnection: Bool, deadline: NIODeadline?,
        completion: @escaping @Sendable (Result<HTTP1Connection, any Error>) -> Void
    ) {
        let registered = state.withLockedValue { state -> Result<[ConnectionPoolStateMachine.Action], any Error> in
            // Cancelled before it asked: fail at once.
            if let failure = state.failures.removeValue(forKey: request) { return .failure(failure) }
            state.waiters[request] = completion
            let actions = state.machine.requestLease(request, needsFreshConnection: needsFreshConnection)
            let servedAtOnce = actions.contains { if case .lease(_, request) = $0 { true } else { false } }
            if let deadline, !servedAtOnce {
                state.waitTimers[request] = factory.eventLoopGroup.any().scheduleTask(deadline: deadline) {
                    self.cancel(
                        request: request, error: TransportError.timedOut("waiting for a connection (the request's total time limit)"))
                }
            }
            return .success(actions)
        }
        switch registered {
        case .success(let actions): run(actions)
        case .failure(let failure): completion(.failure(failure))
        }
    }

    /// Stops waiting for a connection, failing the wait with `error`. Harmless once leased.
    func cancel(request: Int, error: any Error) {
        state.withLockedValue { _ = $0.waitTimers.removeValue(forKey: request) }
        let actions = state.withLockedValue { state -> [ConnectionPoolStateMachine.Action] in
            guard state.waiters[request] != nil else {
                // Not registered yet: the lease call will find the error and throw it at once.
                state.failures[request] = error
                return []
            }
            state.failures[request] = error
            return state.machine.cancelRequest(request)
        }
        run(actions)
    }

    /// Drops a failure recorded for a request that never waited (it finished first).
    func forget(request: Int) {
        state.withLockedValue { _ = $0.failures.removeValue(forKey: request) }
    }

    func shutDown() {
        run(state.withLockedValue { $0.machine.shutDown() })
    }

    // MARK: HTTP1ConnectionDelegate

    func exchangeFinished(connectionID: Int, reusable: Bool) {
        run(state.withLockedValue { $0.machine.exchangeFinished(on: connectionID, reusable: reusable) })
    }

    func idleConnectionClosed(connectionID: Int) {
        // The close future reports it too; nothing more to do here.
    }

    // MARK: Actions

    private func run(_ actions: [ConnectionPoolStateMachine.Action]) {
        for action in actions {
            switch action {
            case .lease(let connectionID, let request):
                let (waiter, connection) = state.withLockedValue { state in
                    state.waitTimers.removeValue(forKey: request)?.cancel()
                    state.idleSince.removeValue(forKey: connectionID)
                    return (state.waiters.removeValue(forKey: request), state.connections[connectionID])
                }
                if let connection {
                    waiter?(.success(connection))
                } else {
                    waiter?(.failure(TransportError.connectionLost("the pooled connection vanished")))
                }
            case .createConnection(let connectionID):
                createConnection(connectionID)
            case .closeConnection(let connectionID):
                let connection = state.withLockedValue { state in
                    state.idleSince.removeValue(forKey: connectionID)
                    return state.connections[connectionID]
                }
                connection?.close()
            case .scheduleIdleTimeout(let connectionID):
                scheduleIdleTimeout(connectionID)
            case .failRequest(let request, let reason):
                let (waiter, failure) = state.withLockedValue { state in
                    state.waitTimers.removeValue(forKey: request)?.cancel()
                    return (state.waiters.removeValue(forKey: request), state.failures.removeValue(forKey: request))
                }
                let error: any Error
                switch reason {
                case .cancelled: error = failure ?? TransportError.cancelled
                case .shutDown: error = TransportError(.cancelled, "the transport was shut down")
                case .connectionFailed: error = failure ?? TransportError(.cannotConnectToHost, "could not connect to \(origin)")
                case .retired: error = RetiredPoolError()
                }
                waiter?(.failure(error))
            }
        }
    }

    private func createConnection(_ connectionID: Int) {
        let factory = self.factory
        Task {
            do {
                let connection = try await factory.makeConnection(
                    id: connectionID, origin: origin, connectTimeout: connectTimeout, delegate: self)
                let actions = state.withLockedValue { state in
                    state.connections[connectionID] = connection
                    return state.machine.connectionEstablished(connectionID)
                }
                connection.channel.closeFuture.whenComplete { _ in self.connectionClosed(connectionID) }
                run(actions)
            } catch {
                logger.debug("connection failed", metadata: ["origin": "\(origin)", "error": "\(error)"])
                let actions = state.withLockedValue { state in
                    let actions = state.machine.connectionFailed(connectionID)
                    // The waiter that fails learns why.
                    for case .failRequest(let request, .connectionFailed) in actions { state.failures[request] = error }
                    return actions
                }
                run(actions)
                notifyIfEmpty()
            }
        }
    }

    private func connectionClosed(_ connectionID: Int) {
        let actions = state.withLockedValue { state in
            state.connections.removeValue(forKey: connectionID)
            state.idleSince.removeValue(forKey: connectionID)
            return state.machine.connectionClosed(connectionID)
        }
        run(actions)
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

    /// Notes that the connection became idle, arming its timer unless one is armed already.
    private func scheduleIdleTimeout(_ connectionID: Int) {
        state.withLockedValue { state in
            guard let connection = state.connections[connectionID] else { return }
            let now = connection.channel.eventLoop.now
            state.idleSince[connectionID] = now
            guard !state.idleTimerArmed.contains(connectionID) else { return }
            state.idleTimerArmed.insert(connectionID)
            armIdleTimer(connectionID, on: connection, at: now + idleTimeout)
        }
    }

    private func armIdleTimer(_ connectionID: Int, on connection: HTTP1Connection, at deadline: NIODeadline) {
        connection.channel.eventLoop.scheduleTask(deadline: deadline) {
            let actions = self.state.withLockedValue { state -> [ConnectionPoolStateMachine.Action] in
                state.idleTimerArmed.remove(connectionID)
                // Leased or gone since: the next release arms a new timer.
                guard let since = state.idleSince[connectionID] else { return [] }
                let idleUntil = since + self.idleTimeout
                if idleUntil > connection.channel.eventLoop.now {
                    state.idleTimerArmed.insert(connectionID)
                    self.armIdleTimer(connectionID, on: connection, at: idleUntil)
                    return []
                }
                return state.machine.idleTimeoutFired(connectionID)
            }
            self.run(actions)
        }
    }
}

/// A lease on a pool that its owner has dropped: the request asks for the origin's new pool.
struct RetiredPoolError: Error {}
