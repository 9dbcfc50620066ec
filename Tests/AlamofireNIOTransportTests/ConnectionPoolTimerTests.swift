import Foundation
import HTTPBinServer
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// The pool arms and cancels the timers its state machine asks for, and keeps no other.
@Suite struct ConnectionPoolTimerTests {
    func makePool(for server: HTTPBinServer) throws -> ConnectionPool {
        let factory = ConnectionFactory(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, tls: .init(), decompressionRatio: nil, logger: .init(label: "test"))
        return ConnectionPool(
            origin: try Origin(url: server.url("/")), factory: factory, maximumConnections: 1, idleTimeout: .seconds(60),
            logger: .init(label: "test"))
    }

    func lease(_ pool: ConnectionPool, _ request: Int, deadline: NIODeadline? = nil) async throws -> any TransportConnection {
        try await completion { done in
            pool.lease(request: request, needsFreshConnection: false, deadline: deadline) { done($0) }
        }.get()
    }

    /// Before the machine owned the timers, a cancelled waiter's deadline timer stayed scheduled
    /// (for URLSession's 7-day resource timeout, 7 days).
    @Test func aCancelledQueuedRequestLeavesNoScheduledTimer() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let pool = try makePool(for: server)
            defer { pool.shutDown() }
            let connection = try await lease(pool, 1)
            #expect(pool.scheduledTimerCount == 0)
            // The pool arms and cancels its timers in the calls that change its state, and runs
            // a waiter's completion before the call returns: no waiting is needed to see either.
            let outcome = NIOLockedValueBox<Result<any TransportConnection, any Error>?>(nil)
            pool.lease(request: 2, needsFreshConnection: false, deadline: .now() + .hours(7 * 24)) { result in
                outcome.withLockedValue { $0 = result }
            }
            #expect(pool.scheduledTimerCount == 1)
            pool.cancel(request: 2, error: TransportError(.cancelled, "cancelled by the test"))
            guard case .failure(let error as TransportError) = outcome.withLockedValue({ $0 }) else {
                Issue.record("the queued request did not fail with the cancellation")
                return
            }
            #expect(error.code == .cancelled)
            #expect(pool.scheduledTimerCount == 0)
            connection.close()
        }
    }
}
