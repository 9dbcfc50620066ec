import AlamofireNIO
import Foundation
import HTTPBinServer
import TestWaits
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server trust examples of the seed guides, in Alamofire 5's names, through the public API
/// alone (`import AlamofireNIO`, as a user's code has it).
@Suite struct SeedServerTrustExamplesTests {
    /// The v3 guide's `ServerTrustPolicyManager` examples in Alamofire 5's names: certificates from
    /// a bundle pinned for one host, evaluation disabled for another, the default for the rest, and
    /// a subclass matching hosts its own way.
    @Test func seedServerTrustPolicyExamplesInFivesNames() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try Data(certificates.certificateAuthority.certificateDER).write(to: directory.appendingPathComponent("ca.cer"))
            let bundle = try #require(Bundle(path: directory.path))
            // The test CA stands where a public CA would: among the trusted roots.
            let root = try SecCertificate(derEncoded: Data(certificates.certificateAuthority.certificateDER))

            // ServerTrustPolicy.PinCertificates(certificates: ServerTrustPolicy.certificatesInBundle(),
            //     validateCertificateChain: true, validateHost: true) and .DisableEvaluation:
            let evaluators: [String: any ServerTrustEvaluating] = [
                "localhost": PinnedCertificatesTrustEvaluator(
                    certificates: bundle.af.certificates, performDefaultValidation: true, validateHost: true),
                "127.0.0.1": DisabledTrustEvaluator(),
            ]
            let manager = Session(
                serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: evaluators), eventMonitors: [],
                additionalTrustRoots: [root])
            let urls = Dictionary(uniqueKeysWithValues: TLSVariant.allCases.map { ($0, server.tlsURL($0, "/get")) })
            func status(_ session: Session, _ variant: TLSVariant, host: String) async throws -> (Int?, AFError?) {
                var components = URLComponents(url: try #require(urls[variant] ?? nil), resolvingAgainstBaseURL: false)
                components?.host = host
                let url = try #require(components?.url)
                let response = try await withTimeout { await session.request(url).serializingData().response }
                return (response.response?.statusCode, response.error)
            }
            // The pinned host needs a valid chain holding the pinned certificate, for its own name.
            #expect(try await status(manager, .valid, host: "localhost").0 == 200)
            let misnamed = try await status(manager, .wrongHost, host: "localhost").1
            guard case .serverTrustEvaluationFailed(.hostValidationFailed) = misnamed else {
                Issue.record("expected hostValidationFailed, got \(String(describing: misnamed))")
                return
            }
            // The insecure host is never evaluated.
            #expect(try await status(manager, .expired, host: "127.0.0.1").0 == 200)

            // Subclassing: the manager picks evaluators by its own matching.
            final class CustomServerTrustManager: ServerTrustManager, @unchecked Sendable {
                override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
                    host.hasSuffix(".0.0.1") ? DisabledTrustEvaluator() : try super.serverTrustEvaluator(forHost: host)
                }
            }
            let custom = Session(
                serverTrustManager: CustomServerTrustManager(evaluators: [:]), eventMonitors: [], additionalTrustRoots: [root])
            #expect(try await status(custom, .selfSigned, host: "127.0.0.1").0 == 200)
            let unmatched = try await status(custom, .valid, host: "localhost").1
            guard case .serverTrustEvaluationFailed(.noRequiredEvaluator(let host)) = unmatched else {
                Issue.record("expected noRequiredEvaluator, got \(String(describing: unmatched))")
                return
            }
            #expect(host == "localhost")
        }
    }
}
