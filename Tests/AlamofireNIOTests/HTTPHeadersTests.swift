import AlamofireNIO
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPHeadersTests {
    @Test func namesCompareCaseInsensitivelyAndUpdatesKeepTheirPlace() {
        var headers: HTTPHeaders = ["Accept": "a/b", "X-One": "1"]
        headers.add(name: "accept", value: "c/d")
        #expect(headers.map(\.description) == ["accept: c/d", "X-One: 1"])
        #expect(headers["ACCEPT"] == "c/d")
        #expect(headers.value(for: "x-one") == "1")
        headers["X-One"] = nil
        #expect(headers.count == 1)
        headers.remove(name: "missing")
        #expect(headers.count == 1)
    }

    @Test func arrayLiteralKeepsTheLastOfDuplicates() {
        let headers: HTTPHeaders = [.accept("a"), .contentType("text/plain"), .accept("b")]
        #expect(headers.description == "Accept: b\nContent-Type: text/plain")
        #expect(headers.dictionary == ["Accept": "b", "Content-Type": "text/plain"])
    }

    @Test func sortingIsCaseInsensitive() {
        let headers: HTTPHeaders = [
            HTTPHeader(name: "b", value: "2"), HTTPHeader(name: "A", value: "1"), HTTPHeader(name: "c", value: "3"),
        ]
        #expect(headers.sorted().map(\.name) == ["A", "b", "c"])
    }

    @Test func helpersBuildTheirFields() {
        #expect(
            HTTPHeader.authorization(username: "user", password: "pass") == HTTPHeader(name: "Authorization", value: "Basic dXNlcjpwYXNz"))
        #expect(HTTPHeader.authorization(bearerToken: "tok") == HTTPHeader(name: "Authorization", value: "Bearer tok"))
        #expect(HTTPHeader.accept("x").name == "Accept")
        #expect(HTTPHeader.acceptCharset("utf-8").name == "Accept-Charset")
        #expect(HTTPHeader.acceptLanguage("en").name == "Accept-Language")
        #expect(HTTPHeader.acceptEncoding("gzip").name == "Accept-Encoding")
        #expect(HTTPHeader.contentDisposition("inline").name == "Content-Disposition")
        #expect(HTTPHeader.contentEncoding("gzip").name == "Content-Encoding")
        #expect(HTTPHeader.contentType("a/b").name == "Content-Type")
        #expect(HTTPHeader.userAgent("x").name == "User-Agent")
        #expect(HTTPHeader.cacheControl("no-cache").name == "Cache-Control")
    }

    @Test func defaultHeadersDescribeTheClient() throws {
        #expect(HTTPHeader.defaultAcceptEncoding.value == expectedDefaultAcceptEncoding)
        let languages = HTTPHeader.defaultAcceptLanguage.value.components(separatedBy: ", ")
        #expect((1...6).contains(languages.count))
        #expect(languages.first?.hasSuffix(";q=1.0") == true)
        let agent = HTTPHeader.defaultUserAgent.value
        #expect(agent.hasSuffix(" AlamofireNIO/\(AFInfo.version)"))
        #expect(agent.contains("; build:"))
        #if os(Linux)
        #expect(agent.contains("; Linux "))
        #endif
        #expect(HTTPHeaders.default.map(\.name) == ["Accept-Encoding", "Accept-Language", "User-Agent"])
    }

    @Test func requestAndResponseExposeTheirHeaders() throws {
        var request = try URLRequest(url: "https://example.com/a", method: .post, headers: [.accept("x/y")])
        #expect(request.httpMethod == "POST")
        #expect(request.method == .post)
        let get = try URLRequest(url: "https://example.com/a", method: .get)
        #expect(get.httpMethod == "GET" && get.method == .get)
        #expect(try URLRequest(url: "https://example.com/a", method: HTTPMethod(rawValue: "get")).httpMethod == "GET")
        #expect(try URLRequest(url: "https://example.com/a", method: .delete).httpMethod == "DELETE")
        #expect(request.headers["accept"] == "x/y")
        request.headers.add(.contentType("a/b"))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "a/b")
        let response = try #require(
            HTTPURLResponse(url: URL(string: "https://example.com")!, statusCode: 200, httpVersion: nil, headerFields: ["X-A": "1"]))
        #expect(response.headers["x-a"] == "1")
    }
}

@Suite struct URLConvertibleTests {
    @Test func stringsURLsAndComponentsConvert() throws {
        #expect(try "https://httpbin.org/get".asURL().absoluteString == "https://httpbin.org/get")
        #expect(try URL(string: "https://a.b/c")!.asURL().path == "/c")
        var components = URLComponents()
        components.scheme = "https"
        components.host = "itunes.apple.com"
        components.path = "/search"
        components.queryItems = [URLQueryItem(name: "term", value: "pink floyd")]
        #expect(try components.asURL().absoluteString == "https://itunes.apple.com/search?term=pink%20floyd")
    }

    @Test func invalidStringIsInvalidURL() {
        #expect {
            try "http://[::1".asURL()
        } throws: { error in
            guard case .invalidURL(let url) = error as? AFError else { return false }
            return (url as? String) == "http://[::1" && (error as? AFError)?.isInvalidURLError == true
        }
    }

    @Test func getWithBodyIsRefused() throws {
        var request = try URLRequest(url: "https://example.com", method: .get)
        try request.validate()
        request.httpBody = Data("x".utf8)
        #expect {
            try request.validate()
        } throws: { error in
            guard case .urlRequestValidationFailed(.bodyDataInGETRequest(let data)) = error as? AFError else { return false }
            return data == Data("x".utf8)
        }
    }

    @Test func customMethodsExtendHTTPMethod() {
        #expect(HTTPMethod(rawValue: "PURGE").rawValue == "PURGE")
        #expect(HTTPMethod.get.rawValue == "GET")
        #expect(HTTPMethod.query.rawValue == "QUERY")
    }
}
