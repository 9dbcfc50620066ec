import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@Suite struct ServerLifecycleTests {
    /// A wait for something that never happens fails at its deadline, and a cancelled one at once:
    /// a regression fails the suite instead of hanging it.
    @Test func aWaitThatCannotEndFailsAtItsDeadlineOrWhenCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            do {
                try await server.waitUntil(within: .milliseconds(50)) { $0.acceptedConnections == 1 }
                Issue.record("the wait ended without a connection")
            } catch let timedOut as ConnectionStatisticsWaitTimedOut {
                #expect(timedOut.statistics == ConnectionStatistics())
                #expect(timedOut.timeout == .milliseconds(50))
            }
            let cancelled = Task { try await server.waitUntil(within: .seconds(600)) { $0.acceptedConnections == 1 } }
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            // A wait whose condition already holds returns at once.
            try await server.waitUntil(within: .zero) { $0.acceptedConnections == 0 }
        }
    }

    @Test func keepAliveConnectionIsCountedOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let statuses = try await TestConnection.with(server.baseURL) { connection in
                [
                    try await connection.send(.GET, "/get").status,
                    try await connection.send(.POST, "/post", body: .bytes([1])).status,
                    try await connection.send(.GET, "/status/204").status,
                ]
            }
            #expect(statuses == [200, 200, 204])
            let statistics = server.statistics
            #expect(statistics.acceptedConnections == 1)
            #expect(statistics.requestsPerConnection == [3])
            #expect(statistics.totalRequests == 3)
        }
    }

    @Test func separateConnectionsAreCountedSeparately() async throws {
        try await HTTPBinServer.withServer { server async throws in
            _ = try await fetch(server.url("/get"))
            _ = try await fetch(server.url("/get"))
            #expect(server.statistics.acceptedConnections == 2)
            #expect(server.statistics.requestsPerConnection == [1, 1])
        }
    }

    @Test func openAndPeakConnectionsAreTracked() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await TestConnection.with(server.baseURL) { first in
                _ = try await first.send(.GET, "/get")
                try await TestConnection.with(server.baseURL) { second in
                    _ = try await second.send(.GET, "/get")
                    #expect(server.statistics.openConnections == 2)
                }
            }
            #expect(server.statistics.peakOpenConnections == 2)
        }
    }

    @Test func resetStartsCountingAfresh() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await TestConnection.with(server.baseURL) { connection in
                _ = try await connection.send(.GET, "/get")
                server.resetStatistics()
                #expect(
                    server.statistics
                        == ConnectionStatistics(
                            acceptedConnections: 0, openConnections: 1, peakOpenConnections: 1, requestsPerConnection: [0]))
                _ = try await connection.send(.GET, "/get")
                #expect(server.statistics.requestsPerConnection == [1])
            }
        }
    }

    @Test func idleConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await HTTPBinServer.withServer(.init(idleTimeout: .milliseconds(100))) { server async throws in
            try await TestConnection.with(server.baseURL) { connection in
                #expect(try await connection.send(.GET, "/get").status == 200)
                try await connection.waitForServerClose()
            }
        }
    }

    @Test func manyServersRunSideBySide() async throws {
        let ports = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await HTTPBinServer.withServer { server async throws in
                        #expect(try await fetch(server.url("/get")).status == 200)
                        return server.port
                    }
                }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(ports.count == 6)
    }

    @Test func shutdownClosesIdleKeepAliveConnectionsAndStopsListening() async throws {
        let server = try await HTTPBinServer.start()
        try await TestConnection.with(server.baseURL) { connection in
            #expect(try await connection.send(.GET, "/get").status == 200)
            try await server.shutdown()
            try await connection.waitForServerClose()
        }
        await #expect(throws: (any Error).self) { _ = try await fetch(server.url("/get")) }
    }

    @Test func secondServerOnATakenPortFailsToStart() async throws {
        try await HTTPBinServer.withServer { server async throws in
            await #expect(throws: (any Error).self) {
                let clash = try await HTTPBinServer.start(.init(port: server.port))
                try await clash.shutdown()
            }
        }
    }
}
