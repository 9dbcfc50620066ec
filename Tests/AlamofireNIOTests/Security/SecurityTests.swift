import Foundation
import HTTPBinServer
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules SECURITY.md lists, each tested against the bundled servers so that breaking the rule
/// fails a test: credentials stay with their origin, certificates must be for servers, the TLS
/// versions and timeouts a configuration sets hold, memory follows bytes that arrived, an HTTP/2
/// server that rotates connections loses no request, and a caller's bad header bytes are the
/// caller's error. Each file of this folder holds one rule's tests.
@Suite struct SecurityTests {
    /// The protocol a test runs over: plain HTTP/1.1, or HTTPS where the server's ALPN picks HTTP/2.
    enum Wire: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case http1
        case http2

        var testDescription: String { rawValue }
    }

    /// A session for `wire`, trusting the server's test CA, without monitors.
    static func session(
        _ wire: Wire, _ server: HTTPBinServer, configuration: URLSessionConfiguration = .af.ephemeral,
        interceptor: (any RequestInterceptor)? = nil, redirectHandler: (any RedirectHandler)? = nil
    ) throws -> Session {
        let authority = try #require(server.certificates).certificateAuthority
        return Session(
            configuration: configuration, interceptor: interceptor, redirectHandler: redirectHandler, eventMonitors: [],
            additionalTrustRoots: [try SecCertificate(derEncoded: Data(authority.certificateDER))])
    }

    /// A URL on the server for `wire`: its plain listener, or the HTTPS listener of `variant`;
    /// `host` replaces `localhost`.
    static func url(
        _ wire: Wire, _ server: HTTPBinServer, _ path: String, host: String = "localhost", variant: TLSVariant = .valid
    )
        throws -> URL
    {
        let base =
            switch wire {
            case .http1: server.url(path)
            case .http2: try #require(server.tlsURL(variant, path))
            }
        var components = try #require(URLComponents(url: base, resolvingAgainstBaseURL: false))
        components.host = host
        return try #require(components.url)
    }

    /// The headers `/headers` echoed.
    static func echoedHeaders(_ data: Data?) throws -> [String: String] {
        struct Echo: Decodable { let headers: [String: String] }
        return try JSONDecoder().decode(Echo.self, from: try #require(data)).headers
    }
}
