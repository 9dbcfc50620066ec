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

    /// A cancel that comes after its request's wait ended (here at the request's deadline) leaves the
    /// pool nothing to keep: before, the pool noted it for a registration that would never come.
    @Test func aCancelAfterTheWaitEndedLeavesNoNoteInThePool() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            defer { transport.shutdown() }
            // Holds the only connection, and so the pool, while the second request waits and times out.
            let holder = Task { try await transport.fetch(server.url("/hold/holder")) }
            try await server.waitUntil { $0.heldRequests["holder"] == 1 }
            let outcome = AsyncStream.makeStream(of: Result<CollectedTransportResponse, TransportError>.self)
            let request = TransportRequest(url: server.url("/get"), timeouts: TransportTimeouts(total: .milliseconds(100)))
            let handle = transport.execute(request, collectingUpTo: 1 << 20) { result in
                outcome.continuation.yield(result)
                outcome.continuation.finish()
            }
            var results = outcome.stream.makeAsyncIterator()
            guard case .failure(let error) = await results.next() else {
                Issue.record("the waiting request did not fail")
                return
            }
            #expect(error.code == .timedOut)
            handle.cancel()
            #expect(transport.cancellationNoteCount == 0)
            server.release("holder")
            _ = try await holder.value
        }
    }
}
