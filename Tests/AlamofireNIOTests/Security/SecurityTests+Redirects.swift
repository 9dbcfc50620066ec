import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Credentials stay with their origin: a redirect to another scheme, host or port carries no
/// `Authorization`, `Proxy-Authorization`, `Cookie` or `Origin`, whoever set them; a same-origin
/// redirect keeps them; a `RedirectHandler` may send one on purpose.
extension SecurityTests {
    /// How a redirect leaves its origin.
    enum OriginChange: String, CaseIterable, Sendable {
        /// `localhost` to `127.0.0.1`, same port.
        case host
        /// Another port on `localhost`.
        case port
    }

    /// Where the credentials come from.
    enum CredentialSource: String, CaseIterable, Sendable {
        /// `configuration.headers`, the most common way to authenticate with Alamofire.
        case sessionHeaders
        /// The request's own headers.
        case requestHeaders
        /// An adapter that ran for the first hop.
        case adapter
    }

    static let credentialFields: HTTPHeaders = [
        "Authorization": "Bearer secret-token", "Cookie": "session=secret", "Origin": "https://app.example",
        "Proxy-Authorization": "Basic cHJveHk6c2VjcmV0",
    ]

    /// Runs `body` with a TLS-capable server and, for a port change over HTTP/1.1, a second server.
    static func withRedirectServers(_ body: (HTTPBinServer, HTTPBinServer) async throws -> Void) async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            try await HTTPBinServer.withServer { other async throws in try await body(server, other) }
        }
    }

    /// `/headers` on another origin than `url(wire, server, …)` with `localhost`.
    static func otherOrigin(_ wire: Wire, _ change: OriginChange, _ server: HTTPBinServer, _ other: HTTPBinServer) throws -> URL {
        switch (wire, change) {
        case (_, .host): try url(wire, server, "/headers", host: "127.0.0.1")
        case (.http1, .port): try url(.http1, other, "/headers")
        case (.http2, .port): try url(.http2, server, "/headers", variant: .reissued)
        }
    }

    /// A request whose first hop carries the credentials from `source`, redirected to `target`.
    static func redirectedRequest(
        _ wire: Wire, _ server: HTTPBinServer, to target: URL, source: CredentialSource, redirectHandler: (any RedirectHandler)? = nil
    ) async throws -> (first: [String: String], final: DataResponse<Data, AFError>) {
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.httpCookieStorage = nil
        if source == .sessionHeaders {
            var headers = configuration.headers
            for field in credentialFields { headers.update(field) }
            configuration.headers = headers
        }
        let adapter = Adapter { request, _, completion in
            var request = request
            for field in credentialFields { request.headers.update(field) }
            completion(.success(request))
        }
        let session = try session(
            wire, server, configuration: configuration, interceptor: source == .adapter ? adapter : nil, redirectHandler: redirectHandler)
        let headers = source == .requestHeaders ? credentialFields : nil
        // What the first origin receives, for the control.
        let first = try await withTimeout {
            await session.request(try url(wire, server, "/headers"), headers: headers).serializingData().response
        }
        var redirect = URLComponents(url: try url(wire, server, "/redirect-to"), resolvingAgainstBaseURL: false)
        redirect?.queryItems = [URLQueryItem(name: "url", value: target.absoluteString), URLQueryItem(name: "status_code", value: "307")]
        let start = try #require(redirect?.url)
        let final = try await withTimeout { await session.request(start, headers: headers).serializingData().response }
        return (try echoedHeaders(first.data), final)
    }

    @Test(arguments: Wire.allCases, CredentialSource.allCases)
    func aRedirectToAnotherHostOrPortCarriesNoCredentials(wire: Wire, source: CredentialSource) async throws {
        try await Self.withRedirectServers { server, other in
            for change in OriginChange.allCases {
                let target = try Self.otherOrigin(wire, change, server, other)
                let (first, final) = try await Self.redirectedRequest(wire, server, to: target, source: source)
                // The first origin got them (Proxy-Authorization is never sent to an origin)...
                #expect(first["Authorization"] == "Bearer secret-token", "\(change)")
                #expect(first["Cookie"] == "session=secret", "\(change)")
                #expect(first["Origin"] == "https://app.example", "\(change)")
                // ...the other origin none of them.
                #expect(final.response?.url == target, "\(change)")
                let received = try Self.echoedHeaders(final.data)
                for name in ["Authorization", "Proxy-Authorization", "Cookie", "Origin"] {
                    #expect(received[name] == nil, "\(change): \(name) reached \(target)")
                }
                #expect(received["Accept-Encoding"] != nil, "the session's other headers still go")
            }
        }
    }

    @Test(arguments: Wire.allCases, CredentialSource.allCases)
    func aSameOriginRedirectKeepsTheCredentials(wire: Wire, source: CredentialSource) async throws {
        try await Self.withRedirectServers { server, _ in
            let target = try Self.url(wire, server, "/headers")
            let (_, final) = try await Self.redirectedRequest(wire, server, to: target, source: source)
            let received = try Self.echoedHeaders(final.data)
            #expect(received["Authorization"] == "Bearer secret-token")
            #expect(received["Cookie"] == "session=secret")
            #expect(received["Origin"] == "https://app.example")
        }
    }

    @Test(arguments: Wire.allCases)
    func aRedirectHandlerMaySendACredentialToTheNewOriginOnPurpose(wire: Wire) async throws {
        try await Self.withRedirectServers { server, other in
            let handler = Redirector(
                behavior: .modify { _, request, _ in
                    var request = request
                    request.headers.add(.authorization(bearerToken: "meant-for-the-other-origin"))
                    return request
                })
            let target = try Self.otherOrigin(wire, .host, server, other)
            let (_, final) = try await Self.redirectedRequest(wire, server, to: target, source: .sessionHeaders, redirectHandler: handler)
            let received = try Self.echoedHeaders(final.data)
            #expect(received["Authorization"] == "Bearer meant-for-the-other-origin")
            #expect(received["Cookie"] == nil)
        }
    }

    @Test(arguments: Wire.allCases)
    func storedCookiesAndARequestsCredentialStayWithTheirHost(wire: Wire) async throws {
        try await Self.withRedirectServers { server, _ in
            let configuration = URLSessionConfiguration.af.ephemeral
            let session = try Self.session(wire, server, configuration: configuration)
            // A cookie for localhost.
            _ = try await withTimeout {
                await session.request(try Self.url(wire, server, "/cookies/set?stored=yes")).serializingData().response
            }
            @Sendable func redirect(to target: URL) throws -> URL {
                var components = URLComponents(url: try Self.url(wire, server, "/redirect-to"), resolvingAgainstBaseURL: false)
                components?.queryItems = [URLQueryItem(name: "url", value: target.absoluteString)]
                return try #require(components?.url)
            }
            let sameHost = try await withTimeout {
                await session.request(try redirect(to: try Self.url(wire, server, "/headers"))).serializingData().response
            }
            #expect(try Self.echoedHeaders(sameHost.data)["Cookie"] == "stored=yes")
            let otherHost = try await withTimeout {
                await session.request(try redirect(to: try Self.url(wire, server, "/headers", host: "127.0.0.1"))).serializingData()
                    .response
            }
            #expect(try Self.echoedHeaders(otherHost.data)["Cookie"] == nil)

            // A credential given with `authenticate` answers its own origin's challenge only.
            let ownChallenge = try await withTimeout {
                await session.request(try redirect(to: try Self.url(wire, server, "/basic-auth/user/pass")))
                    .authenticate(username: "user", password: "pass").serializingData().response
            }
            #expect(ownChallenge.response?.statusCode == 200)
            let otherChallenge = try await withTimeout {
                await session.request(try redirect(to: try Self.url(wire, server, "/basic-auth/user/pass", host: "127.0.0.1")))
                    .authenticate(username: "user", password: "pass").serializingData().response
            }
            #expect(otherChallenge.response?.statusCode == 401)
        }
    }
}
