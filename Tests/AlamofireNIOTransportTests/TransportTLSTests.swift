import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import SwiftASN1
import Testing
import X509

@Suite struct TransportTLSTests {
    /// A transport that trusts only the server's test CA.
    func transport(for server: HTTPBinServer, _ configure: (inout TransportTLSConfiguration) -> Void = { _ in }) throws -> HTTPTransport {
        let certificates = try #require(server.certificates)
        return makeTransport { configuration in
            configuration.tls.trustsSystemRoots = false
            configuration.tls.additionalTrustRoots = [certificates.certificateAuthority.certificateDER]
            configure(&configuration.tls)
        }
    }

    @Test func validCertificateIsTrustedWithTheTestCA() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let url = try #require(server.tlsURL(.valid, "/get"))
            let fetched = try await transport(for: server).fetch(url)
            #expect(fetched.status == 200)
            #expect(fetched.json["url"] as? String == url.absoluteString)
            let metrics = fetched.metrics
            #expect(metrics.negotiatedTLSVersion == .tlsv13)
            let secure = try #require(metrics.secureConnectionStart)
            #expect(try #require(metrics.secureConnectionEnd) >= secure)
            #expect(try #require(metrics.connectEnd) <= secure)
        }
    }

    @Test func hostNamesAreResolvedAndCheckedToo() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let url = try #require(server.tlsURL(.valid, "/get", host: "localhost"))
            let fetched = try await transport(for: server).fetch(url)
            #expect(fetched.status == 200)
            #expect(fetched.metrics.remoteAddress == "127.0.0.1")
        }
    }

    @Test(arguments: [
        (TLSVariant.expired, URLError.Code.serverCertificateHasBadDate),
        (.wrongHost, .serverCertificateUntrusted),
        (.selfSigned, .serverCertificateHasUnknownRoot),
        (.unknownCA, .serverCertificateHasUnknownRoot),
        (.clientAuthOnly, .serverCertificateUntrusted),
        (.clientAuthIntermediate, .serverCertificateUntrusted),
    ])
    func brokenCertificatesFailWithURLSessionsCodes(variant: TLSVariant, code: URLError.Code) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let url = try #require(server.tlsURL(variant, "/get"))
            let error = await transportError { try await transport(for: server).fetch(url) }
            #expect(error?.code == code)
            #expect(server.statistics.totalRequests == 0)
        }
    }

    @Test(arguments: TLSVariant.allCases.filter { $0 != .mutualTLS })
    func evaluatorThatAcceptsSeesTheServersChain(variant: TLSVariant) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let seen = NIOLockedValueBox<[ServerTrustChallenge]>([])
            let transport = try transport(for: server) { tls in
                tls.serverTrustEvaluator = { challenge in seen.withLockedValue { $0.append(challenge) } }
            }
            let url = try #require(server.tlsURL(variant, "/get"))
            #expect(try await transport.fetch(url).status == 200)
            let challenges = seen.withLockedValue { $0 }
            #expect(challenges.count == 1)
            #expect(challenges.first?.host == "127.0.0.1")
            #expect(challenges.first?.port == server.tlsPort(variant))
            let presented = [certificates.leaf(for: variant)] + certificates.intermediates(for: variant)
            #expect(challenges.first?.certificateChain == presented.map(\.certificateDER))
        }
    }

    @Test func evaluatorRejectionStopsTheRequestBeforeItIsSent() async throws {
        struct Pinned: Error {}
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server) { tls in tls.serverTrustEvaluator = { _ in throw Pinned() } }
            let error = await transportError { try await transport.fetch(try #require(server.tlsURL(.valid, "/get"))) }
            #expect(error?.code == .serverCertificateUntrusted)
            #expect(error?.underlyingError is Pinned)
            #expect(server.statistics.totalRequests == 0)
        }
    }

    @Test func evaluatorCanValidateAgainstItsOwnAnchors() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let unknownRoot = try #require(server.certificates).unknownAuthority.certificateDER
            let transport = try transport(for: server) { tls in
                tls.serverTrustEvaluator = { challenge in try await challenge.evaluateDefault(anchors: [unknownRoot]) }
            }
            #expect(try await transport.fetch(try #require(server.tlsURL(.unknownCA, "/get"))).status == 200)
            let error = await transportError { try await transport.fetch(try #require(server.tlsURL(.valid, "/get"))) }
            #expect(error?.code == .serverCertificateHasUnknownRoot)
        }
    }

    @Test func evaluatorCanSkipTheHostCheck() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let transport = try transport(for: server) { tls in
                tls.serverTrustEvaluator = { challenge in try await challenge.evaluateDefault(validateHost: false) }
            }
            #expect(try await transport.fetch(try #require(server.tlsURL(.wrongHost, "/get"))).status == 200)
        }
    }

    @Test func mutualTLSPresentsTheClientIdentity() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(.mutualTLS, "/get"))
            // The server's certificate_required alert (TLS 1.3: after the client's handshake is done) is
            // read as URLSession reports it.
            let anonymous = await transportError { try await transport(for: server).fetch(url) }
            #expect(anonymous?.code == .clientCertificateRequired)
            let identity = try TransportClientIdentity(
                certificates: [certificates.client.certificateDER], privateKey: Array(certificates.client.privateKeyPEM.utf8))
            let identified = try transport(for: server) { tls in tls.clientIdentity = identity }
            #expect(try await identified.fetch(url).status == 200)
        }
    }

    @Test func plainHTTPServerSpokenToWithTLSTimesOutOrFails() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let timeouts = TransportTimeouts(connect: .milliseconds(300))
            let error = await transportError {
                try await makeTransport().fetch(server.faultURL("/hang", scheme: "https"), timeouts: timeouts)
            }
            #expect(error?.code == .timedOut)
        }
    }

    @Test func pemIsReadWithTextBeforeItsBlocksAndDERIsToldApart() throws {
        let certificates = try TestCertificates.generate()
        let authority = try Certificate(derEncoded: certificates.certificateAuthority.certificateDER)
        let dumped = Array(("Certificate:\n    Data:\n        Version: 3 (0x2)\n" + certificates.certificateAuthority.certificatePEM).utf8)
        #expect(CertificateEncoding.isPEM(dumped))
        #expect(try CertificateEncoding.certificates(in: dumped) == [authority])
        #expect(!CertificateEncoding.isPEM(certificates.certificateAuthority.certificateDER))
        #expect(try CertificateEncoding.certificates(in: certificates.certificateAuthority.certificateDER) == [authority])
        #expect(!CertificateEncoding.isPEM(Array("no block here".utf8)))
        // A short DER key (an Ed25519 PKCS#8 one is 48 bytes): a short-form length, no PEM line.
        #expect(
            !CertificateEncoding.isPEM(
                [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70] + Array(repeating: 0x11, count: 36)))
        #expect(!CertificateEncoding.isPEM([UInt8]()))
        // A PKCS#12 export's PEM: "Bag Attributes" before the certificate and before the key.
        let bag = "Bag Attributes\n    localKeyID: 01 02\nsubject=CN = client\n"
        let identity = try TransportClientIdentity(
            certificates: [Array((bag + certificates.client.certificatePEM).utf8)],
            privateKey: Array(("Bag Attributes\n    localKeyID: 01 02\n" + certificates.client.privateKeyPEM).utf8))
        #expect(try identity.certificateChain.map { try $0.toDERBytes() } == [certificates.client.certificateDER])
    }

    @Test func sslCertFileReplacesTheBundleAndSSLCertDirAddsEveryCertificateFile() throws {
        let certificates = try TestCertificates.generate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
        let hashed = directory.appendingPathComponent("hashed")
        try FileManager.default.createDirectory(at: hashed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bundle = directory.appendingPathComponent("bundle.pem")
        // Commented, as Fedora's and RHEL's bundles are.
        let commented =
            "# Test CA\n" + certificates.certificateAuthority.certificatePEM + "\n# Client\n" + certificates.client.certificatePEM
        try Data(commented.utf8).write(to: bundle)
        try Data(certificates.unknownAuthority.certificateDER).write(to: hashed.appendingPathComponent("1a2b3c4d.0"))
        try Data("junk".utf8).write(to: hashed.appendingPathComponent("README"))

        func serials(_ environment: [String: String]) -> Set<String> {
            Set(TrustAnchors.roots(environment: environment).map { "\($0.serialNumber)" })
        }
        let (authority, client, unknown) = try (
            Certificate(derEncoded: certificates.certificateAuthority.certificateDER),
            Certificate(derEncoded: certificates.client.certificateDER),
            Certificate(derEncoded: certificates.unknownAuthority.certificateDER)
        )
        #expect(serials(["SSL_CERT_FILE": bundle.path]) == ["\(authority.serialNumber)", "\(client.serialNumber)"])
        let both = serials(["SSL_CERT_FILE": bundle.path, "SSL_CERT_DIR": "/nonexistent:\(hashed.path)"])
        #expect(both == ["\(authority.serialNumber)", "\(client.serialNumber)", "\(unknown.serialNumber)"])
        // SSL_CERT_DIR alone keeps the distribution's bundle and adds the directory's certificates.
        let withSystem = serials(["SSL_CERT_DIR": hashed.path])
        #expect(withSystem.contains("\(unknown.serialNumber)"))
        #expect(withSystem.count > 1 || !FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt"))
    }
}
