import AFSynchronization
import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's server trust API against the test server's TLS endpoints: each evaluator accepting
/// and refusing with Alamofire's reason, before any byte of the request is sent.
@Suite struct ServerTrustTests {
    /// The failed request's result, checked to have reached the server not at all.
    struct Outcome {
        let response: DataResponse<Data, AFError>
        var error: AFError? { response.error }
        var reason: AFError.ServerTrustFailureReason? {
            guard case .serverTrustEvaluationFailed(let reason) = response.error else { return nil }
            return reason
        }
    }

    /// Checks that the refused request never reached the server: a connection came, and every one
    /// closed (the handshake refused) without a request.
    static func expectNothingSent(to server: HTTPBinServer) async throws {
        try await withTimeout(seconds: 10) { try await server.waitUntil { $0.openConnections == 0 } }
        #expect(server.statistics.acceptedConnections >= 1)
        #expect(server.statistics.totalRequests == 0)
    }

    static func certificate(_ identity: CertificateIdentity) throws -> SecCertificate {
        try SecCertificate(derEncoded: Data(identity.certificateDER))
    }

    /// Requests `variant`'s `/get` through a session with `evaluators` for `127.0.0.1` (the test
    /// CA trusted besides the system's roots).
    static func fetch(
        _ variant: TLSVariant, on server: HTTPBinServer, evaluators: [String: any ServerTrustEvaluating],
        allHostsMustBeEvaluated: Bool = true
    ) async throws -> Outcome {
        let certificates = try #require(server.certificates)
        let session = Session(
            configuration: URLSessionConfiguration.af.ephemeral,
            serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: allHostsMustBeEvaluated, evaluators: evaluators),
            eventMonitors: [], additionalTrustRoots: [try certificate(certificates.certificateAuthority)])
        let url = try #require(server.tlsURL(variant, "/get"))
        let response = try await withTimeout { await session.request(url).serializingData().response }
        return Outcome(response: response)
    }

    @Test func defaultEvaluatorAcceptsAValidChainAndHost() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let outcome = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": DefaultTrustEvaluator()])
            #expect(outcome.response.response?.statusCode == 200)
            #expect(outcome.error == nil)
        }
    }

    @Test func defaultEvaluatorRefusesAnotherHostsCertificateUnlessTheHostIsNotValidated() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let refused = try await Self.fetch(.wrongHost, on: server, evaluators: ["127.0.0.1": DefaultTrustEvaluator()])
            guard case .hostValidationFailed(let output) = refused.reason else {
                Issue.record("expected hostValidationFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(output.host == "127.0.0.1")
            #expect(output.trust.af.certificateData.first == Data(try #require(server.certificates).leaf(for: .wrongHost).certificateDER))
            #expect(refused.response.response == nil)
            try await Self.expectNothingSent(to: server)

            let accepted = try await Self.fetch(
                .wrongHost, on: server, evaluators: ["127.0.0.1": DefaultTrustEvaluator(validateHost: false)])
            #expect(accepted.response.response?.statusCode == 200)
        }
    }

    @Test(arguments: [
        (TLSVariant.expired, URLError.Code.serverCertificateHasBadDate), (.unknownCA, .serverCertificateHasUnknownRoot),
        (.selfSigned, .serverCertificateHasUnknownRoot),
    ])
    func defaultEvaluatorRefusesABrokenChain(variant: TLSVariant, code: URLError.Code) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let outcome = try await Self.fetch(variant, on: server, evaluators: ["127.0.0.1": DefaultTrustEvaluator()])
            guard case .defaultEvaluationFailed(let output) = outcome.reason else {
                Issue.record("expected defaultEvaluationFailed, got \(String(describing: outcome.error))")
                return
            }
            #expect(output.host == "127.0.0.1")
            #expect((output.error as? URLError)?.code == code)
            try await Self.expectNothingSent(to: server)
        }
    }

    @Test func pinnedLeafAndPinnedCAAreBothFoundInTheChain() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let leaf = try Self.certificate(certificates.leaf(for: .valid))
            let authority = try Self.certificate(certificates.certificateAuthority)
            for pinned in [leaf, authority] {
                let outcome = try await Self.fetch(
                    .valid, on: server, evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [pinned])])
                #expect(outcome.response.response?.statusCode == 200, "pinning \(pinned)")
            }
            // The CA of another hierarchy is not in the chain.
            let other = try Self.certificate(certificates.unknownAuthority)
            let refused = try await Self.fetch(
                .valid, on: server, evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [other])])
            guard case .certificatePinningFailed(let host, _, let pinned, let served) = refused.reason else {
                Issue.record("expected certificatePinningFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(host == "127.0.0.1")
            #expect(pinned == [other])
            #expect(served == [leaf, authority])
            #expect(server.statistics.totalRequests == 2)
        }
    }

    @Test func selfSignedCertificatesPassOnlyWhenAccepted() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let selfSigned = try Self.certificate(try #require(server.certificates).leaf(for: .selfSigned))
            let accepted = try await Self.fetch(
                .selfSigned, on: server,
                evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [selfSigned], acceptSelfSignedCertificates: true)])
            #expect(accepted.response.response?.statusCode == 200)

            let refused = try await Self.fetch(
                .selfSigned, on: server, evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [selfSigned])])
            guard case .defaultEvaluationFailed = refused.reason else {
                Issue.record("expected defaultEvaluationFailed, got \(String(describing: refused.error))")
                return
            }
            // Without default validation and host validation, the pin alone decides.
            let pinOnly = try await Self.fetch(
                .selfSigned, on: server,
                evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(
                        certificates: [selfSigned], performDefaultValidation: false, validateHost: false)
                ])
            #expect(pinOnly.response.response?.statusCode == 200)
        }
    }

    @Test func publicKeyPinningSurvivesAReissuedCertificateThatCertificatePinningRefuses() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let original = try Self.certificate(certificates.leaf(for: .valid))
            let reissued = try Self.certificate(certificates.leaf(for: .reissued))
            #expect(original != reissued)
            #expect(original.publicKey == reissued.publicKey)

            let byKey = try await Self.fetch(
                .reissued, on: server, evaluators: ["127.0.0.1": PublicKeysTrustEvaluator(keys: [original.publicKey])])
            #expect(byKey.response.response?.statusCode == 200)

            let byCertificate = try await Self.fetch(
                .reissued, on: server, evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [original])])
            guard case .certificatePinningFailed = byCertificate.reason else {
                Issue.record("expected certificatePinningFailed, got \(String(describing: byCertificate.error))")
                return
            }

            let otherKey = try Self.certificate(certificates.leaf(for: .wrongHost)).publicKey
            let refused = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": PublicKeysTrustEvaluator(keys: [otherKey])])
            guard case .publicKeyPinningFailed(let host, _, let pinned, let served) = refused.reason else {
                Issue.record("expected publicKeyPinningFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(host == "127.0.0.1")
            #expect(pinned == [otherKey])
            #expect(served.first == original.publicKey)

            let none = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": PublicKeysTrustEvaluator(keys: [])])
            guard case .noPublicKeysFound = none.reason else {
                Issue.record("expected noPublicKeysFound, got \(String(describing: none.error))")
                return
            }
            let noCertificates = try await Self.fetch(
                .valid, on: server, evaluators: ["127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [])])
            guard case .noCertificatesFound = noCertificates.reason else {
                Issue.record("expected noCertificatesFound, got \(String(describing: noCertificates.error))")
                return
            }
        }
    }

    @Test func compositeRunsItsEvaluatorsInOrderAndTheFirstRefusalWins() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let other = try Self.certificate(try #require(server.certificates).unknownAuthority)
            let composite = CompositeTrustEvaluator(evaluators: [
                DefaultTrustEvaluator(), PinnedCertificatesTrustEvaluator(certificates: [other]),
            ])
            let pinRefused = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": composite])
            guard case .certificatePinningFailed = pinRefused.reason else {
                Issue.record("expected certificatePinningFailed, got \(String(describing: pinRefused.error))")
                return
            }
            let hostRefused = try await Self.fetch(.wrongHost, on: server, evaluators: ["127.0.0.1": composite])
            guard case .hostValidationFailed = hostRefused.reason else {
                Issue.record("expected hostValidationFailed, got \(String(describing: hostRefused.error))")
                return
            }
            let order = Recorder()
            let recorded = CompositeTrustEvaluator(evaluators: [
                RecordingEvaluator(name: "first", recorder: order), RecordingEvaluator(name: "second", recorder: order),
            ])
            let accepted = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": recorded])
            #expect(accepted.response.response?.statusCode == 200)
            #expect(order.names == ["first", "second"])
            // A refusal stops the evaluation: the evaluator after it is never asked.
            let stopped = Recorder()
            let refusing = CompositeTrustEvaluator(evaluators: [
                RecordingEvaluator(name: "before", recorder: stopped), RefusingEvaluator(),
                RecordingEvaluator(name: "after", recorder: stopped),
            ])
            let refused = try await Self.fetch(.valid, on: server, evaluators: ["127.0.0.1": refusing])
            guard case .customEvaluationFailed(let error) = refused.reason, error is RefusingEvaluator.Refusal else {
                Issue.record("expected customEvaluationFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(stopped.names == ["before"])
        }
    }

    @Test func disabledEvaluatorAcceptsAnything() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            for variant in [TLSVariant.expired, .selfSigned, .wrongHost] {
                let outcome = try await Self.fetch(variant, on: server, evaluators: ["127.0.0.1": DisabledTrustEvaluator()])
                #expect(outcome.response.response?.statusCode == 200, "\(variant)")
            }
        }
    }

    @Test func aHostWithoutAnEvaluatorFailsWhenAllHostsMustBeEvaluated() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let evaluators: [String: any ServerTrustEvaluating] = ["localhost": DisabledTrustEvaluator()]
            let refused = try await Self.fetch(.valid, on: server, evaluators: evaluators)
            guard case .noRequiredEvaluator(let host) = refused.reason else {
                Issue.record("expected noRequiredEvaluator, got \(String(describing: refused.error))")
                return
            }
            #expect(host == "127.0.0.1")
            try await Self.expectNothingSent(to: server)
            // Otherwise the default evaluation applies: the session's extra root makes the chain good...
            let defaulted = try await Self.fetch(.valid, on: server, evaluators: evaluators, allHostsMustBeEvaluated: false)
            #expect(defaulted.response.response?.statusCode == 200)
            // ...and an expired one fails as it would without a manager.
            let expired = try await Self.fetch(.expired, on: server, evaluators: evaluators, allHostsMustBeEvaluated: false)
            guard case .sessionTaskFailed(let error as URLError) = expired.error else {
                Issue.record("expected sessionTaskFailed, got \(String(describing: expired.error))")
                return
            }
            #expect(error.code == .serverCertificateHasBadDate)
        }
    }

    @Test func aCustomEvaluatorsOwnErrorIsWrappedAndASubclassedManagerPicksEvaluators() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let url = try #require(server.tlsURL(.valid, "/get"))
            let session = Session(
                configuration: URLSessionConfiguration.af.ephemeral, serverTrustManager: AnyHostManager(evaluator: RefusingEvaluator()),
                eventMonitors: [])
            let response = try await withTimeout { await session.request(url).serializingData().response }
            guard case .serverTrustEvaluationFailed(.customEvaluationFailed(let error)) = response.error else {
                Issue.record("expected customEvaluationFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error as? RefusingEvaluator.Refusal == .refused)
            try await Self.expectNothingSent(to: server)
        }
    }

    @Test func withoutAManagerTheSessionsExtraRootsDecide() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(.valid, "/get"))
            let trusting = Session(
                configuration: URLSessionConfiguration.af.ephemeral, eventMonitors: [],
                additionalTrustRoots: [try Self.certificate(certificates.certificateAuthority)])
            let trusted = try await withTimeout { await trusting.request(url).serializingData().response }
            #expect(trusted.response?.statusCode == 200)
            let version = trusted.metrics?.transactionMetrics.last?.negotiatedTLSProtocolVersion
            #expect(version == "TLSv1.3")

            let plain = Session(configuration: URLSessionConfiguration.af.ephemeral, eventMonitors: [])
            let refused = try await withTimeout { await plain.request(url).serializingData().response }
            guard case .sessionTaskFailed(let error as URLError) = refused.error else {
                Issue.record("expected sessionTaskFailed, got \(String(describing: refused.error))")
                return
            }
            #expect(error.code == .serverCertificateHasUnknownRoot)
        }
    }

    @Test func certificatesLoadFromPEMDERBundlesAndDirectories() throws {
        let certificates = try TestCertificates.generate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(certificates.certificateAuthority.certificateDER).write(to: directory.appendingPathComponent("a-ca.cer"))
        try Data(certificates.client.certificatePEM.utf8).write(to: directory.appendingPathComponent("b-client.crt"))
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent("c-junk.der"))
        try Data(certificates.unknownAuthority.certificatePEM.utf8).write(to: directory.appendingPathComponent("d-ignored.txt"))

        let expected = [try Self.certificate(certificates.certificateAuthority), try Self.certificate(certificates.client)]
        #expect(try SecCertificate.certificates(inDirectory: directory) == expected)
        let bundle = try #require(Bundle(path: directory.path))
        #expect(Set(bundle.af.certificates) == Set(expected))
        #expect(Set(bundle.af.publicKeys) == Set(expected.map(\.publicKey)))

        let pem = certificates.certificateAuthority.certificatePEM + certificates.client.certificatePEM
        #expect(try SecCertificate.certificates(pemEncoded: pem) == expected)
        let viaSecurityNames = SecCertificateCreateWithData(nil, Data(certificates.client.certificateDER) as CFData)
        #expect(viaSecurityNames == expected[1])
        #expect(SecCertificateCopyData(expected[1]) as Data == Data(certificates.client.certificateDER))
        #expect(SecCertificateCreateWithData(nil, Data([1, 2, 3]) as CFData) == nil)
    }
}

/// Records the order evaluators ran in.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    var names: [String] { lock.withLock { recorded } }
    func record(_ name: String) { lock.withLock { recorded.append(name) } }
}

struct RecordingEvaluator: ServerTrustEvaluating {
    let name: String
    let recorder: Recorder
    func evaluate(_ trust: SecTrust, forHost host: String) throws { recorder.record(name) }
}

struct RefusingEvaluator: ServerTrustEvaluating {
    enum Refusal: Error { case refused }
    func evaluate(_ trust: SecTrust, forHost host: String) throws { throw Refusal.refused }
}

/// A manager that gives every host the same evaluator, as a subclass may.
final class AnyHostManager: ServerTrustManager, @unchecked Sendable {
    let evaluator: any ServerTrustEvaluating
    init(evaluator: any ServerTrustEvaluating) {
        self.evaluator = evaluator
        super.init(evaluators: [:])
    }
    override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? { evaluator }
}
