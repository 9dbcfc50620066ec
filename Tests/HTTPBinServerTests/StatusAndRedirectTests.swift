import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

@Suite struct StatusAndRedirectTests {
    @Test(arguments: [200, 201, 204, 404, 500, 503])
    func statusAnswersTheCode(code: Int) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/status/\(code)"))
            #expect(response.status == code)
            #expect(response.bodyCount == 0)
        }
    }

    @Test func weightedStatusNeverPicksZeroWeight() async throws {
        try await HTTPBinServer.withServer { server async throws in
            var statuses: [Int] = []
            for _ in 0..<10 { statuses.append(try await fetch(server.url("/status/200:0,503:1")).status) }
            #expect(statuses == Array(repeating: 503, count: 10))
        }
    }

    @Test func specialStatusesCarryTheirHeaders() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let teapot = try await fetch(server.url("/status/418"))
            #expect(teapot.status == 418)
            #expect(teapot.text == "I'm a teapot: short and stout.\n")
            #expect(try await fetch(server.url("/status/401")).header("WWW-Authenticate") == "Basic realm=\"Fake Realm\"")
            #expect(try await fetch(server.url("/status/302")).header("Location") == "/redirect/1")
        }
    }

    @Test func invalidStatusIs400() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(try await fetch(server.url("/status/abc")).status == 400)
            #expect(try await fetch(server.url("/status/700")).status == 400)
        }
    }

    @Test func redirectChainsEndAtGet() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let first = try await fetch(server.url("/redirect/3"))
            #expect(first.status == 302)
            #expect(first.header("Location") == "/relative-redirect/2")
            #expect(try await fetch(server.url("/relative-redirect/1")).header("Location") == "/get")
            let absolute = try await fetch(server.url("/absolute-redirect/2"))
            #expect(absolute.header("Location") == "http://127.0.0.1:\(server.port)/absolute-redirect/1")
            #expect(try await fetch(server.url("/redirect/1?absolute=true")).header("Location") == "http://127.0.0.1:\(server.port)/get")
        }
    }

    @Test func redirectToUsesGivenStatus() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let temporary = try await fetch(server.url("/redirect-to?url=%2Fpost&status_code=307"), .POST)
            #expect(temporary.status == 307)
            #expect(temporary.header("Location") == "/post")
            let fallback = try await fetch(server.url("/redirect-to?url=http://example.invalid/&status_code=200"))
            #expect(fallback.status == 302)
            #expect(fallback.header("Location") == "http://example.invalid/")
        }
    }
}
