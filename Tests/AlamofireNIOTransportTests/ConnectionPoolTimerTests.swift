import Foundation
import HTTPBinServer
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import AlamofireNIOTransport

/// The pool arms and cancels the timers its state machine asks for, and keeps no other.
@Suite struct ConnectionPoolTimerTests {
    func makePool(for server: HTTPBinServer) throws -> ConnectionPool {
        let factory = ConnectionFactory(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, tls: .init(), decompressionLimit: nil, logger: .init(label: "test"))
        return ConnectionPool(
            origin: try Origin(url: server.url("/")), factory: factory, maximumConnections: 1, idleTimeout: .seconds(60),
            connectTimeout: .seconds(5), logger: .init(label: "test"))
    }

    func lease(_ pool: ConnectionPool, _ request: Int, deadline: NIODeadline? = nil) async throws -> any TransportConnection {
        try await withCheckedThrowingContinuation { continuation in
            pool.lease(request: request, needsFreshConnection: false, deadline: deadline) { continuation.resume(with: $0) }
        }
    }

    /// Before the machine owned the timers, a cancelled waiter's deadline timer stayed scheduled
    /// (for URLSession's 7-day resource timeout, 7 days).
    @Test func aCancelledQueuedRequestLeavesNoScheduledTimer() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let pool = try makePool(for: server)
            defer { pool.shutDown() }
            let connection = try await lease(pool, 1)
            #expect(pool.scheduledTimerCount == 0)
            let queued = Task { try await lease(pool, 2, deadline: .now() + .hours(7 * 24)) }
            try await Self.eventually { pool.scheduledTimerCount == 1 }
            pool.cancel(request: 2, error: TransportError(.cancelled, "cancelled by the test"))
            await #expect(throws: TransportError.self) { try await queued.value }
            #expect(pool.scheduledTimerCount == 0)
            connection.close()
        }
    }

    @Test func aQueuedRequestsDeadlineFailsItAndClearsItsTimer() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let pool = try makePool(for: server)
            defer { pool.shutDown() }
            let connection = try await lease(pool, 1)
            let error = await transportError { try await lease(pool, 2, deadline: .now() + .milliseconds(50)) }
            #expect(error?.code == .timedOut)
            #expect(pool.scheduledTimerCount == 0)
            connection.close()
        }
    }

    /// Polls `condition` for up to 5 s.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}
