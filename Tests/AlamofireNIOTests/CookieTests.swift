import Foundation
import HTTPBinServer
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies through a Session, as URLSession handles them: stored from every response, redirect hops
/// included, and sent on every later request and hop. Each test has its own (ephemeral) storage:
/// the default configuration's is the shared one, which every `AF` request would then send.
@Suite struct CookieTests {
    struct Cookies: Decodable, Sendable {
        let cookies: [String: String]
    }

    static func session(_ configure: (URLSessionConfiguration) -> Void = { _ in }) -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configure(configuration)
        return Session(configuration: configuration, eventMonitors: [])
    }

    static func cookies(_ session: Session, _ url: URL) async throws -> [String: String] {
        try await session.request(url).validate().serializingDecodable(Cookies.self).value.cookies
    }

    @Test func aCookieSetOnARedirectHopIsSentOnTheNextHopAndLaterRequests() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let request = session.request(server.url("/cookies/set?a=1&b=two"))
            // The 302 sets the cookies; the hop it leads to already carries them.
            let response = await request.serializingDecodable(Cookies.self).response
            #expect(response.value?.cookies == ["a": "1", "b": "two"])
            #expect(response.metrics?.redirectCount == 1)
            #expect(request.request?.value(forHTTPHeaderField: "Cookie") == nil)

            #expect(try await Self.cookies(session, server.url("/cookies")) == ["a": "1", "b": "two"])
            let stored = session.sessionConfiguration.httpCookieStorage?.cookies ?? []
            #expect(Set(stored.map(\.name)) == ["a", "b"])
            #expect(stored.allSatisfy { $0.domain == "127.0.0.1" && $0.path == "/" && $0.isSessionOnly })

            // Deleting one (an expired Set-Cookie) leaves the other.
            #expect(try await Self.cookies(session, server.url("/cookies/delete?a")) == ["b": "two"])
        }
    }

    @Test func cookiesFollowTheirPath() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            let setter = server.url("/response-headers")
            _ = try await session.request(
                setter, parameters: ["Set-Cookie": ["root=1; Path=/", "scoped=2; Path=/cookies", "elsewhere=3; Path=/anything"]],
                encoding: URLEncoding(arrayEncoding: .noBrackets)
            ).validate().serializingData().value
            #expect(try await Self.cookies(session, server.url("/cookies")) == ["root": "1", "scoped": "2"])
            let echoed = try await session.request(server.url("/anything/x")).serializingDecodable(HTTPBinResponse.self).value
            #expect(echoed.headers["Cookie"] == "elsewhere=3; root=1")
        }
    }

    @Test func secureCookiesAreNotSentOverPlainHTTP() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            _ = try await session.request(
                server.url("/response-headers"), parameters: ["Set-Cookie": ["plain=1", "secret=2; Secure"]],
                encoding: URLEncoding(arrayEncoding: .noBrackets)
            ).serializingData().value
            #expect(try await Self.cookies(session, server.url("/cookies")) == ["plain": "1"])
            #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.count == 2)
        }
    }

    @Test func expiredAndMaxAgeZeroCookiesAreNotStored() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            _ = try await session.request(
                server.url("/response-headers"),
                parameters: ["Set-Cookie": ["old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "zero=1; Max-Age=0", "kept=1; Max-Age=600"]],
                encoding: URLEncoding(arrayEncoding: .noBrackets)
            ).serializingData().value
            #expect(try await Self.cookies(session, server.url("/cookies")) == ["kept": "1"])
        }
    }

    @Test func httpShouldSetCookiesOffSendsNoneButStillStores() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session { $0.httpShouldSetCookies = false }
            #expect(try await Self.cookies(session, server.url("/cookies/set?a=1")) == [:])
            #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.map(\.name) == ["a"])
        }
    }

    @Test func theNeverAcceptPolicyStoresNothing() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session { $0.httpCookieAcceptPolicy = .never }
            #expect(try await Self.cookies(session, server.url("/cookies/set?a=1")) == [:])
            #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.isEmpty == true)
        }
    }

    @Test func aRequestThatDoesNotHandleCookiesNeitherSendsNorStores() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session()
            _ = try await Self.cookies(session, server.url("/cookies/set?a=1"))
            let unhandled = try await session.request(server.url("/cookies/set?b=2")) { $0.httpShouldHandleCookies = false }
                .serializingDecodable(Cookies.self).value
            #expect(unhandled.cookies == [:])
            #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.map(\.name) == ["a"])
            // A Cookie header set by hand is sent as it is.
            let manual = try await session.request(server.url("/cookies"), headers: ["Cookie": "mine=1"])
                .serializingDecodable(Cookies.self).value
            #expect(manual.cookies == ["mine": "1"])
        }
    }

    @Test func noCookieStorageMeansNoCookies() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Self.session { $0.httpCookieStorage = nil }
            #expect(try await Self.cookies(session, server.url("/cookies/set?a=1")) == [:])
        }
    }
}
