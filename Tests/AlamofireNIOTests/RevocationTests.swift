import Foundation
import HTTPBinServer
import Testing

@testable import AlamofireNIO

/// `RevocationTrustEvaluator` asking a real OCSP responder (`openssl ocsp`, started by the test)
/// about leaves that name it: good passes, revoked fails, unknown fails only when a positive
/// response is required, as does a responder that cannot be asked.
@Suite struct RevocationTests {
    /// Runs `body` with a responder that knows `ocspGood` as good and `ocspRevoked` as revoked, and a
    /// server presenting leaves that name it.
    static func withResponder(_ body: (HTTPBinServer, OCSPResponder) async throws -> Void) async throws {
        // The port is chosen before the certificates that name it are made, so another test may take
        // it before openssl binds it: then try another (a few times at most).
        var started: (TestCertificates, OCSPResponder)?
        var lastError: (any Error)?
        for _ in 0..<3 where started == nil {
            do {
                let port = try OCSPResponder.freePort()
                let certificates = try TestCertificates.generate(ocspResponderURL: OCSPResponder.url(port: port))
                let responder = try OCSPResponder.start(
                    certificates: certificates, good: [certificates.leaf(for: .ocspGood)],
                    revoked: [certificates.leaf(for: .ocspRevoked)], port: port)
                started = (certificates, responder)
            } catch {
                lastError = error
            }
        }
        guard let (certificates, responder) = started else { throw lastError ?? OCSPResponder.StartError(description: "no attempt") }
        defer { responder.stop() }
        try await HTTPBinServer.withServer(.init(tls: true, certificates: certificates)) { server async throws in
            try await body(server, responder)
        }
    }

    static func expectRevocationFailure(
        _ outcome: ServerTrustTests.Outcome, options: RevocationTrustEvaluator.Options, mentioning text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .revocationCheckFailed(let output, let reported) = outcome.reason else {
            Issue.record("expected revocationCheckFailed, got \(String(describing: outcome.error))", sourceLocation: sourceLocation)
            return
        }
        #expect(output.host == "127.0.0.1", sourceLocation: sourceLocation)
        #expect(reported == options, sourceLocation: sourceLocation)
        let reason = (output.error as? RevocationCheckError)?.reason ?? ""
        #expect(reason.localizedCaseInsensitiveContains(text), "\(reason)", sourceLocation: sourceLocation)
        #expect(outcome.response.response == nil, sourceLocation: sourceLocation)
    }

    @Test func goodPassesRevokedFailsUnknownFailsOnlyWhenAPositiveResponseIsRequired() async throws {
        try await Self.withResponder { server, responder in
            let good = try await ServerTrustTests.fetch(.ocspGood, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator()])
            #expect(good.response.response?.statusCode == 200)

            for options: RevocationTrustEvaluator.Options in [.any, [.ocsp, .requirePositiveResponse]] {
                let revoked = try await ServerTrustTests.fetch(
                    .ocspRevoked, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: options)])
                Self.expectRevocationFailure(revoked, options: options, mentioning: "revoked")
            }

            let unknown = try await ServerTrustTests.fetch(
                .ocspUnknown, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator.revocationChecking])
            #expect(unknown.response.response?.statusCode == 200)
            let strict: RevocationTrustEvaluator.Options = [.ocsp, .requirePositiveResponse]
            let unknownStrict = try await ServerTrustTests.fetch(
                .ocspUnknown, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: strict)])
            Self.expectRevocationFailure(unknownStrict, options: strict, mentioning: "unknown")
            // Every check asked the responder; the server saw only the requests that passed.
            #expect(server.statistics.totalRequests == 2)
            #expect(responder.output.localizedCaseInsensitiveContains("received"))
        }
    }

    @Test func withoutAnAnswerTheCheckFailsOnlyWhenAPositiveResponseIsRequired() async throws {
        try await Self.withResponder { server, responder in
            let offline: RevocationTrustEvaluator.Options = [.ocsp, .networkAccessDisabled, .requirePositiveResponse]
            let disabled = try await ServerTrustTests.fetch(
                .ocspGood, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: offline)])
            Self.expectRevocationFailure(disabled, options: offline, mentioning: "network access is disabled")

            let crlOnly: RevocationTrustEvaluator.Options = [.crl, .requirePositiveResponse]
            let crl = try await ServerTrustTests.fetch(
                .ocspGood, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: crlOnly)])
            Self.expectRevocationFailure(crl, options: crlOnly, mentioning: "CRL")

            responder.stop()
            let bestAttempt = try await ServerTrustTests.fetch(.ocspGood, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator()])
            #expect(bestAttempt.response.response?.statusCode == 200)
            let strict: RevocationTrustEvaluator.Options = [.ocsp, .requirePositiveResponse]
            let unreachable = try await ServerTrustTests.fetch(
                .ocspGood, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: strict)])
            Self.expectRevocationFailure(unreachable, options: strict, mentioning: "could not be reached")
        }
    }

    @Test func aCertificateNamingNoResponderPassesEvenAStrictCheck() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let outcome = try await ServerTrustTests.fetch(
                .valid, on: server, evaluators: ["127.0.0.1": RevocationTrustEvaluator(options: [.ocsp, .requirePositiveResponse])])
            #expect(outcome.response.response?.statusCode == 200)
        }
    }

    @Test func optionsKeepSecuritysFlags() {
        #expect(RevocationTrustEvaluator.Options.ocsp.rawValue == 1)
        #expect(RevocationTrustEvaluator.Options.crl.rawValue == 2)
        #expect(RevocationTrustEvaluator.Options.preferCRL.rawValue == 4)
        #expect(RevocationTrustEvaluator.Options.requirePositiveResponse.rawValue == 8)
        #expect(RevocationTrustEvaluator.Options.networkAccessDisabled.rawValue == 16)
        #expect(RevocationTrustEvaluator.Options.any.rawValue == 3)
    }
}
