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
        var waiters: [Int: CheckedContinuation<HTTP1Connection, any Error>] = [:]
        /// Errors to give waiters whose cancellation raced their registration, or whose connection failed.
        var failures: [Int: any Error] = [:]
        var idleTimers: [Int: Scheduled<Void>] = [:]
    }

    let origin: Origin
    private let factory: ConnectionFactory
    private let idleTimeout: TimeAmount
    private let connectTimeout: TimeAmount?
    private let state: NIOLockedValueBox<State>
    private let logger: Logger

    init(
        origin: Origin, factory: ConnectionFactory, maximumConnections: Int, idleTimeout: TimeAmount, connectTimeout: TimeAmount?,
        logger: Logger
    ) {
        self.origin = origin
        self.factory = factory
        self.idleTimeout = idleTimeout
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.state = NIOLockedValueBox(State(machine: ConnectionPoolStateMachine(maximumConnections: maximumConnections)))
    }

    /// Waits for a connection; `cancel(request:error:)` with the same id ends the wait.
    func lease(request: Int, needsFreshConnection: Bool) async throws -> HTTP1Connection {
        try await withCheckedThrowingContinuation { continuation in
            let actions = state.withLockedValue { state -> [ConnectionPoolStateMachine.Action] in
                if let failure = state.failures.removeValue(forKey: request) {
                    continuation.resume(throwing: failure)
                    return []
                }
                state.waiters[request] = continuation
                return state.machine.requestLease(request, needsFreshConnection: needsFreshConnection)
            }
            run(actions)
        }
    }

    /// Stops waiting for a connection, failing the wait with `error`. Harmless once leased.
    func cancel(request: Int, error: any Error) {
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

    var statistics: (connections: Int, waiters: Int) {
        state.withLockedValue { ($0.machine.connections.count, $0.machine.waiters.count) }
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
                let (continuation, connection) = state.withLockedValue { state in
                    state.idleTimers.removeValue(forKey: connectionID)?.cancel()
                    return (state.waiters.removeValue(forKey: request), state.connections[connectionID])
                }
                if let connection {
                    continuation?.resume(returning: connection)
                } else {
                    continuation?.resume(throwing: TransportError.connectionLost("the pooled connection vanished"))
                }
            case .createConnection(let connectionID):
                createConnection(connectionID)
            case .closeConnection(let connectionID):
                let connection = state.withLockedValue { state in
                    state.idleTimers.removeValue(forKey: connectionID)?.cancel()
                    return state.connections[connectionID]
                }
                connection?.close()
            case .scheduleIdleTimeout(let connectionID):
                scheduleIdleTimeout(connectionID)
            case .failRequest(let request, let reason):
                let (continuation, failure) = state.withLockedValue { state in
                    (state.waiters.removeValue(forKey: request), state.failures.removeValue(forKey: request))
                }
                let error: any Error
                switch reason {
                case .cancelled: error = failure ?? TransportError.cancelled
                case .shutDown: error = TransportError(.cancelled, "the transport was shut down")
                case .connectionFailed: error = failure ?? TransportError(.cannotConnectToHost, "could not connect to \(origin)")
                }
                continuation?.resume(throwing: error)
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
            }
        }
    }

    private func connectionClosed(_ connectionID: Int) {
        let actions = state.withLockedValue { state in
            state.connections.removeValue(forKey: connectionID)
            state.idleTimers.removeValue(forKey: connectionID)?.cancel()
            return state.machine.connectionClosed(connectionID)
        }
        run(actions)
    }

    private func scheduleIdleTimeout(_ connectionID: Int) {
        state.withLockedValue { state in
            guard let connection = state.connections[connectionID] else { return }
            state.idleTimers[connectionID]?.cancel()
            state.idleTimers[connectionID] = connection.channel.eventLoop.scheduleTask(in: idleTimeout) {
                self.run(self.state.withLockedValue { $0.machine.idleTimeoutFired(connectionID) })
            }
        }
    }
}
