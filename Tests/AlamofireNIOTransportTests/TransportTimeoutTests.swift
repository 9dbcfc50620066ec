import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOCore
import NIOPosix
import Testing

@testable import AlamofireNIOTransport

/// Each request's timeout bounds its own wait for a connection and the connection opened for it;
/// a connection with no timeout at all is still bounded.
@Suite struct TransportTimeoutTests {
    /// A server that accepts connections and never says a word: a TLS handshake with it never ends.
    static func withSilentServer(_ body: (Int) async throws -> Void) async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            try await body(try #require(channel.localAddress?.port))
        } catch {
            try? await channel.close()
            throw error
        }
        try await channel.close()
    }

    @Test func aHandshakeWithNoConnectTimeoutIsStillBounded() async throws {
        try await Self.withSilentServer { port async throws in
            let transport = makeTransport { $0.connectionSetupTimeout = .milliseconds(200) }
            defer { transport.shutdown() }
            let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
            let error = await transportError { try await transport.fetch(url, timeouts: TransportTimeouts(connect: nil, idle: nil)) }
            #expect(error?.code == .timedOut)
        }
    }

    @Test func theConnectTimeoutBoundsTheTLSHandshake() async throws {
        try await Self.withSilentServer { port async throws in
            let transport = makeTransport()
            defer { transport.shutdown() }
            let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
            let error = await transportError {
                try await transport.fetch(url, timeouts: TransportTimeouts(connect: .milliseconds(200), idle: .seconds(60)))
            }
            #expect(error?.code == .timedOut)
        }
    }

    /// The first request's tiny timeout used to bound the origin's pool for good, so the retry
    /// with a normal one failed too (Alamofire's `RequestInstanceInterceptorTests`).
    @Test func aShortConnectTimeoutBoundsOnlyItsOwnRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            for _ in 0..<5 {
                // A transport of its own each time, so that each first request opens the pool.
                let transport = makeTransport()
                defer { transport.shutdown() }
                let error = await transportError {
                    try await transport.fetch(
                        server.url("/get"), timeouts: TransportTimeouts(connect: .nanoseconds(1_000), idle: .seconds(10)))
                }
                #expect(error?.code == .timedOut)
                #expect(try await transport.fetch(server.url("/get")).status == 200)
            }
        }
    }

    @Test func aRequestQueuedBehindBusyConnectionsWaitsOnlyForItsTimeout() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport { $0.maximumConnectionsPerHost = 1 }
            defer { transport.shutdown() }
            let busy = Task { try await transport.fetch(server.url("/hold/busy")) }
            try await server.waitUntil { $0.heldRequests["busy"] == 1 }
            let error = await transportError {
                try await transport.fetch(server.url("/get"), timeouts: TransportTimeouts(connect: .milliseconds(200), idle: .seconds(60)))
            }
            #expect(error?.code == .timedOut)
            #expect(server.statistics.totalRequests == 1, "it never reached the server")
            server.release("busy")
            #expect(try await busy.value.status == 200)
        }
    }
}
