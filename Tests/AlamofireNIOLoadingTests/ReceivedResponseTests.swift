import AFSynchronization
import Foundation
import NIOHTTP1
import Synchronization
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the transport hands it over.
func wireResponse(_ url: URL, status: Int, headers: [(String, String)] = []) -> ReceivedResponse {
    ReceivedResponse(head: HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: HTTPHeaders(headers)), url: url)
}

/// A wire head read directly, and made into Foundation's type once, on first read.
@Suite struct ReceivedResponseTests {
    let url = URL(string: "http://127.0.0.1:1/r")!

    @Test func theHeadAnswersWithoutMakingTheResponse() {
        let response = wireResponse(
            url, status: 307, headers: [("location", "/b"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("X-Trace", "t")])
        #expect(!response.hasMadeURLResponse)
        #expect(response.isHTTP)
        #expect(response.statusCode == 307)
        #expect(response.url == url)
        #expect(response.value(forHTTPHeaderField: "LOCATION") == "/b")
        #expect(response.value(forHTTPHeaderField: "Set-Cookie") == "a=1, b=2")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(!response.hasMadeURLResponse)
    }

    @Test func theResponseIsMadeOnceWithURLSessionsFields() throws {
        let response = wireResponse(
            url, status: 200,
            headers: [("content-type", "text/plain; charset=UTF-8"), ("Content-Length", "5"), ("x-a", "1"), ("X-A", "2"), ("x-a", "3")])
        let made = try #require(response.httpURLResponse)
        #expect(response.hasMadeURLResponse)
        #expect(response.httpURLResponse === made)
        #expect(response.urlResponse === made)
        #expect(made.statusCode == 200)
        #expect(made.url == url)
        #expect(made.mimeType == "text/plain")
        #expect(made.textEncodingName == "utf-8")
        #expect(made.expectedContentLength == 5)
        #expect(made.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=UTF-8")
        #expect(made.allHeaderFields["Content-Type"] as? String == "text/plain; charset=UTF-8")
        // Repeated fields are joined under the first spelling, whatever the case of the others.
        #expect(made.allHeaderFields["x-a"] as? String == "1, 2, 3")
        #expect(made.allHeaderFields["X-A"] == nil)
        #expect(made.value(forHTTPHeaderField: "X-A") == response.value(forHTTPHeaderField: "x-a"))
    }

    @Test func concurrentFirstReadsGetOneResponse() {
        let response = wireResponse(url, status: 200, headers: [("A", "1")])
        let made = Mutex<[ObjectIdentifier]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let read = response.urlResponse
            made.withLock { $0.append(ObjectIdentifier(read)) }
        }
        #expect(made.withLock { Set($0).count } == 1)
    }

    @Test func anExistingResponseIsPassedThrough() throws {
        let file = URLResponse(url: URL(fileURLWithPath: "/tmp/f"), mimeType: "text/plain", expectedContentLength: 3, textEncodingName: nil)
        let local = ReceivedResponse(file)
        #expect(!local.isHTTP)
        #expect(local.statusCode == 0)
        #expect(local.urlResponse === file)
        #expect(local.httpURLResponse == nil)
        #expect(local.value(forHTTPHeaderField: "Content-Type") == nil)
        let http = try #require(HTTPURLResponse(url: url, statusCode: 404, httpVersion: nil, headerFields: ["ETag": "\"e\""]))
        let stored = ReceivedResponse(http)
        #expect(stored.isHTTP)
        #expect(stored.statusCode == 404)
        #expect(stored.value(forHTTPHeaderField: "etag") == "\"e\"")
        #expect(stored.httpURLResponse === http)
    }

    @Test func equalityAndHashingFollowTheResponse() {
        let first = wireResponse(url, status: 200, headers: [("A", "1")])
        let same = wireResponse(url, status: 200, headers: [("A", "1")])
        let other = wireResponse(URL(string: "http://127.0.0.1:1/other")!, status: 200, headers: [("A", "1")])
        // As FoundationNetworking's URLResponse compares (its URL and content fields, not the status).
        #expect(first == same)
        #expect(Set([first, same]).count == 1)
        #expect(first != other)
    }
}
