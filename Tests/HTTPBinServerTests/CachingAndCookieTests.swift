import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

@Suite struct CachingAndCookieTests {
    @Test func cacheGivesValidatorsThen304() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let first = try await fetch(server.url("/cache"))
            #expect(first.status == 200)
            let etag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            #expect(lastModified.hasSuffix(" GMT"))
            #expect(try await fetch(server.url("/cache"), headers: [("If-None-Match", etag)]).status == 304)
            #expect(try await fetch(server.url("/cache"), headers: [("If-Modified-Since", lastModified)]).status == 304)
        }
    }

    @Test func cacheSecondsSetsMaxAge() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(try await fetch(server.url("/cache/60")).header("Cache-Control") == "public, max-age=60")
        }
    }

    @Test func etagHonoursConditions() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let plain = try await fetch(server.url("/etag/abc"))
            #expect(plain.status == 200)
            #expect(plain.header("ETag") == "\"abc\"")
            #expect(try await fetch(server.url("/etag/abc"), headers: [("If-None-Match", "\"x\", W/\"abc\"")]).status == 304)
            #expect(try await fetch(server.url("/etag/abc"), headers: [("If-None-Match", "\"x\"")]).status == 200)
            #expect(try await fetch(server.url("/etag/abc"), headers: [("If-Match", "\"x\"")]).status == 412)
            #expect(try await fetch(server.url("/etag/abc"), headers: [("If-Match", "*")]).status == 200)
        }
    }

    @Test func responseHeadersAreSetAndEchoed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/response-headers?X-Test=1&X-Test=2&Content-Type=text/plain"))
            #expect(response.headers["X-Test"] == ["1", "2"])
            #expect(response.header("Content-Type") == "text/plain")
            #expect(response.json as NSDictionary == ["X-Test": ["1", "2"], "Content-Type": "text/plain"] as NSDictionary)
        }
    }

    @Test func cookiesAreEchoed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/cookies"), headers: [("Cookie", "a=1; b=two")])
            #expect(response.json["cookies"] as? [String: String] == ["a": "1", "b": "two"])
        }
    }

    @Test func cookiesSetAndDeleteRedirect() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let set = try await fetch(server.url("/cookies/set?k=v&n=1"))
            #expect(set.status == 302)
            #expect(set.header("Location") == "/cookies")
            #expect(set.headers["Set-Cookie"] == ["k=v; Path=/", "n=1; Path=/"])
            #expect(try await fetch(server.url("/cookies/set/name/value")).headers["Set-Cookie"] == ["name=value; Path=/"])
            let deleted = try await fetch(server.url("/cookies/delete?k"))
            #expect(deleted.headers["Set-Cookie"] == ["k=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"])
        }
    }
}
