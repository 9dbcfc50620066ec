import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import AlamofireNIOTransport

/// Requests through the bundled test proxy: forwarded `http`, `https` in `CONNECT` tunnels (HTTP/2
/// inside where the origin offers it), SOCKS5 with and without remote names, proxy credentials,
/// and the ways a proxy fails.
@Suite struct TransportProxyTests {
    /// A transport whose proxies come from `environment`, trusting the server's test CA.
    func transport(
        _ environment: [String: String], for server: HTTPBinServer, _ configure: (inout HTTPTransport.Configuration) -> Void = { _ in }
    ) -> HTTPTransport {
        makeTransport { configuration in
            configuration.proxies = ProxySettings(environment: environment)
            if let certificates = server.certificates {
                configuration.tls.trustsSystemRoots = false
                configuration.tls.additionalTrustRoots = [certificates.certificateAuthority.certificateDER]
            }
            configure(&configuration)
        }
    }

    @Test func httpRequestsAreForwardedInAbsoluteFormOverOnePooledConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let transport = transport(["http_proxy": proxy.url.absoluteString], for: server)
            defer { transport.shutdown() }
            let url = server.url("/get?q=1")
            let first = try await transport.fetch(url)
            #expect(first.status == 200)
            #expect(first.json["url"] as? String == url.absoluteString)
            #expect(first.metrics.isProxyConnection)
            #expect(first.metrics.remotePort == proxy.port)
            let second = try await transport.fetch(url)
            #expect(second.status == 200)
            #expect(second.metrics.isReusedConnection)
            #expect(proxy.statistics.forwardedRequests == [url.absoluteString, url.absoluteString])
            #expect(proxy.statistics.connections == 1)
            #expect(server.statistics.acceptedConnections == 1)
            try await proxy.shutdown()
        }
    }

    @Test func httpsGoesThroughAConnectTunnelWithHTTP2InsideAndTheOriginsTrust() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            let challenges = NIOLockedValueBox<[String]>([])
            let transport = transport(["https_proxy": proxy.url.absoluteString], for: server) { configuration in
                configuration.tls.serverTrustEvaluator = { challenge in
                    challenges.withLockedValue { $0.append("\(challenge.host):\(challenge.port)") }
                    try await challenge.evaluateDefault()
                }
            }
            defer { transport.shutdown() }
            let url = try #require(server.tlsURL(.valid, "/get", host: "localhost"))
            // Seven at once: below the eight streams at which a second connection would open.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<7 { group.addTask { try await transport.fetch(url).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 7))
            let fetched = try await transport.fetch(url)
            #expect(fetched.metrics.networkProtocolName == "h2")
            #expect(fetched.metrics.isProxyConnection)
            #expect(fetched.metrics.isReusedConnection)
            let origin = "localhost:\(try #require(server.tlsPort(.valid)))"
            #expect(proxy.statistics.tunnels == [origin])
            #expect(challenges.withLockedValue { $0 } == [origin])
            #expect(server.statistics.acceptedConnections == 1)
            try await proxy.shutdown()
        }
    }

    @Test func theOriginsCertificateIsJudgedInsideTheTunnel() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            let transport = transport(["https_proxy": proxy.url.absoluteString], for: server)
            defer { transport.shutdown() }
            let error = await transportError { try await transport.fetch(try #require(server.tlsURL(.wrongHost, "/get"))) }
            #expect(error?.code == .serverCertificateUntrusted)
            let http1 = self.transport(["https_proxy": proxy.url.absoluteString], for: server) { $0.allowsHTTP2 = false }
            defer { http1.shutdown() }
            let fetched = try await http1.fetch(try #require(server.tlsURL(.valid, "/get")))
            #expect(fetched.metrics.networkProtocolName == "http/1.1")
            #expect(proxy.statistics.tunnels.count == 2)
            try await proxy.shutdown()
        }
    }

    @Test func socks5SendsAnAddressAndSocks5hSendsTheName() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            // `socks5` resolves here: a made-up name that only this transport's lookup knows.
            let local = transport(["all_proxy": proxy.socksURL(resolvingRemotely: false).absoluteString], for: server) {
                $0.lookup = { _, port in [try SocketAddress(ipAddress: "127.0.0.1", port: port)] }
            }
            defer { local.shutdown() }
            let plain = try await local.fetch(URL(string: "http://origin.test:\(server.port)/get")!)
            #expect(plain.status == 200)
            #expect(plain.metrics.isProxyConnection)
            #expect(plain.metrics.remotePort == proxy.port)
            let remote = transport(["all_proxy": proxy.socksURL(resolvingRemotely: true).absoluteString], for: server)
            defer { remote.shutdown() }
            let tls = try await remote.fetch(try #require(server.tlsURL(.valid, "/get", host: "localhost")))
            #expect(tls.status == 200)
            #expect(tls.metrics.networkProtocolName == "h2")
            let statistics = proxy.statistics
            #expect(statistics.socksTargets.count == 2)
            #expect(statistics.socksTargetWasName == [false, true])
            #expect(statistics.socksTargets.first == "127.0.0.1:\(server.port)")
            #expect(statistics.socksTargets.last == "localhost:\(try #require(server.tlsPort(.valid)))")
            #expect(statistics.forwardedRequests.isEmpty)
            try await proxy.shutdown()
        }
    }

    @Test func socks5CredentialsFromTheProxyURLAreUsedWhenTheProxyAsks() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("al", "p@ss")))
            let good = transport(["all_proxy": "socks5h://al:p%40ss@127.0.0.1:\(proxy.port)"], for: server)
            let wrong = transport(["all_proxy": "socks5h://al:nope@127.0.0.1:\(proxy.port)"], for: server)
            let missing = transport(["all_proxy": proxy.socksURL(resolvingRemotely: true).absoluteString], for: server)
            defer { [good, wrong, missing].forEach { $0.shutdown() } }
            #expect(try await good.fetch(server.url("/get")).status == 200)
            #expect(await transportError { try await wrong.fetch(server.url("/get")) }?.code == .userAuthenticationRequired)
            #expect(await transportError { try await missing.fetch(server.url("/get")) }?.code == .userAuthenticationRequired)
            #expect(proxy.statistics.authorizations == ["socks al:p@ss", "socks al:nope"])
            #expect(proxy.statistics.authenticationChallenges == 2)
            #expect(proxy.statistics.socksTargets.count == 1)
            try await proxy.shutdown()
        }
    }

    /// A password SOCKS5 cannot carry whole fails with what is wrong, and the proxy is sent nothing.
    @Test func anOverLongSocks5PasswordFailsInsteadOfBeingCut() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("al", String(repeating: "p", count: 255))))
            let long = transport(["all_proxy": "socks5h://al:\(String(repeating: "p", count: 256))@127.0.0.1:\(proxy.port)"], for: server)
            defer { long.shutdown() }
            let error = await transportError { try await long.fetch(server.url("/get")) }
            #expect(error?.code == .userAuthenticationRequired)
            #expect(error?.message == "the SOCKS proxy's password is longer than the 255 bytes SOCKS5 can send")
            #expect(proxy.statistics.authorizations == [])
            #expect(proxy.statistics.socksTargets == [])
            try await proxy.shutdown()
        }
    }

    @Test func credentialsFromTheProxyURLAreSentAsBasic() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("al@ice", "s:cret")))
            let proxyURL = "http://al%40ice:s%3Acret@127.0.0.1:\(proxy.port)"
            let transport = transport(["http_proxy": proxyURL, "https_proxy": proxyURL], for: server)
            defer { transport.shutdown() }
            #expect(try await transport.fetch(server.url("/get")).status == 200)
            #expect(try await transport.fetch(try #require(server.tlsURL(.valid, "/get"))).status == 200)
            let expected = "Basic " + Data("al@ice:s:cret".utf8).base64EncodedString()
            #expect(proxy.statistics.authorizations == [expected, expected])
            #expect(proxy.statistics.authenticationChallenges == 0)
            try await proxy.shutdown()
        }
    }

    @Test func withoutCredentialsAForwardedRequestGetsThe407AndATunnelFails() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("user", "pass")))
            let transport = transport(["all_proxy": proxy.url.absoluteString], for: server)
            defer { transport.shutdown() }
            let forwarded = try await transport.fetch(server.url("/get"))
            #expect(forwarded.status == 407)
            #expect(forwarded.head.headers.first(name: "Proxy-Authenticate") == "Basic realm=\"proxy\"")
            let error = await transportError { try await transport.fetch(try #require(server.tlsURL(.valid, "/get"))) }
            #expect(error?.code == .userAuthenticationRequired)
            #expect(proxy.statistics.authenticationChallenges == 2)
            #expect(server.statistics.totalRequests == 0)
            try await proxy.shutdown()
        }
    }

    /// A caller's `Proxy-Authorization` is for a proxy: it never reaches an origin, through a tunnel
    /// or directly.
    @Test func proxyFieldsNeverReachAnOrigin() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            let tunnelled = transport(["https_proxy": proxy.url.absoluteString], for: server)
            let direct = transport([:], for: server)
            defer {
                tunnelled.shutdown()
                direct.shutdown()
            }
            let headers: HTTPHeaders = ["Proxy-Authorization": "Basic c2VjcmV0", "Proxy-Connection": "keep-alive", "X-Kept": "yes"]
            for (transport, url) in [(tunnelled, try #require(server.tlsURL(.valid, "/headers"))), (direct, server.url("/headers"))] {
                let fetched = try await transport.fetch(TransportRequest(url: url, headers: headers))
                let echoed = try #require(fetched.json["headers"] as? [String: String])
                #expect(echoed["X-Kept"] == "yes")
                #expect(echoed.keys.allSatisfy { !$0.lowercased().hasPrefix("proxy-") }, "\(echoed)")
            }
            #expect(proxy.statistics.tunnels.count == 1)
            try await proxy.shutdown()
        }
    }

    @Test func anUnreachableProxyFailsWithoutFallingBackToADirectConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let closed = try await ProxyServer.start()
            let port = closed.port
            try await closed.shutdown()
            let transport = transport(["http_proxy": "http://127.0.0.1:\(port)"], for: server)
            defer { transport.shutdown() }
            let error = await transportError { try await transport.fetch(server.url("/get")) }
            #expect(error?.code == .cannotConnectToHost)
            #expect(error?.message.contains("proxy") == true)
            #expect(server.statistics.acceptedConnections == 0)
        }
    }

    @Test(arguments: [
        (ProxyServer.ConnectBehavior.close, URLError.Code.networkConnectionLost),
        (.garbage, .badServerResponse),
        // As when an origin itself closes during the handshake.
        (.closeInsideTunnel, .secureConnectionFailed),
    ])
    func aProxyThatFailsTheTunnelFailsTheRequest(behavior: ProxyServer.ConnectBehavior, code: URLError.Code) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(connectBehavior: behavior))
            let transport = transport(["https_proxy": proxy.url.absoluteString], for: server)
            defer { transport.shutdown() }
            let error = await transportError { try await transport.fetch(try #require(server.tlsURL(.valid, "/get"))) }
            #expect(error?.code == code)
            #expect(server.statistics.totalRequests == 0)
            try await proxy.shutdown()
        }
    }

    @Test func aTunnelToAnOriginThatCannotBeReachedIsRefused() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let closed = try await ProxyServer.start()
            let port = closed.port
            try await closed.shutdown()
            let transport = transport(["https_proxy": proxy.url.absoluteString, "all_proxy": proxy.url.absoluteString], for: server)
            defer { transport.shutdown() }
            let error = await transportError { try await transport.fetch(URL(string: "https://127.0.0.1:\(port)/")!) }
            #expect(error?.code == .cannotConnectToHost)
            #expect(error?.message.contains("(502)") == true)
            // Through SOCKS5 the proxy's refusal reads the same.
            let socks = self.transport(["all_proxy": proxy.socksURL(resolvingRemotely: false).absoluteString], for: server)
            defer { socks.shutdown() }
            let refused = await transportError { try await socks.fetch(URL(string: "http://127.0.0.1:\(port)/")!) }
            #expect(refused?.code == .cannotConnectToHost)
            try await proxy.shutdown()
        }
    }

    @Test func theConnectTimeoutCoversAProxyThatNeverAnswers() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silent.localAddress?.port)
        let transport = makeTransport { $0.proxies = ProxySettings(environment: ["https_proxy": "http://127.0.0.1:\(port)"]) }
        defer { transport.shutdown() }
        let started = ContinuousClock.now
        let error = await transportError {
            try await transport.fetch(URL(string: "https://origin.invalid/")!, timeouts: TransportTimeouts(connect: .milliseconds(300)))
        }
        #expect(error?.code == .timedOut)
        // The 300 ms limit ended it; the bound leaves room for a sanitizer's slowdown under load.
        #expect(started.duration(to: .now) < .seconds(30))
        try await silent.close()
    }

    /// `socks5` resolves the origin here: the connect timeout bounds that lookup too. The lookup is
    /// held until the request has failed, so the timeout, not the lookup, must end it.
    @Test func theConnectTimeoutBoundsASocks5Lookup() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let release = DispatchSemaphore(value: 0)
            let lookupReturned = NIOLockedValueBox(false)
            let transport = transport(["all_proxy": proxy.socksURL(resolvingRemotely: false).absoluteString], for: server) {
                $0.lookup = { host, port in
                    if host == "slow.test" {
                        _ = release.wait(timeout: .now() + 10)
                        lookupReturned.withLockedValue { $0 = true }
                    }
                    return [try SocketAddress(ipAddress: "127.0.0.1", port: port)]
                }
            }
            defer { transport.shutdown() }
            let error = await transportError {
                try await transport.fetch(
                    URL(string: "http://slow.test:\(server.port)/get")!, timeouts: TransportTimeouts(connect: .milliseconds(200)))
            }
            #expect(error?.code == .timedOut)
            #expect(!lookupReturned.withLockedValue { $0 })
            release.signal()
            #expect(proxy.statistics.socksTargets.isEmpty)
            try await proxy.shutdown()
        }
    }

    @Test func noProxyHostsAreReachedDirectly() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let transport = transport(["http_proxy": proxy.url.absoluteString, "no_proxy": "localhost, 127.0.0.0/8"], for: server)
            defer { transport.shutdown() }
            let fetched = try await transport.fetch(server.url("/get"))
            #expect(fetched.status == 200)
            #expect(!fetched.metrics.isProxyConnection)
            #expect(proxy.statistics.connections == 0)
            try await proxy.shutdown()
        }
    }
}
