import Foundation
import HTTPBinServer
import Testing

/// The `af` program end to end against the bundled server: requests, output and exit statuses.
@Suite struct AFCommandTests {
    @Test func aGetWithQueryItemsAndHeadersPrintsTheBodyUnchangedWhenPiped() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", [server.url("/get").absoluteString, "q==a&b", "X-Test:yes", "User-Agent:"])
            #expect(run.status == 0)
            #expect(run.errors.isEmpty)
            let body = try run.json()
            #expect(body["args"] as? [String: String] == ["q": "a&b"])
            let headers = try #require(body["headers"] as? [String: String])
            #expect(headers["X-Test"] == "yes")
            #expect(headers["Accept"] == "*/*")
            #expect(headers["User-Agent"] == nil)
            #expect(body["url"] as? String == "http://127.0.0.1:\(server.port)/get?q=a%26b")
        }
    }

    @Test func fieldsMakeAJSONBodyInOrderWithHTTPiesHeaders() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", [server.url("/post").absoluteString, "name=Ada", "age:=36", "langs:=[\"en\",\"fr\"]"])
            #expect(run.status == 0)
            let body = try run.json()
            #expect(body["data"] as? String == #"{"name":"Ada","age":36,"langs":["en","fr"]}"#)
            let headers = try #require(body["headers"] as? [String: String])
            #expect(headers["Content-Type"] == "application/json")
            #expect(headers["Accept"] == "application/json, */*;q=0.5")
            #expect(headers["User-Agent"]?.hasPrefix("af/1.0.0 AlamofireNIO/") == true)
        }
    }

    @Test func formAndMultipartBodies() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let form = try await run("af", ["--form", "PUT", server.url("/put").absoluteString, "a=1", "b=x y&z"])
            #expect(form.status == 0)
            #expect(try form.json()["form"] as? [String: String] == ["a": "1", "b": "x y&z"])

            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("notes")
            try Data("line one\n".utf8).write(to: file)
            let multipart = try await run("af", [server.url("/post").absoluteString, "title=Notes", "doc@\(file.path)"])
            #expect(multipart.status == 0)
            let body = try multipart.json()
            #expect(body["form"] as? [String: String] == ["title": "Notes"])
            #expect(body["files"] as? [String: String] == ["doc": "line one\n"])
            #expect((body["headers"] as? [String: String])?["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        }
    }

    @Test func printChoosesTheRequestAndResponseParts() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", ["--print", "HBh", server.url("/post").absoluteString, "n:=1", "X-A:b"])
            #expect(run.status == 0)
            let sections = run.output.components(separatedBy: "\n\n")
            #expect(sections.count == 4)
            let request = sections[0].split(separator: "\n").map(String.init)
            #expect(request.first == "POST /post HTTP/1.1")
            #expect(request.dropFirst().first == "Host: 127.0.0.1:\(server.port)")
            #expect(request.contains("Content-Type: application/json"))
            #expect(request.contains("X-A: b"))
            #expect(sections[1] == #"{"n":1}"#)
            #expect(sections[2].hasPrefix("HTTP/1.1 200 OK\nContent-Length: "))
            #expect(sections[3] == "")
        }
    }

    @Test func verboseShowsTheCURLCommandTheRequestAndTheTiming() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let run = try await run("af", ["-v", server.url("/get").absoluteString])
            #expect(run.status == 0)
            #expect(run.output.hasPrefix("$ curl -v \\\n\t-X GET \\\n"))
            #expect(run.output.contains("\n\nGET /get HTTP/1.1\nHost: 127.0.0.1:\(server.port)\n"))
            #expect(run.output.contains("\n\nHTTP/1.1 200 OK\n"))
            #expect(run.output.contains("\nElapsed time: "))
            #expect(run.output.contains("\n  Connect: "))
        }
    }

    @Test func outputSendsTheBodyToAFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("body.json")
            let run = try await run("af", ["-o", file.path, server.url("/json").absoluteString])
            #expect(run.status == 0)
            #expect(run.output.isEmpty)
            let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            #expect((saved?["slideshow"] as? [String: Any])?["author"] as? String == "Yours Truly")
        }
    }

    @Test(arguments: [
        ("/status/301", 3, "af: warning: HTTP 301 Moved Permanently\n"),
        ("/status/404", 4, "af: warning: HTTP 404 Not Found\n"),
        ("/status/503", 5, "af: warning: HTTP 503 Service Unavailable\n"),
        ("/status/204", 0, ""),
    ])
    func checkStatusExitsWithTheStatusClass(path: String, status: Int32, warning: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let checked = try await run("af", ["--check-status", server.url(path).absoluteString])
            #expect(checked.status == status)
            #expect(checked.errors == warning)
            let unchecked = try await run("af", [server.url(path).absoluteString])
            #expect(unchecked.status == 0)
        }
    }

    @Test func redirectsAreFollowedOnlyWhenAskedAndUpToTheLimit() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/redirect/2").absoluteString
            let notFollowed = try await run("af", ["--headers", url])
            #expect(notFollowed.output.hasPrefix("HTTP/1.1 302 Found\n"))
            let followed = try await run("af", ["--follow", url])
            #expect(followed.status == 0)
            #expect(try followed.json()["url"] as? String == "http://127.0.0.1:\(server.port)/get")
            let limited = try await run("af", ["--follow", "--max-redirects", "1", url])
            #expect(limited.status == 6)
            #expect(limited.errors == "af: error: Too many redirects (--max-redirects=1).\n")
        }
    }

    @Test func authenticationIsAnsweredAsTheServerAsks() async throws {
        try await HTTPBinServer.withServer { server async throws in
            for path in ["/basic-auth/ada/secret", "/digest-auth/auth/ada/secret", "/digest-auth/auth/ada/secret/SHA-256"] {
                let run = try await run("af", ["--auth", "ada:secret", server.url(path).absoluteString])
                #expect(run.status == 0, "\(path)")
                #expect(try run.json()["authenticated"] as? Bool == true, "\(path)")
            }
            let wrong = try await run("af", ["--check-status", "-a", "ada:wrong", server.url("/basic-auth/ada/secret").absoluteString])
            #expect(wrong.status == 4)
            let bearer = try await run("af", ["--bearer", "t0ken", server.url("/bearer").absoluteString])
            #expect(try bearer.json()["token"] as? String == "t0ken")
        }
    }

    @Test func timeoutsRefusedConnectionsAndBadInputEndWithHTTPiesStatuses() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let slow = try await run("af", ["--timeout", "0.3", server.url("/hold/never").absoluteString])
            #expect(slow.status == 2)
            #expect(slow.errors == "af: error: Request timed out (0.3s).\n")
        }
        let refused = try await run("af", ["http://127.0.0.1:1/get"])
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("af: error: URLSessionTask failed with error: "))
        let badURL = try await run("af", ["ftp://example.org/"])
        #expect(badURL.status == 1)
        #expect(badURL.errors == "af: error: \"ftp://example.org/\" is not an http or https URL\n")
        let badItem = try await run("af", ["http://127.0.0.1:1/", "n:={"])
        #expect(badItem.status == 1)
        #expect(badItem.errors.hasPrefix("af: error: \"n:={\": not JSON: "))
        let missingFile = try await run("af", ["http://127.0.0.1:1/", "f@/no/such/file"])
        #expect(missingFile.status == 1)
        #expect(missingFile.errors == "af: error: f@/no/such/file: no such file, or it cannot be read\n")
        let usage = try await run("af", ["--continue", "http://127.0.0.1:1/"])
        #expect(usage.status == 64)
        #expect(usage.errors.contains("--continue needs --download and --output."))
    }

    @Test func aTerminalGetsColoursAndIndentedJSONAndAPipeNeither() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let terminal = try await runInTerminal("af", [server.url("/json").absoluteString], in: directory)
            #expect(terminal.status == 0)
            let shown = terminal.output.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(shown.hasPrefix("\u{1B}[34;1mHTTP/1.1\u{1B}[0m \u{1B}[32m200 OK\u{1B}[0m\n"))
            #expect(shown.contains("\n{\n    \u{1B}[34m\"slideshow\"\u{1B}[0m: {\n"))
            let piped = try await run("af", [server.url("/json").absoluteString])
            #expect(!piped.output.contains("\u{1B}"))
            #expect(piped.output.hasPrefix("{\n  \"slideshow\": {\n"))
        }
    }
}
