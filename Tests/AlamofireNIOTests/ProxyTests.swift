import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import Logging
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Proxies at the Session level: `connectionProxyDictionary`, the environment, credentials from the
/// credential storage, the metrics, and the errors Alamofire users see.
@Suite struct ProxyTests {
    static func session(for server: HTTPBinServer, _ configure: (URLSessionConfiguration) -> Void) throws -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configure(configuration)
        let roots = try server.certificates.map { [try SecCertificate(derEncoded: Data($0.certificateAuthority.certificateDER))] } ?? []
        return Session(configuration: configuration, eventMonitors: [], additionalTrustRoots: roots)
    }

    static func dictionary(_ proxy: ProxyServer, http: Bool = true, https: Bool = true) -> [AnyHashable: Any] {
        [
            "HTTPEnable": http, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port,
            "HTTPSEnable": https, "HTTPSProxy": "127.0.0.1", "HTTPSPort": NSNumber(value: proxy.port),
        ]
    }

    @Test func connectionProxyDictionaryRoutesBothSchemesAndTheMetricsSaySo() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            let session = try Self.session(for: server) { $0.connectionProxyDictionary = Self.dictionary(proxy) }
            let plain = try await withTimeout { await session.request(server.url("/get")).validate().serializingData().response }
            #expect(plain.response?.statusCode == 200)
            let transaction = try #require(plain.metrics?.transactionMetrics.last)
            #expect(transaction.isProxyConnection)
            #expect(transaction.remotePort == proxy.port)
            let secure = try await withTimeout {
                await session.request(try #require(server.tlsURL(.valid, "/get"))).validate().serializingData().response
            }
            #expect(secure.response?.statusCode == 200)
            #expect(secure.metrics?.transactionMetrics.last?.isProxyConnection == true)
            #expect(secure.metrics?.transactionMetrics.last?.networkProtocolName == "h2")
            #expect(proxy.statistics.forwardedRequests == [server.url("/get").absoluteString])
            #expect(proxy.statistics.tunnels.count == 1)
            try await proxy.shutdown()
        }
    }

    @Test func credentialsComeFromTheCredentialStorageForTheProxysProtectionSpace() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("stored", "secret")))
            let storage = URLCredentialStorage()
            let space = URLProtectionSpace(
                proxyHost: "127.0.0.1", port: proxy.port, type: NSURLProtectionSpaceHTTPProxy, realm: "proxy",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            storage.set(URLCredential(user: "stored", password: "secret", persistence: .forSession), for: space)
            let session = try Self.session(for: server) { configuration in
                configuration.connectionProxyDictionary = Self.dictionary(proxy)
                configuration.urlCredentialStorage = storage
            }
            let secure = try await withTimeout {
                await session.request(try #require(server.tlsURL(.valid, "/get"))).validate().serializingData().response
            }
            #expect(secure.response?.statusCode == 200)
            let plain = try await withTimeout { await session.request(server.url("/get")).validate().serializingData().response }
            #expect(plain.response?.statusCode == 200)
            #expect(proxy.statistics.authenticationChallenges == 0)
            #expect(proxy.statistics.authorizations.count == 2)
            try await proxy.shutdown()
        }
    }

    @Test func withoutCredentialsA407IsTheResponseOrTheTunnelsFailure() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("user", "pass")))
            let session = try Self.session(for: server) { $0.connectionProxyDictionary = Self.dictionary(proxy) }
            let forwarded = try await withTimeout { await session.request(server.url("/get")).validate().serializingData().response }
            #expect(forwarded.response?.statusCode == 407)
            #expect(forwarded.error?.responseCode == 407)
            let tunnelled = try await withTimeout {
                await session.request(try #require(server.tlsURL(.valid, "/get"))).serializingData().response
            }
            #expect(tunnelled.response == nil)
            #expect((tunnelled.error?.underlyingError as? URLError)?.code == .userAuthenticationRequired)
            #expect(server.statistics.totalRequests == 0)
            try await proxy.shutdown()
        }
    }

    @Test func aDigestProxyIsAnsweredOnceForForwardedRequestsAndTunnels() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start(.init(credentials: ("digest", "s3cret"), authenticationScheme: .digest))
            let session = try Self.session(for: server) { configuration in
                configuration.connectionProxyDictionary = [
                    "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port,
                ]
            }
            let unanswered = try await withTimeout { await session.request(server.url("/get")).serializingData().response }
            #expect(unanswered.response?.statusCode == 407)
            let storage = URLCredentialStorage()
            storage.set(
                URLCredential(user: "digest", password: "s3cret", persistence: .forSession),
                for: URLProtectionSpace(
                    proxyHost: "127.0.0.1", port: proxy.port, type: NSURLProtectionSpaceHTTPProxy, realm: "proxy",
                    authenticationMethod: NSURLAuthenticationMethodHTTPDigest))
            let answering = try Self.session(for: server) { configuration in
                configuration.connectionProxyDictionary = [
                    "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port,
                ]
                configuration.urlCredentialStorage = storage
            }
            let posted = try await withTimeout {
                await answering.request(server.url("/post"), method: .post, parameters: ["a": "b"]).validate().serializingData().response
            }
            #expect(posted.response?.statusCode == 200)
            let secure = try await withTimeout {
                await answering.request(try #require(server.tlsURL(.valid, "/get"))).validate().serializingData().response
            }
            #expect(secure.response?.statusCode == 200)
            #expect(secure.metrics?.transactionMetrics.last?.networkProtocolName == "h2")
            let statistics = proxy.statistics
            // One 407 unanswered (no credentials), one for the POST and one for the CONNECT, each answered once.
            #expect(statistics.authenticationChallenges == 3)
            #expect(statistics.authorizations.filter { $0.hasPrefix("Digest ") }.count == 2)
            #expect(statistics.tunnels.count == 1)
            #expect(statistics.forwardedRequests == [server.url("/post").absoluteString])
            try await proxy.shutdown()
        }
    }

    /// The trust manager is asked about the origin (`localhost`), never the proxy (`127.0.0.1`, for
    /// which it has no evaluator while every host must be evaluated).
    @Test func aPinnedEvaluatorJudgesTheOriginThroughTheTunnel() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let proxy = try await ProxyServer.start()
            let certificates = try #require(server.certificates)
            let root = try SecCertificate(derEncoded: Data(certificates.certificateAuthority.certificateDER))
            func fetch(pinning pinned: CertificateIdentity) async throws -> AFDataResponse<Data> {
                let configuration = URLSessionConfiguration.af.ephemeral
                configuration.connectionProxyDictionary = Self.dictionary(proxy)
                let manager = ServerTrustManager(evaluators: [
                    "localhost": PinnedCertificatesTrustEvaluator(certificates: [
                        try SecCertificate(derEncoded: Data(pinned.certificateDER))
                    ])
                ])
                let session = Session(
                    configuration: configuration, serverTrustManager: manager, eventMonitors: [], additionalTrustRoots: [root])
                let url = try #require(server.tlsURL(.valid, "/get", host: "localhost"))
                return try await withTimeout { await session.request(url).serializingData().response }
            }
            let pinnedLeaf = try await fetch(pinning: certificates.leaf(for: .valid))
            #expect(pinnedLeaf.response?.statusCode == 200)
            let pinnedOther = try await fetch(pinning: certificates.unknownAuthority)
            guard case .serverTrustEvaluationFailed(.certificatePinningFailed(let host, _, _, _)) = pinnedOther.error else {
                Issue.record("expected certificatePinningFailed, got \(String(describing: pinnedOther.error))")
                return
            }
            #expect(host == "localhost")
            #expect(proxy.statistics.tunnels.count == 2)
            #expect(server.statistics.totalRequests == 1)
            try await proxy.shutdown()
        }
    }

    @Test func anUnreachableProxyIsCannotConnectToHost() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let closed = try await ProxyServer.start()
            try await closed.shutdown()
            let session = try Self.session(for: server) { $0.connectionProxyDictionary = Self.dictionary(closed) }
            let response = try await withTimeout { await session.request(server.url("/get")).serializingData().response }
            #expect((response.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
            #expect(server.statistics.acceptedConnections == 0)
        }
    }

    @Test func theDictionaryWinsOverTheEnvironmentAndAnEmptyOneMeansNoProxy() throws {
        let logger = Logger(label: "test")
        let environment = ["http_proxy": "http://env.proxy:1", "https_proxy": "nonsense://x"]
        let configuration = URLSessionConfiguration.af.ephemeral
        let fromEnvironment = ProxySelection.settings(for: configuration, environment: environment, logger: logger)
        #expect(fromEnvironment.httpProxy?.host == "env.proxy")
        #expect(fromEnvironment.warnings.count == 1)
        configuration.connectionProxyDictionary = [:]
        #expect(ProxySelection.settings(for: configuration, environment: environment, logger: logger).isEmpty)
        configuration.connectionProxyDictionary = ["HTTPProxy": "dict.proxy"]
        let fromDictionary = ProxySelection.settings(for: configuration, environment: environment, logger: logger)
        #expect(fromDictionary.httpProxy?.host == "dict.proxy")
        #expect(fromDictionary.httpsProxy == nil)
    }

    /// The real environment, read by a default Session in a process of its own.
    @Test func theEnvironmentIsHonouredEndToEnd() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let proxy = try await ProxyServer.start()
            let url = server.url("/get").absoluteString
            // An empty environment but for the variables under test (and a sanitizer's options).
            let kept = ProcessInfo.processInfo.environment.filter { $0.key.hasSuffix("SAN_OPTIONS") }.map { "\($0.key)=\($0.value)" }
            func probe(_ variables: String...) async throws -> String {
                try await runProgram("/usr/bin/env", ["-i"] + kept + variables + [probeURL.path, "get", url]).output
            }
            let through = try await probe("http_proxy=\(proxy.url.absoluteString)")
            #expect(through.contains("status=200 proxy=true"), "\(through)")
            let excepted = try await probe("http_proxy=\(proxy.url.absoluteString)", "NO_PROXY=127.0.0.1")
            #expect(excepted.contains("status=200 proxy=false"), "\(excepted)")
            // Upper-case HTTP_PROXY is not read, as curl does not read it.
            let upper = try await probe("HTTP_PROXY=\(proxy.url.absoluteString)")
            #expect(upper.contains("status=200 proxy=false"), "\(upper)")
            #expect(proxy.statistics.forwardedRequests == [url])
            try await proxy.shutdown()
        }
    }
}
