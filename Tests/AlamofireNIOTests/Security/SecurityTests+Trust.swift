import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Certificates are checked for server use on every trust path, and the configuration's TLS
/// versions hold.
extension SecurityTests {
    /// A chain from the trusted test CA that is not for servers: a `clientAuth`-only leaf, or a
    /// `serverAuth` leaf under a `clientAuth`-only intermediate.
    static let notForServers: [TLSVariant] = [.clientAuthOnly, .clientAuthIntermediate]

    @Test(arguments: notForServers)
    func theDefaultEvaluationRefusesACertificateNotForServers(variant: TLSVariant) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(.http2, server)
            let response = try await withTimeout {
                await session.request(try Self.url(.http2, server, "/get", variant: variant)).serializingData().response
            }
            guard case .sessionTaskFailed(let error as URLError) = response.error else {
                Issue.record("expected sessionTaskFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error.code == .serverCertificateUntrusted)
            #expect(server.statistics.totalRequests == 0)
            // The same CA's server certificate passes.
            let valid = try await withTimeout { await session.request(try Self.url(.http2, server, "/get")).serializingData().response }
            #expect(valid.response?.statusCode == 200)
        }
    }

    @Test(arguments: notForServers)
    func everyEvaluatorRefusesACertificateNotForServers(variant: TLSVariant) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let root = try SecCertificate(derEncoded: Data(certificates.certificateAuthority.certificateDER))
            let leaf = try SecCertificate(derEncoded: Data(certificates.leaf(for: variant).certificateDER))
            var evaluators: [(String, any ServerTrustEvaluating)] = [
                ("default", DefaultTrustEvaluator()),
                ("default without host", DefaultTrustEvaluator(validateHost: false)),
                ("revocation", RevocationTrustEvaluator()),
                ("pinned CA", PinnedCertificatesTrustEvaluator(certificates: [root])),
                ("pinned leaf, host only", PinnedCertificatesTrustEvaluator(certificates: [leaf], performDefaultValidation: false)),
                ("public keys", PublicKeysTrustEvaluator(keys: [leaf].af.publicKeys)),
                ("composite", CompositeTrustEvaluator(evaluators: [DisabledTrustEvaluator(), DefaultTrustEvaluator()])),
            ]
            if variant == .clientAuthOnly {
                // An anchored leaf is trusted as it is, without its issuers, but its own purpose still counts.
                evaluators.append(
                    ("pinned leaf, anchored", PinnedCertificatesTrustEvaluator(certificates: [leaf], acceptSelfSignedCertificates: true)))
            }
            for (name, evaluator) in evaluators {
                let session = Session(
                    serverTrustManager: ServerTrustManager(evaluators: ["localhost": evaluator]), eventMonitors: [],
                    additionalTrustRoots: [root])
                let response = try await withTimeout {
                    await session.request(try Self.url(.http2, server, "/get", variant: variant)).serializingData().response
                }
                #expect(response.error?.isServerTrustEvaluationError == true, "\(name): \(String(describing: response.error))")
            }
            #expect(server.statistics.totalRequests == 0)
        }
    }

    @Test func theMinimumTLSVersionHolds() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let configuration = URLSessionConfiguration.af.default
            #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv12)
            #expect(configuration.tlsMaximumSupportedProtocolVersion == .TLSv13)
            configuration.tlsMinimumSupportedProtocolVersion = .TLSv13
            let session = try Self.session(.http2, server, configuration: configuration)
            #expect(session.sessionConfiguration.tlsMinimumSupportedProtocolVersion == .TLSv13, "kept through URLSession's copy")
            let refused = try await withTimeout {
                await session.request(try Self.url(.http2, server, "/get", variant: .tls12Only)).serializingData().response
            }
            #expect((refused.error?.underlyingError as? URLError)?.code == .secureConnectionFailed)
            let accepted = try await withTimeout { await session.request(try Self.url(.http2, server, "/get")).serializingData().response }
            #expect(accepted.response?.statusCode == 200)
            #expect(accepted.metrics?.transactionMetrics.last?.negotiatedTLSProtocolVersion == "TLSv1.3")
        }
    }

    @Test func theMaximumTLSVersionHolds() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let configuration = URLSessionConfiguration.af.default
            configuration.tlsMaximumSupportedProtocolVersion = .TLSv12
            let session = try Self.session(.http2, server, configuration: configuration)
            let response = try await withTimeout { await session.request(try Self.url(.http2, server, "/get")).serializingData().response }
            #expect(response.response?.statusCode == 200)
            #expect(response.metrics?.transactionMetrics.last?.negotiatedTLSProtocolVersion == "TLSv1.2")

            configuration.tlsMinimumSupportedProtocolVersion = .TLSv13
            let impossible = try Self.session(.http2, server, configuration: configuration)
            let refused = try await withTimeout {
                await impossible.request(try Self.url(.http2, server, "/get")).serializingData().response
            }
            #expect((refused.error?.underlyingError as? URLError)?.code == .secureConnectionFailed)
            #expect(server.statistics.totalRequests == 1)
        }
    }

    @Test func theTLSVersionsLeaveTheProxySettingsAlone() {
        let configuration = URLSessionConfiguration.ephemeral
        #expect(configuration.connectionProxyDictionary == nil)
        configuration.tlsMinimumSupportedProtocolVersion = .TLSv13
        #expect(ConfigurationExtras.proxyDictionary(of: configuration) == nil, "the environment's proxies still apply")
        configuration.tlsMinimumSupportedProtocolVersion = .TLSv12
        configuration.connectionProxyDictionary?["HTTPEnable"] = true
        #expect(ConfigurationExtras.proxyDictionary(of: configuration)?["HTTPEnable"] as? Bool == true)
        #expect(ConfigurationExtras.proxyDictionary(of: configuration)?.count == 1)
        let copy = configuration.copy() as! URLSessionConfiguration
        #expect(copy.tlsMinimumSupportedProtocolVersion == .TLSv12)
        let empty = URLSessionConfiguration.ephemeral
        empty.connectionProxyDictionary = [:]
        empty.tlsMaximumSupportedProtocolVersion = .TLSv12
        #expect(ConfigurationExtras.proxyDictionary(of: empty)?.isEmpty == true, "no proxy at all, as set")
    }
}
