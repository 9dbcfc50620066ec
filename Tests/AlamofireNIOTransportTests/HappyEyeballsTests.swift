import Foundation
import HTTPBinServer
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import AlamofireNIOTransport

/// Connections race a host's addresses (RFC 8305) instead of trying them one after another.
@Suite struct HappyEyeballsTests {
    /// A loopback port that never answers: its listener accepts nothing and its one-place backlog is
    /// full, so Linux drops every further SYN and a connect hangs until its timeout.
    static func withSilentPort(_ body: (Int) async throws -> Void) async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 0)
            .serverChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        let filler = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        do {
            try await body(port)
        } catch {
            try? await filler.close()
            try? await listener.close()
            throw error
        }
        try? await filler.close()
        try await listener.close()
    }

    @Test func anAddressThatNeverAnswersDoesNotHoldUpTheNext() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await Self.withSilentPort { silent in
                let transport = makeTransport { configuration in
                    configuration.lookup = { _, _ in
                        [
                            try SocketAddress(ipAddress: "127.0.0.1", port: silent),
                            try SocketAddress(ipAddress: "127.0.0.1", port: server.port),
                        ]
                    }
                }
                defer { transport.shutdown() }
                let url = try #require(URL(string: "http://eyeballs.test:\(server.port)/get"))
                // Tried one after another, the silent address would use up the whole connect timeout
                // (which also covers the lookup on NIO's thread pool: generous, for loaded machines).
                let fetched = try await transport.fetch(url, timeouts: TransportTimeouts(connect: .seconds(20)))
                #expect(fetched.status == 200)
                #expect(fetched.metrics.remotePort == server.port)
                let lookupEnd = try #require(fetched.metrics.domainLookupEnd)
                #expect(try #require(fetched.metrics.domainLookupStart) <= lookupEnd)
                #expect(try #require(fetched.metrics.connectStart) == lookupEnd)
            }
        }
    }

    @Test func theConnectTimeoutBoundsTheWholeRace() async throws {
        try await Self.withSilentPort { silent in
            let transport = makeTransport { configuration in
                configuration.lookup = { _, _ in
                    [try SocketAddress(ipAddress: "127.0.0.1", port: silent), try SocketAddress(ipAddress: "127.0.0.1", port: silent)]
                }
            }
            defer { transport.shutdown() }
            let url = try #require(URL(string: "http://eyeballs.test:\(silent)/get"))
            let error = await transportError { try await transport.fetch(url, timeouts: TransportTimeouts(connect: .milliseconds(600))) }
            #expect(error?.code == .timedOut)
        }
    }

    @Test func aFailedLookupIsCannotFindHost() async throws {
        let transport = makeTransport { configuration in
            configuration.lookup = { _, _ in throw HostResolver.Failure(code: -2) }
        }
        defer { transport.shutdown() }
        let error = await transportError { try await transport.fetch(URL(string: "http://nowhere.test/get")!) }
        #expect(error?.code == .cannotFindHost)
    }

    /// Nagle is off, and nothing that needs a privilege is set: SOL_SOCKET's option 1 (SO_DEBUG, which is what
    /// `.socketOption(.tcp_nodelay)` names) needs CAP_NET_ADMIN, and set, it failed every connection of a process
    /// without it (any user but root).
    @Test func aConnectionSetsNoDelayAndNothingPrivileged() async throws {
        try await HTTPBinServer.withServer { server in
            let factory = ConnectionFactory(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, tls: .init(), decompressionRatio: nil, logger: .init(label: "test"))
            let opened = try await factory.openChannel(to: try Origin(url: server.url("/")), deadline: .now() + .seconds(10))
            defer { opened.channel.close(promise: nil) }
            let noDelay = try await opened.channel.getOption(.tcpOption(.tcp_nodelay)).get()
            let debug = try await opened.channel.getOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_DEBUG))).get()
            #expect(noDelay == 1)
            #expect(debug == 0)
        }
    }

    @Test func theResolverSplitsOneLookupByFamily() async throws {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let calls = NIOLockedValueBox(0)
        let resolver = HappyEyeballsResolver(eventLoop: eventLoop) { host, port in
            calls.withLockedValue { $0 += 1 }
            return [try SocketAddress(ipAddress: "::1", port: port), try SocketAddress(ipAddress: "127.0.0.1", port: port)]
        }
        let v4 = try await resolver.initiateAQuery(host: "example.test", port: 80).get()
        let v6 = try await resolver.initiateAAAAQuery(host: "example.test", port: 80).get()
        #expect(v4.map(\.ipAddress) == ["127.0.0.1"])
        #expect(v6.map(\.ipAddress) == ["::1"])
        #expect(calls.withLockedValue { $0 } == 1)
        #expect(resolver.lookupEnd != nil)
        // IP literals need no lookup.
        let literal = try await resolver.initiateAQuery(host: "127.0.0.2", port: 8080).get()
        #expect(literal.map(\.port) == [8080])
        #expect(calls.withLockedValue { $0 } == 1)
    }
}
