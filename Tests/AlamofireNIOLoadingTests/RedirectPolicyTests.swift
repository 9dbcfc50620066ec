import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's redirect rules, as plain values.
@Suite struct RedirectPolicyTests {
    let policy = RedirectPolicy()

    @Test func authorizationStaysOnItsOrigin() throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/a")!)
        request.httpMethod = "POST"
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.httpBody = Data("x".utf8)
        let sameOrigin = wireResponse(request.url!, status: 307, headers: [("Location", "/b")])
        let kept = try #require(policy.nextRequest(after: request, response: sameOrigin))
        #expect(kept.url?.absoluteString == "http://127.0.0.1:1/b")
        #expect(kept.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(kept.httpBody == Data("x".utf8))
        let otherOrigin = wireResponse(request.url!, status: 302, headers: [("location", "http://localhost:2/c")])
        let moved = try #require(policy.nextRequest(after: request, response: otherOrigin))
        #expect(moved.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(moved.httpMethod == "GET" && moved.httpBody == nil)
        let notARedirect = wireResponse(request.url!, status: 304, headers: [("Location", "/b")])
        #expect(policy.nextRequest(after: request, response: notARedirect) == nil)
    }

    @Test func everyOriginBoundFieldStaysBehindWhenTheSchemeHostOrPortChanges() throws {
        var request = URLRequest(url: URL(string: "http://example.com/a")!)
        for name in RedirectPolicy.originBoundFields { request.setValue("secret", forHTTPHeaderField: name) }
        request.setValue("kept", forHTTPHeaderField: "X-Other")
        for (location, crosses) in [
            ("http://example.com:80/b", false), ("/b", false), ("http://EXAMPLE.com/b", false), ("https://example.com/b", true),
            ("http://example.com:8080/b", true), ("http://other.example.com/b", true),
        ] {
            let response = wireResponse(request.url!, status: 302, headers: [("Location", location)])
            let next = try #require(policy.nextRequest(after: request, response: response))
            for name in RedirectPolicy.originBoundFields {
                #expect(next.value(forHTTPHeaderField: name) == (crosses ? nil : "secret"), "\(location): \(name)")
            }
            #expect(next.value(forHTTPHeaderField: "X-Other") == "kept")
        }
        #expect(RedirectPolicy.isSameOrigin(URL(string: "wss://h/")!, URL(string: "https://h:443/x")!))
        #expect(!RedirectPolicy.isSameOrigin(URL(string: "http://h/")!, URL(string: "https://h/")!))
    }

    @Test func seeOtherKeepsHeadAndOtherCodesKeepTheirMethod() throws {
        var head = URLRequest(url: URL(string: "http://127.0.0.1:1/a")!)
        head.httpMethod = "HEAD"
        let seeOther = wireResponse(head.url!, status: 303, headers: [("Location", "/b")])
        #expect(try #require(policy.nextRequest(after: head, response: seeOther)).httpMethod == "HEAD")
        var put = URLRequest(url: URL(string: "http://127.0.0.1:1/a")!)
        put.httpMethod = "PUT"
        let permanent = wireResponse(put.url!, status: 308, headers: [("Location", "/b")])
        #expect(try #require(policy.nextRequest(after: put, response: permanent)).httpMethod == "PUT")
        let toFTP = ReceivedResponse(
            HTTPURLResponse(url: put.url!, statusCode: 302, httpVersion: nil, headerFields: ["Location": "ftp://host/x"])!)
        #expect(policy.nextRequest(after: put, response: toFTP) == nil)
    }
}
