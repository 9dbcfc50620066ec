import Crypto
import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import SwiftASN1
import Testing
import X509

/// A client configuration that trusts exactly the given roots and optionally presents an identity.
func clientTLS(trusting roots: [CertificateIdentity], identity: CertificateIdentity? = nil) throws -> TLSConfiguration {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.trustRoots = .certificates(try roots.map { try NIOSSLCertificate(bytes: $0.certificateDER, format: .der) })
    if let identity {
        configuration.certificateChain = [.certificate(try NIOSSLCertificate(bytes: identity.certificateDER, format: .der))]
        configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
    }
    return configuration
}

@Suite struct TLSTests {
    @Test func validCertificateIsAcceptedWithTheTestCA() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(.valid, "/get"))
            let response = try await fetch(url, tls: try clientTLS(trusting: [certificates.certificateAuthority]))
            #expect(response.status == 200)
            #expect(response.json["url"] as? String == url.absoluteString)
        }
    }

    /// The chain checks fail inside BoringSSL; the name check is NIOSSL's own.
    @Test(arguments: [
        (TLSVariant.expired, "CERTIFICATE_VERIFY_FAILED"), (.selfSigned, "CERTIFICATE_VERIFY_FAILED"),
        (.unknownCA, "CERTIFICATE_VERIFY_FAILED"), (.wrongHost, "failedToValidateHostname"),
    ])
    func brokenCertificatesAreRejected(variant: TLSVariant, reason: String) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(variant, "/get"))
            let tls = try clientTLS(trusting: [certificates.certificateAuthority])
            await #expect {
                _ = try await fetch(url, tls: tls)
            } throws: { error in
                String(describing: error).contains(reason)
            }
        }
    }

    @Test func unknownCALeafIsAcceptedWhenItsRootIsTrusted() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(.unknownCA, "/get"))
            #expect(try await fetch(url, tls: try clientTLS(trusting: [certificates.unknownAuthority])).status == 200)
        }
    }

    @Test func certificatesHaveTheirVariantsFlaws() throws {
        let now = Date()
        let certificates = try TestCertificates.generate(now: now)
        func parse(_ identity: CertificateIdentity) throws -> Certificate { try Certificate(derEncoded: identity.certificateDER) }
        let ca = try parse(certificates.certificateAuthority)
        let valid = try parse(certificates.leaf(for: .valid))
        #expect(valid.issuer == ca.subject)
        #expect(valid.notValidBefore < now && valid.notValidAfter > now)
        let names = try valid.extensions.subjectAlternativeNames.map(Array.init)
        #expect(names?.count == 2)
        #expect(try parse(certificates.leaf(for: .expired)).notValidAfter < now)
        let wrongHost = try parse(certificates.leaf(for: .wrongHost))
        #expect(try wrongHost.extensions.subjectAlternativeNames.map(Array.init) == [.dnsName("wrong.host.invalid")])
        let selfSigned = try parse(certificates.leaf(for: .selfSigned))
        #expect(selfSigned.issuer == selfSigned.subject)
        #expect(try parse(certificates.leaf(for: .unknownCA)).issuer == parse(certificates.unknownAuthority).subject)
        #expect(certificates.leaf(for: .mutualTLS).certificateDER == certificates.leaf(for: .valid).certificateDER)
        #expect(certificates.certificateAuthority.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(certificates.certificateAuthority.publicKeySHA256.count == 32)
    }

    @Test func leavesHaveWhatPinningAndRevocationTestsNeed() throws {
        let responder = try #require(URL(string: "http://127.0.0.1:9/"))
        let certificates = try TestCertificates.generate(ocspResponderURL: responder)
        func parse(_ identity: CertificateIdentity) throws -> Certificate { try Certificate(derEncoded: identity.certificateDER) }
        let ca = try parse(certificates.certificateAuthority)
        for variant in TLSVariant.allCases {
            let leaf = certificates.leaf(for: variant)
            let certificate = try parse(leaf)
            // The serial number as openssl spells it: uppercase hex, two digits a byte, no leading zero byte.
            let digits = Array(leaf.serialNumberHex)
            #expect(digits.count.isMultiple(of: 2) && leaf.serialNumberHex == leaf.serialNumberHex.uppercased())
            let bytes = stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0..<$0 + 2]), radix: 16) }
            #expect(bytes == Array(certificate.serialNumber.bytes.drop { $0 == 0 }))
            #expect(bytes.first != 0)
            let key = try P256.Signing.PrivateKey(derRepresentation: leaf.privateKeyDER)
            #expect(certificate.publicKey == Certificate.PublicKey(key.publicKey))
        }

        // `reissued`: `valid`'s key in a certificate of its own.
        let valid = certificates.leaf(for: .valid)
        let reissued = certificates.leaf(for: .reissued)
        #expect(reissued.privateKeyDER == valid.privateKeyDER)
        #expect(reissued.publicKeySHA256 == valid.publicKeySHA256)
        #expect(reissued.certificateDER != valid.certificateDER)
        #expect(reissued.serialNumberHex != valid.serialNumberHex)
        #expect(try parse(reissued).issuer == ca.subject)

        // The OCSP leaves name the responder; the others do not.
        let ocspVariants: [TLSVariant] = [.ocspGood, .ocspRevoked, .ocspUnknown]
        let location = AuthorityInformationAccess.AccessDescription(
            method: .ocspServer, location: .uniformResourceIdentifier(responder.absoluteString))
        for variant in ocspVariants {
            let certificate = try parse(certificates.leaf(for: variant))
            #expect(certificate.issuer == ca.subject)
            #expect(try certificate.extensions.authorityInformationAccess.map(Array.init) == [location])
        }
        #expect(Set(ocspVariants.map { certificates.leaf(for: $0).serialNumberHex }).count == 3)
        #expect(try parse(valid).extensions.authorityInformationAccess == nil)
        let withoutResponder = try TestCertificates.generate()
        #expect(try parse(withoutResponder.leaf(for: .ocspGood)).extensions.authorityInformationAccess == nil)
    }

    @Test func serverPresentsTheCertificatesItIsGiven() async throws {
        let certificates = try TestCertificates.generate()
        try await HTTPBinServer.withServer(.init(tls: true, certificates: certificates)) { server async throws in
            #expect(server.certificates?.leaf(for: .valid).certificateDER == certificates.leaf(for: .valid).certificateDER)
            let tls = try clientTLS(trusting: [certificates.certificateAuthority])
            for variant in [TLSVariant.reissued, .ocspGood, .ocspRevoked, .ocspUnknown] {
                let url = try #require(server.tlsURL(variant, "/get"))
                #expect(try await fetch(url, tls: tls).status == 200)
            }
        }
    }

    @Test func mutualTLSDemandsAClientCertificate() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let certificates = try #require(server.certificates)
            let url = try #require(server.tlsURL(.mutualTLS, "/get"))
            await #expect(throws: (any Error).self) {
                _ = try await fetch(url, tls: try clientTLS(trusting: [certificates.certificateAuthority]))
            }
            let withIdentity = try clientTLS(trusting: [certificates.certificateAuthority], identity: certificates.client)
            #expect(try await fetch(url, tls: withIdentity).status == 200)
        }
    }

    @Test func http2IsNegotiatedOverALPN() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            var tls = try clientTLS(trusting: [try #require(server.certificates).certificateAuthority])
            tls.applicationProtocols = ["h2"]
            let context = try NIOSSLContext(configuration: tls)
            let port = try #require(server.tlsPort(.valid))
            let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    }.flatMap {
                        channel.configureAsyncHTTP2Pipeline(mode: .client) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                    }.map { (channel, $0) }
                }
            let stream = try await multiplexer.openStream { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: stream)
                }
            }
            let (version, body) = try await stream.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http2, method: .GET, uri: "/get")
                head.headers.add(name: "host", value: "127.0.0.1:\(port)")
                try await outbound.write(.head(head))
                try await outbound.write(.end(nil))
                var version: HTTPVersion?
                var body = ByteBuffer()
                for try await part in inbound {
                    switch part {
                    case .head(let responseHead): version = responseHead.version
                    case .body(var buffer): body.writeBuffer(&buffer)
                    case .end: return (version, body)
                    }
                }
                return (version, body)
            }
            try await channel.close()
            #expect(version == .http2)
            let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            #expect(json?["url"] as? String == "https://127.0.0.1:\(port)/get")
        }
    }
}
