import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// Every timeout and a cancellation in every phase: each ends with the right error, the server sees
/// the connection closed (nothing is left behind), and the transport keeps working.
@Suite struct TransportCancellationTests {
    @Test func idleTimeoutWhileWaitingForTheHead() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let error = await transportError {
                try await transport.fetch(server.url("/hold/never"), timeouts: .init(idle: .milliseconds(200)))
            }
            #expect(error?.code == .timedOut)
            try await server.waitUntil { $0.openConnections == 0 }
            #expect(try await transport.fetch(server.url("/get")).status == 200)
        }
    }

    /// The callback entry point (no Swift task): it collects the body, and its handle cancels a
    /// running exchange, whose completion then gets `.cancelled` once.
    @Test func callbackExchangesCompleteAndCancelThroughTheirHandle() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let collected = try await completion { done in
                transport.execute(TransportRequest(url: server.url("/bytes/100000?seed=3")), collectingUpTo: 1 << 20) { done($0) }
            }
            #expect(try collected.get().body.readableBytes == 100_000)
            #expect(try collected.get().head.status == .ok)

            let handle = NIOLockedValueBox<TransportExchangeHandle?>(nil)
            let cancelled = try await completion { done in
                handle.withLockedValue {
                    $0 = transport.execute(TransportRequest(url: server.url("/hold/never")), collectingUpTo: 1 << 20) { done($0) }
                }
                Task {
                    // The server has the request: the exchange is running when it is cancelled.
                    try await server.waitUntil { $0.totalRequests == 2 }
                    handle.withLockedValue { $0?.cancel() }
                }
            }
            guard case .failure(let error) = cancelled else {
                Issue.record("expected a failure, got \(cancelled)")
                return
            }
            #expect(error.code == .cancelled)
            try await server.waitUntil { $0.openConnections == 0 }
            #expect(try await transport.fetch(server.url("/get")).status == 200)
        }
    }

    @Test func totalTimeoutWhileWaitingForAConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            // The busy exchange is held until the waiting request has timed out, however late its timer fires.
            let busy = Task { try await transport.fetch(server.url("/hold/busy")) }
            try await server.waitUntil { $0.heldRequests["busy"] == 1 }
            let error = await transportError {
                try await transport.fetch(server.url("/get"), timeouts: .init(total: .milliseconds(300)))
            }
            #expect(error?.code == .timedOut)
            server.release("busy")
            #expect(try await busy.value.status == 200)
            #expect(server.statistics.totalRequests == 1)
        }
    }

    @Test func cancelWhileWaitingForAConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            let busy = Task { try await transport.fetch(server.url("/hold/busy")) }
            try await server.waitUntil { $0.heldRequests["busy"] == 1 }
            let queued = Task { try await transport.fetch(server.url("/get")) }
            queued.cancel()
            let error = await transportError { try await queued.value }
            #expect(error?.code == .cancelled)
            server.release("busy")
            #expect(try await busy.value.status == 200)
            // The queue is clean: the next request gets the connection.
            #expect(try await transport.fetch(server.url("/get")).metrics.isReusedConnection)
            #expect(server.statistics.totalRequests == 2)
        }
    }

    @Test func cancelWhileWaitingForTheHead() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let task = Task { try await transport.fetch(server.url("/hold/never")) }
            try await server.waitUntil { $0.totalRequests == 1 }
            task.cancel()
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }

    @Test func cancelWhileReadingTheBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let response = try await transport.execute(TransportRequest(url: server.url("/range/50?chunk_size=1&hold=rest&hold_at=1")))
            let reader = Task {
                var received = 0
                for try await chunk in response.body { received += chunk.readableBytes }
                return received
            }
            reader.cancel()
            let error = await transportError { try await reader.value }
            #expect(error?.code == .cancelled)
            let completion = await transportError { try await response.finished() }
            #expect(completion?.code == .cancelled)
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }

    @Test func droppingTheBodyClosesTheConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            do {
                let response = try await transport.execute(TransportRequest(url: server.url("/range/50?chunk_size=1&hold=rest&hold_at=1")))
                var iterator = response.body.makeAsyncIterator()
                // One byte comes; the server holds the rest.
                #expect(try await iterator.next()?.readableBytes == 1)
            }
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }

    @Test func cancelWhileUploading() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let endless = TransportRequest.Body.stream(length: nil) { writer in
                while true { try await writer.write(ByteBuffer(repeating: 0x61, count: 16 * 1024)) }
            }
            let task = Task { try await transport.fetch(server.url("/upload"), .POST, body: endless) }
            try await server.waitUntil { $0.totalRequests == 1 }
            task.cancel()
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }

    @Test func uploadProducerErrorFailsTheExchange() async throws {
        struct Broken: Error {}
        try await HTTPBinServer.withServer { server async throws in
            let failing = TransportRequest.Body.stream(length: nil) { writer in
                try await writer.write(ByteBuffer(string: "partial"))
                throw Broken()
            }
            let error = await transportError { try await makeTransport().fetch(server.url("/upload"), .POST, body: failing) }
            #expect(error?.underlyingError is Broken)
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }

    @Test func alreadyCancelledTaskSendsNothing() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await transport.fetch(server.url("/get"))
            }
            let error = await transportError { try await task.value }
            #expect(error?.code == .cancelled)
            #expect(server.statistics.totalRequests == 0)
        }
    }

    /// Shutting down fails the request waiting for a connection, lets the running one finish, and
    /// fails every later request and WebSocket at once, opening nothing.
    @Test func shutdownFailsWaitersAndLaterRequests() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            // The only connection stays busy while the body is not read.
            let running = try await transport.execute(TransportRequest(url: server.url("/bytes/16000000")))
            let waiting = Task { await transportError { try await transport.fetch(server.url("/get")) } }
            for _ in 0..<1000 where transport.waitingRequestCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(transport.waitingRequestCount == 1)

            transport.shutdown()
            let waiterError = await waiting.value
            #expect(waiterError?.code == .cancelled)
            #expect(waiterError?.message == "the transport was shut down")
            #expect(try await running.body.collect(upTo: 1 << 25).readableBytes == 16_000_000)

            let later = await transportError { try await transport.fetch(server.url("/get")) }
            #expect(later?.code == .cancelled)
            #expect(later?.message == "the transport was shut down")
            let webSocket = await transportError { try await transport.openWebSocket(TransportRequest(url: server.url("/websocket/echo"))) }
            #expect(webSocket?.message == "the transport was shut down")
            #expect(transport.poolCount == 0)
            #expect(server.statistics.acceptedConnections == 1)
            #expect(server.statistics.totalRequests == 1)
            try await server.waitUntil { $0.openConnections == 0 }
        }
    }
}
