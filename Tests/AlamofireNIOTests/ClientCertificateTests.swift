import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Mutual TLS: a client certificate from PEM, DER or PKCS#12, for the session or one request, and
/// URLSession's codes when the server wants one and gets none, or refuses the one it gets.
@Suite struct ClientCertificateTests {
    static func session(for server: HTTPBinServer, identity: SecIdentity? = nil) throws -> Session {
        let authority = try #require(server.certificates).certificateAuthority
        return Session(
            configuration: URLSessionConfiguration.af.ephemeral, eventMonitors: [],
            additionalTrustRoots: [try SecCertificate(derEncoded: Data(authority.certificateDER))], clientIdentity: identity)
    }

    static func fetch(_ session: Session, _ server: HTTPBinServer, identity: SecIdentity? = nil) async throws -> DataResponse<Data, AFError>
    {
        let url = try #require(server.tlsURL(.mutualTLS, "/get"))
        return try await withTimeout {
            let request = session.request(url)
            if let identity { request.authenticate(with: identity) }
            return await request.serializingData().response
        }
    }

    /// `client`'s certificate and key as a PKCS#12 archive, made by openssl.
    static func pkcs12(_ client: CertificateIdentity, password: String) async throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("client.pem").path
        let key = directory.appendingPathComponent("client.key").path
        let archive = directory.appendingPathComponent("client.p12").path
        try Data(client.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(client.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
        let result = try await runProgram(
            "/usr/bin/openssl", ["pkcs12", "-export", "-in", certificate, "-inkey", key, "-out", archive, "-passout", "pass:\(password)"])
        #expect(result.status == 0, "\(result.output)")
        return try Data(contentsOf: URL(fileURLWithPath: archive))
    }

    @Test func aSessionIdentityFromPEMIsPresented() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let client = try #require(server.certificates).client
            let identity = try SecIdentity(
                certificateChain: [Data(client.certificatePEM.utf8)], privateKey: Data(client.privateKeyPEM.utf8))
            let response = try await Self.fetch(try Self.session(for: server, identity: identity), server)
            #expect(response.response?.statusCode == 200)
            #expect(response.metrics?.transactionMetrics.last?.negotiatedTLSProtocolVersion == "TLSv1.3")
        }
    }

    @Test func aRequestIdentityFromDERIsPresentedOnConnectionsOfItsOwn() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let client = try #require(server.certificates).client
            let identity = try SecIdentity(certificateChain: [Data(client.certificateDER)], privateKey: Data(client.privateKeyDER))
            let session = try Self.session(for: server)
            let refused = try await Self.fetch(session, server)
            let accepted = try await Self.fetch(session, server, identity: identity)
            #expect(accepted.response?.statusCode == 200)
            // The connection that authenticated is not lent to a request without the identity.
            let refusedAgain = try await Self.fetch(session, server)
            for response in [refused, refusedAgain] {
                guard case .sessionTaskFailed(let error as URLError) = response.error else {
                    Issue.record("expected sessionTaskFailed, got \(String(describing: response.error))")
                    continue
                }
                #expect(error.code == .clientCertificateRequired)
            }
            #expect(server.statistics.totalRequests == 1)
        }
    }

    @Test func aPKCS12IdentityOpensWithItsPasswordOnly() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let client = try #require(server.certificates).client
            let archive = try await Self.pkcs12(client, password: "s3cret")
            #expect(throws: (any Error).self) { try SecIdentity(pkcs12Data: archive, password: "wrong") }
            let identity = try SecIdentity(pkcs12Data: archive, password: "s3cret")
            let response = try await Self.fetch(try Self.session(for: server, identity: identity), server)
            #expect(response.response?.statusCode == 200)
        }
    }

    @Test func aCertificateFromAnotherAuthorityIsRejected() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let stranger = try #require(server.certificates).unknownAuthority
            let identity = try SecIdentity(
                certificateChain: [Data(stranger.certificatePEM.utf8)], privateKey: Data(stranger.privateKeyPEM.utf8))
            let response = try await Self.fetch(try Self.session(for: server, identity: identity), server)
            guard case .sessionTaskFailed(let error as URLError) = response.error else {
                Issue.record("expected sessionTaskFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error.code == .clientCertificateRejected)
            #expect(server.statistics.totalRequests == 0)
        }
    }

    @Test func unreadableIdentitiesThrow() throws {
        #expect(throws: (any Error).self) { try SecIdentity(certificateChain: [Data("nope".utf8)], privateKey: Data("nope".utf8)) }
        #expect(throws: (any Error).self) { try SecIdentity(certificateChain: [], privateKey: Data()) }
        #expect(throws: (any Error).self) { try SecIdentity(pkcs12Data: Data([0x30, 0x03, 0x02, 0x01]), password: nil) }
    }
}
