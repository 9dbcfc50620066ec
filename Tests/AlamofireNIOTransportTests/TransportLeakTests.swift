import Foundation
import HTTPBinServer
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// Every exchange is released once it ends, with every promise its caller could wait on completed,
/// whichever way it ended: collected, streamed, failed, cancelled, or answered before its body was sent.
@Suite struct TransportLeakTests {
    /// Over plain HTTP/1.1, and over HTTPS, where the server speaks HTTP/2.
    @Test(arguments: [false, true])
    func everyKindOfExchangeIsReleasedWithItsPromisesSettled(overHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: overHTTP2)) { server async throws in
            let authority = server.certificates?.certificateAuthority.certificateDER
            let transport = makeTransport { configuration in
                if let authority { configuration.tls.additionalTrustRoots = [authority] }
            }
            defer { transport.shutdown() }
            let url = { (path: String) in overHTTP2 ? server.tlsURL(.valid, path)! : server.url(path) }
            for round in 0..<20 {
                // Collected, through the callback entry point.
                let collected = try await completion { done in
                    transport.execute(TransportRequest(url: url("/bytes/64")), collectingUpTo: 1 << 20) { done($0) }
                }.get()
                #expect(collected.body.readableBytes == 64)
                // Streamed, read to the end.
                let streamed = try await transport.fetch(url("/bytes/128"))
                #expect(streamed.body.readableBytes == 128)
                // Streamed, dropped before its end (the connection closes).
                _ = try await transport.execute(TransportRequest(url: url("/stream-bytes/65536?chunk_size=1024")))
                // Over the collecting limit.
                let tooLarge = await transportError {
                    try await transport.execute(TransportRequest(url: url("/bytes/4096")), collectingUpTo: 16)
                }
                #expect(tooLarge?.code == .dataLengthExceedsMaximum)
                // Cancelled while the server holds its answer.
                let handle = transport.execute(TransportRequest(url: url("/hold/never")), collectingUpTo: 1 << 20) { _ in }
                if round % 2 == 0 { handle.cancel() } else { Task { handle.cancel() } }
                // A streamed upload the server answers without reading (its writer must be released).
                let upload = TransportRequest(method: .POST, url: url("/status/500"), body: .stream(length: nil, Self.endlessBody))
                let answered = try await transport.fetch(upload)
                #expect(answered.status == 500)
            }
            // Exchanges are released as the event loops finish their last callbacks.
            try await Self.eventually { transport.tracker.liveExchanges == 0 }
            #expect(transport.tracker.liveExchanges == 0)
            #expect(transport.tracker.unsettledExchanges == 0)
        }
    }

    /// Writes chunks until the transport stops taking them (at most 256 MiB).
    @Sendable static func endlessBody(_ writer: TransportBodyWriter) async throws {
        let chunk = ByteBuffer(repeating: 0x62, count: 64 * 1024)
        for _ in 0..<4096 { try await writer.write(chunk) }
    }

    /// Polls a condition that other threads make true, for at most ten seconds.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<1000 where !condition() {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A cancel that arrives while an exchange runs on a connection that then turns out stale must
    /// also stop the retry on a fresh connection (it used to leave the controller "running").
    @Test func cancelWhileRunningAlsoStopsTheStaleConnectionRetry() throws {
        let channel = EmbeddedChannel()
        let handler = ExchangeHandler(
            connectionID: 1, byteCounter: ByteCountingHandler(), connectionMetrics: ExchangeMetrics(fetchStart: .now()))
        let origin = try Origin(url: URL(string: "http://127.0.0.1:1/")!)
        let connection = HTTP1Connection(id: 1, origin: origin, channel: channel, handler: handler)
        let request = TransportRequest(url: URL(string: "http://127.0.0.1:1/x")!)
        let (delivery, _) = ActiveExchange.Delivery.streaming(on: channel.eventLoop)
        let exchange = ActiveExchange(
            request: request, head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/x"), requestBodyLength: 0, delivery: delivery,
            metrics: ExchangeMetrics(fetchStart: .now()))
        let controller = ExchangeController()
        try controller.run(exchange, on: connection)
        controller.cancel(with: .cancelled)
        let factory = ConnectionFactory(
            eventLoopGroup: channel.eventLoop, tls: .init(), decompressionRatio: nil, logger: .init(label: "test"))
        let pool = ConnectionPool(
            origin: origin, factory: factory, maximumConnections: 1, idleTimeout: .seconds(1),
            logger: .init(label: "test"))
        #expect(throws: TransportError.self) { try controller.waitForConnection(pool: pool, request: 2) }
        exchange.fail(TransportError.cancelled)
        _ = try channel.finish()
    }

    /// A pool whose last connection closed (its origin unused for the idle timeout) is dropped; the
    /// origin gets a new one when it is used again.
    @Test func anUnusedOriginsPoolIsDroppedAndMadeAgainWhenNeeded() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.idleConnectionTimeout = .milliseconds(50) }
            defer { transport.shutdown() }
            // Counted while a request is held: a 50 ms idle timeout may pass before a later look.
            // Released on every path: a failed wait would otherwise leave the requests held.
            defer {
                server.release("first")
                server.release("again")
            }
            async let first = transport.fetch(server.url("/hold/first"))
            try await server.waitUntil { $0.heldRequests["first"] == 1 }
            #expect(transport.poolCount == 1)
            server.release("first")
            #expect(try await first.status == 200)
            try await server.waitUntil { $0.openConnections == 0 }
            try await Self.eventually { transport.poolCount == 0 }
            #expect(transport.poolCount == 0)
            // Used again: a new pool serves it (checked while the request runs, before any idle timeout).
            async let again = transport.fetch(server.url("/hold/again"))
            try await server.waitUntil { $0.heldRequests["again"] == 1 }
            #expect(transport.poolCount == 1)
            server.release("again")
            #expect(try await again.status == 200)
        }
    }

    /// An origin that cannot be reached leaves no pool behind either.
    @Test func anUnreachableOriginsPoolIsDropped() async throws {
        let transport = makeTransport()
        defer { transport.shutdown() }
        // Port 1 on loopback: nothing listens there.
        let error = await transportError { try await transport.fetch(URL(string: "http://127.0.0.1:1/")!) }
        #expect(error?.code == .cannotConnectToHost)
        try await Self.eventually { transport.poolCount == 0 }
        #expect(transport.poolCount == 0)
    }
}
