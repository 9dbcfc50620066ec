import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's request kinds through a `Session` over HTTPS, once over HTTP/2 (what the server's
/// ALPN offers first) and once with HTTP/1.1 forced: the same results either way.
@Suite struct HTTP2SessionTests {
    static func session(for server: HTTPBinServer, allowsHTTP2: Bool) throws -> Session {
        let authority = try #require(server.certificates).certificateAuthority
        return Session(
            configuration: URLSessionConfiguration.af.ephemeral, eventMonitors: [],
            additionalTrustRoots: [try SecCertificate(derEncoded: Data(authority.certificateDER))], allowsHTTP2: allowsHTTP2)
    }

    static func url(_ server: HTTPBinServer, _ path: String) throws -> URL {
        try #require(server.tlsURL(.valid, path))
    }

    static func protocolName(_ metrics: TaskMetrics?) -> String? {
        metrics?.transactionMetrics.last?.networkProtocolName
    }

    static func expectedProtocol(_ allowsHTTP2: Bool) -> String { allowsHTTP2 ? "h2" : "http/1.1" }

    struct Echo: Decodable, Sendable {
        let args: [String: String]
        let url: String
    }

    @Test(arguments: [true, false])
    func aValidatedDecodableGET(allowsHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(for: server, allowsHTTP2: allowsHTTP2)
            let url = try Self.url(server, "/get?q=h2")
            let response = try await withTimeout {
                await session.request(url).validate().serializingDecodable(Echo.self).response
            }
            #expect(try response.result.get().args == ["q": "h2"])
            #expect(response.response?.statusCode == 200)
            #expect(Self.protocolName(response.metrics) == Self.expectedProtocol(allowsHTTP2))
        }
    }

    @Test(arguments: [true, false])
    func aJSONPostRedirectsAndAuthentication(allowsHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(for: server, allowsHTTP2: allowsHTTP2)
            let posted = try await withTimeout {
                await session.request(
                    try Self.url(server, "/post"), method: .post, parameters: ["name": "h2"], encoder: JSONParameterEncoder.default
                ).serializingData().response
            }
            let json = try JSONSerialization.jsonObject(with: try posted.result.get()) as? [String: Any]
            #expect(json?["json"] as? [String: String] == ["name": "h2"])

            let redirected = try await withTimeout { await session.request(try Self.url(server, "/redirect/3")).serializingData().response }
            #expect(redirected.response?.url?.path == "/get")
            #expect(redirected.metrics?.transactionMetrics.count == 4)

            let authenticated = try await withTimeout {
                await session.request(try Self.url(server, "/basic-auth/user/pass")).authenticate(username: "user", password: "pass")
                    .validate().serializingData().response
            }
            #expect(authenticated.response?.statusCode == 200)
            #expect(Self.protocolName(authenticated.metrics) == Self.expectedProtocol(allowsHTTP2))
        }
    }

    @Test(arguments: [true, false])
    func compressedCookiesDownloadsUploadsAndStreams(allowsHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(for: server, allowsHTTP2: allowsHTTP2)
            let gzipped = try await withTimeout { await session.request(try Self.url(server, "/gzip")).serializingData().response }
            let decoded = try JSONSerialization.jsonObject(with: try gzipped.result.get()) as? [String: Any]
            #expect(decoded?["gzipped"] as? Bool == true)

            _ = try await withTimeout { await session.request(try Self.url(server, "/cookies/set?flavour=h2")).serializingData().response }
            let cookies = try await withTimeout { await session.request(try Self.url(server, "/cookies")).serializingData().response }
            let jar = try JSONSerialization.jsonObject(with: try cookies.result.get()) as? [String: Any]
            #expect(jar?["cookies"] as? [String: String] == ["flavour": "h2"])

            let downloaded = try await withTimeout {
                await session.download(try Self.url(server, "/bytes/300000")).serializingData().response
            }
            #expect(try downloaded.result.get().count == 300_000)

            let payload = Data(repeating: 7, count: 1_000_000)
            let uploaded = try await withTimeout {
                await session.upload(payload, to: try Self.url(server, "/upload")).serializingData().response
            }
            let summary = try JSONSerialization.jsonObject(with: try uploaded.result.get()) as? [String: Any]
            #expect(summary?["bytes"] as? Int == 1_000_000)

            let streamed = try await withTimeout {
                var count = 0
                for await chunk in session.streamRequest(try Self.url(server, "/stream-bytes/400000")).streamTask().streamingData() {
                    if case .stream(.success(let data)) = chunk.event { count += data.count }
                }
                return count
            }
            #expect(streamed == 400_000)
        }
    }

    @Test(arguments: [true, false])
    func cancellingOneRequestLeavesItsNeighboursAlone(allowsHTTP2: Bool) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let session = try Self.session(for: server, allowsHTTP2: allowsHTTP2)
            // A response handler resumes a request (startRequestsImmediately).
            let slow = session.request(try Self.url(server, "/hold/never"))
            let slowResponse = slow.serializingData()
            // Seven streams in all: below the eight at which a second connection may open (how many
            // are in flight at once depends on timing), so one connection proves the cancel reset a
            // stream and closed nothing.
            let neighbours = try (0..<6).map { session.request(try Self.url(server, "/get?i=\($0)")).serializingData() }
            try await withTimeout { try await server.waitUntil { $0.totalRequests >= 1 } }
            slow.cancel()
            let cancelled = try await withTimeout { await slowResponse.response }
            #expect(cancelled.error?.isExplicitlyCancelledError == true)
            for neighbour in neighbours {
                let response = try await withTimeout { await neighbour.response }
                #expect(response.response?.statusCode == 200)
            }
            if allowsHTTP2 { #expect(server.statistics.acceptedConnections == 1) }
        }
    }
}
