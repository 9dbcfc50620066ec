import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

@Suite struct EchoEndpointTests {
    @Test func getEchoesArgsHeadersOriginAndURL() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/get?a=1&a=2&b=x+y&c=%26"), headers: [("X-Custom-header", "v")])
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            let json = response.json
            #expect(Set(json.keys) == ["args", "headers", "origin", "url"])
            #expect(json["args"] as? NSDictionary == ["a": ["1", "2"], "b": "x y", "c": "&"] as NSDictionary)
            #expect(json["origin"] as? String == "127.0.0.1")
            #expect(json["url"] as? String == "http://127.0.0.1:\(server.port)/get?a=1&a=2&b=x+y&c=%26")
            let headers = json["headers"] as? [String: String]
            #expect(headers == ["Host": "127.0.0.1:\(server.port)", "X-Custom-Header": "v"])
        }
    }

    @Test func repeatedHeadersAreJoinedWithCommas() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/headers"), headers: [("Accept", "a/b"), ("accept", "c/d")])
            #expect((response.json["headers"] as? [String: String])?["Accept"] == "a/b,c/d")
        }
    }

    @Test func postEchoesFormFields() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(
                server.url("/post"), .POST, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: .bytes(Array("foo=bar&baz=a+b&baz=%C3%A9".utf8)))
            let json = response.json
            #expect(Set(json.keys) == ["args", "data", "files", "form", "headers", "json", "origin", "url"])
            #expect(json["form"] as? NSDictionary == ["foo": "bar", "baz": ["a b", "é"]] as NSDictionary)
            #expect(json["data"] as? String == "")
            #expect(json["json"] is NSNull)
        }
    }

    @Test func postEchoesJSONBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let body = #"{"name":"AlamofireNIO","tags":["a","b"],"count":3}"#
            let response = try await fetch(
                server.url("/post"), .POST, headers: [("Content-Type", "application/json")], body: .bytes(Array(body.utf8)))
            #expect(response.json["data"] as? String == body)
            let json = response.json["json"] as? [String: Any]
            #expect(json?["name"] as? String == "AlamofireNIO")
            #expect(json?["tags"] as? [String] == ["a", "b"])
            #expect(json?["count"] as? Int == 3)
        }
    }

    @Test func postSplitsMultipartIntoFormAndFiles() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let boundary = "alamofire.boundary.1234"
            let body = [
                "--\(boundary)",
                "Content-Disposition: form-data; name=\"greeting\"",
                "",
                "hello",
                "--\(boundary)",
                "Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"",
                "Content-Type: text/plain",
                "",
                "file contents\r\nline two",
                "--\(boundary)--",
                "",
            ].joined(separator: "\r\n")
            let response = try await fetch(
                server.url("/post"), .POST, headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: .bytes(Array(body.utf8)))
            #expect(response.json["form"] as? [String: String] == ["greeting": "hello"])
            #expect(response.json["files"] as? [String: String] == ["upload": "file contents\r\nline two"])
        }
    }

    @Test func binaryBodyIsShownAsDataURL() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/put"), .PUT, body: .bytes([0xFF, 0x00, 0xFE]))
            #expect(response.json["data"] as? String == "data:application/octet-stream;base64,/wD+")
        }
    }

    @Test(arguments: ["PATCH", "DELETE"])
    func methodEndpointsAcceptTheirOwnMethod(method: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/\(method.lowercased())"), .init(rawValue: method), body: .bytes(Array("x".utf8)))
            #expect(response.status == 200)
            #expect(response.json["data"] as? String == "x")
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/get"), .POST)
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
            let post = try await fetch(server.url("/post"), .GET)
            #expect(post.status == 405)
            #expect(post.header("Allow") == "POST")
        }
    }

    @Test func anythingEchoesAnyMethodAndPath() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/anything/a/b?q=1"), .init(rawValue: "PURGE"), body: .bytes(Array("hi".utf8)))
            #expect(response.json["method"] as? String == "PURGE")
            #expect(response.json["url"] as? String == "http://127.0.0.1:\(server.port)/anything/a/b?q=1")
            #expect(response.json["data"] as? String == "hi")
            #expect(response.json["args"] as? [String: String] == ["q": "1"])
        }
    }

    @Test func headReturnsGetHeadersWithoutBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let get = try await fetch(server.url("/bytes/100?seed=1"))
            let head = try await fetch(server.url("/bytes/100?seed=1"), .HEAD)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "100")
            #expect(head.bodyCount == 0)
            #expect(get.bodyCount == 100)
        }
    }

    @Test func ipAndUserAgent() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(try await fetch(server.url("/ip")).json as? [String: String] == ["origin": "127.0.0.1"])
            let agent = try await fetch(server.url("/user-agent"), headers: [("User-Agent", "AlamofireNIO/0.1")])
            #expect(agent.json as? [String: String] == ["user-agent": "AlamofireNIO/0.1"])
        }
    }

    @Test func unknownPathIs404() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/no/such/endpoint"))
            #expect(response.status == 404)
        }
    }

    @Test func oversizedEchoBodyIs413() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await fetch(server.url("/post"), .POST, body: .generated(count: 64 * 1024 * 1024 + 1, seed: 1))
            #expect(response.status == 413)
        }
    }
}
