import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Owns the connections to one origin: runs ``ConnectionPoolStateMachine`` under a lock and performs
/// its actions (open, hand out, close, arm and cancel timers) after the lock is released.
final class ConnectionPool: ExchangeHandlerDelegate, HTTP2ConnectionDelegate, Sendable {
    typealias Machine = ConnectionPoolStateMachine
    typealias LeaseCompletion = @Sendable (Result<any TransportConnection, any Error>) -> Void

    private struct State {
        var machine: Machine
        var connections: [Int: any TransportConnection] = [:]
        var waiters: [Int: LeaseCompletion] = [:]
        /// Errors to give waiters whose cancellation raced their registration, or whose connection failed.
        var failures: [Int: any Error] = [:]
        /// The timers the machine has armed, by connection or request.
        var idleTimers: [Int: Scheduled<Void>] = [:]
        var waitTimers: [Int: Scheduled<Void>] = [:]
        var backoffTimer: Scheduled<Void>?
    }

    let origin: Origin
    private let factory: ConnectionFactory
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
        self.connectTimeout = connectTimeout
        self.logger = logger
        let machine = Machine(
            maximumConnections: maximumConnections, idleTimeout: idleTimeout, mayNegotiateHTTP2: origin.isTLS && factory.offersHTTP2)
        self.state = NIOLockedValueBox(State(machine: machine))
    }

    /// Asks for a connection; `completion` gets it (or why there is none), at once if one has room,
    /// else on the event loop that frees or opens one. `cancel(request:error:)` with the same id ends
    /// the wait, and so does `deadline` if the request has to queue.
    func lease(request: Int, needsFreshConnection: Bool, deadline: NIODeadline?, completion: @escaping LeaseCompletion) {
        let actions = state.withLockedValue { state in
            state.waiters[request] = completion
            return state.machine.requestLease(request, needsFreshConnection: needsFreshConnection, deadline: deadline, now: .now())
        }
        run(actions)
    }

    /// Stops waiting for a connection, failing the wait with `error`. Harmless once leased.
    func cancel(request: Int, error: any Error) {
        let actions = state.withLockedValue { state in
            state.failures[request] = error
            return state.machine.cancelRequest(request)
        }
        run(actions)
    }

    /// Drops what the pool noted for a request that is done (a cancellation that came after its lease).
    func forget(request: Int) {
        state.withLockedValue { state in
            state.failures[request] = nil
            state.machine.forgetRequest(request)
        }
    }

    func shutDown() {
        run(state.withLockedValue { $0.machine.shutDown() })
    }

    /// Timers armed and not yet fired or cancelled, for the tests.
    var scheduledTimerCount: Int {
        state.withLockedValue { $0.idleTimers.count + $0.waitTimers.count + ($0.backoffTimer == nil ? 0 : 1) }
    }

    // MARK: Connection events

    func exchangeFinished(connectionID: Int, reusable: Bool) {
        run(state.withLockedValue { $0.machine.exchangeFinished(on: connectionID, reusable: reusable, now: .now()) })
    }

    func idleConnectionClosed(connectionID: Int) {
        // The close future reports it too; nothing more to do here.
    }

    func http2Connection(_ connectionID: Int, maximumStreamsChanged maximum: Int) {
        run(state.withLockedValue { $0.machine.connectionCapacityChanged(connectionID, capacity: maximum, now: .now()) })
    }

    func http2ConnectionGoingAway(_ connectionID: Int) {
        run(state.withLockedValue { $0.machine.connectionGoingAway(connectionID, now: .now()) })
    }

    // MARK: Actions

    private func run(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .lease(let connectionID, let request):
                let (waiter, connection) = state.withLockedValue { state in
                    (state.waiters.removeValue(forKey: request), state.connections[connectionID])
                }
                if let connection {
                    waiter?(.success(connection))
                } else {
                    // Closed between the lease and now: the request goes again on a new connection.
                    waiter?(.failure(StaleConnectionError(error: .connectionLost("the pooled connection closed as it was leased"))))
                }
            case .createConnection(let connectionID):
                createConnection(connectionID)
            case .closeConnection(let connectionID):
                state.withLockedValue { $0.connections[connectionID] }?.close()
            case .scheduleIdleTimeout(let connectionID, let deadline):
                scheduleIdleTimeout(connectionID, at: deadline)
            case .cancelIdleTimeout(let connectionID):
                state.withLockedValue { $0.idleTimers.removeValue(forKey: connectionID) }?.cancel()
            case .scheduleWaitTimeout(let request, let deadline):
                scheduleWaitTimeout(request, at: deadline)
            case .cancelWaitTimeout(let request):
                state.withLockedValue { $0.waitTimers.removeValue(forKey: request) }?.cancel()
            case .scheduleBackoff(let deadline):
                scheduleBackoff(at: deadline)
            case .cancelBackoff:
                state.withLockedValue { state in
                    defer { state.backoffTimer = nil }
                    return state.backoffTimer
                }?.cancel()
            case .failRequest(let request, let reason):
                let (waiter, failure) = state.withLockedValue { state in
                    (state.waiters.removeValue(forKey: request), state.failures.removeValue(forKey: request))
                }
                let error: any Error
                switch reason {
                case .cancelled: error = failure ?? TransportError.cancelled
                case .timedOut: error = TransportError.timedOut("waiting for a connection (the request's total time limit)")
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
                    state.connections[connectionID] = connection.connection
                    return state.machine.connectionEstablished(
                        connectionID, version: connection.version, capacity: connection.maximumStreams, now: .now())
                }
                connection.connection.channel.closeFuture.whenComplete { _ in self.connectionClosed(connectionID) }
                run(actions)
            } catch {
                logger.debug("connection failed", metadata: ["origin": "\(origin)", "error": "\(error)"])
                let actions = state.withLockedValue { state in
                    let actions = state.machine.connectionFailed(connectionID, now: .now())
                    // The waiters that fail learn why.
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
            return state.machine.connectionClosed(connectionID, now: .now())
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

    // MARK: Timers

    // Each timer is armed outside the lock and kept only if the machine still wants it when the
    // handle is stored: a timer that fired or was cancelled in between is not kept.

    private func scheduleIdleTimeout(_ connectionID: Int, at deadline: NIODeadline) {
        guard let connection = state.withLockedValue({ $0.connections[connectionID] }) else { return }
        let timer = connection.channel.eventLoop.scheduleTask(deadline: deadline) {
            let actions = self.state.withLockedValue { state in
                state.idleTimers[connectionID] = nil
                return state.machine.idleTimeoutFired(connectionID, now: .now())
            }
            self.run(actions)
        }
        keep(timer) { state in
            guard state.machine.idleTimersArmed.contains(connectionID) else { return false }
            state.idleTimers[connectionID] = timer
            return true
        }
    }

    private func scheduleWaitTimeout(_ request: Int, at deadline: NIODeadline) {
        let timer = factory.eventLoopGroup.any().scheduleTask(deadline: deadline) {
            let actions = self.state.withLockedValue { state in
                state.waitTimers[request] = nil
                return state.machine.waitTimeoutFired(request)
            }
            self.run(actions)
        }
        keep(timer) { state in
            guard state.machine.waiters.contains(where: { $0.id == request }) else { return false }
            state.waitTimers[request] = timer
            return true
        }
    }

    private func scheduleBackoff(at deadline: NIODeadline) {
        let timer = factory.eventLoopGroup.any().scheduleTask(deadline: deadline) {
            let actions = self.state.withLockedValue { state in
                state.backoffTimer = nil
                return state.machine.backoffElapsed(now: .now())
            }
            self.run(actions)
        }
        keep(timer) { state in
            guard state.machine.isBackoffArmed else { return false }
            state.backoffTimer = timer
            return true
        }
    }

    /// Stores a timer's handle if `store` says the machine still wants it, else cancels it.
    private func keep(_ timer: Scheduled<Void>, _ store: (inout State) -> Bool) {
        if !state.withLockedValue(store) { timer.cancel() }
    }
}

/// A lease on a pool that its owner has dropped: the request asks for the origin's new pool.
struct RetiredPoolError: Error {}
