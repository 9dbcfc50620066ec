import Foundation
import TestWaits
import Testing

@testable import AlamofireNIO
@testable import HTTPBinServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// DeflateRequestCompressor: Alamofire 5.12's request body compression, as a value and against the
/// server's echo, which inflates `Content-Encoding: deflate` bodies.
@Suite struct RequestCompressionTests {
    static let text = Data(String(repeating: "Alamofire compresses this body with deflate. ", count: 200).utf8)

    static func postRequest(body: Data = RequestCompressionTests.text, contentEncoding: String? = nil) -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/post")!)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        if let contentEncoding { request.setValue(contentEncoding, forHTTPHeaderField: "content-encoding") }
        return request
    }

    static func adapt(_ request: URLRequest, with compressor: DeflateRequestCompressor) async throws -> Result<URLRequest, any Error> {
        try await completion { done in compressor.adapt(request, for: AF, completion: done) }
    }

    /// zlib's inflate, through the test server's helper.
    static func inflated(_ data: Data) throws -> Data {
        Data(try Zlib.decompress(Array(data), format: .zlib, limit: .max))
    }

    /// Adler-32 (RFC 1950), computed here rather than by zlib so the trailer is checked independently.
    static func adler32(_ data: Data) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    // MARK: - The adapter as a value

    @Test func defaultsAreAlamofires() {
        let compressor = DeflateRequestCompressor()
        #expect(compressor.duplicateHeaderBehavior == .error)
        #expect(compressor.shouldCompressBodyData(Data()))
        #expect(compressor.shouldCompressBodyData(Self.text))
        let factory: DeflateRequestCompressor = .deflateCompressor
        #expect(factory.duplicateHeaderBehavior == .error)
        #expect(factory.shouldCompressBodyData(Self.text))
        let configured: DeflateRequestCompressor = .deflateCompressor(duplicateHeaderBehavior: .skip) { $0.count > 10 }
        #expect(configured.duplicateHeaderBehavior == .skip)
        #expect(!configured.shouldCompressBodyData(Data("short".utf8)))
        #expect(configured.shouldCompressBodyData(Self.text))
    }

    @Test func bodyBecomesAZlibStreamThatInflatesBackToTheInput() async throws {
        let original = Self.postRequest()
        let adapted = try await Self.adapt(original, with: DeflateRequestCompressor()).get()
        let body = try #require(adapted.httpBody)
        // Header 78 5E, as Alamofire writes it; the Adler-32 of the input, big-endian, last.
        #expect(Array(body.prefix(2)) == [0x78, 0x5E])
        let checksum = Self.adler32(Self.text)
        #expect(
            Array(body.suffix(4)) == [
                UInt8(checksum >> 24), UInt8(checksum >> 16 & 0xFF), UInt8(checksum >> 8 & 0xFF), UInt8(checksum & 0xFF),
            ])
        #expect(try Self.inflated(body) == Self.text)
        #expect(body.count < Self.text.count / 10)
        #expect(adapted.value(forHTTPHeaderField: "Content-Encoding") == "deflate")
        // Everything else is left as it was.
        #expect(adapted.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(adapted.httpMethod == "POST")
        #expect(adapted.url == original.url)
    }

    @Test func binaryBodyRoundTrips() async throws {
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
        let adapted = try await Self.adapt(Self.postRequest(body: bytes), with: DeflateRequestCompressor()).get()
        #expect(try Self.inflated(try #require(adapted.httpBody)) == bytes)
    }

    @Test func anExistingContentEncodingFailsByDefault() async throws {
        let result = try await Self.adapt(Self.postRequest(contentEncoding: "gzip"), with: DeflateRequestCompressor())
        #expect(throws: DeflateRequestCompressor.DuplicateHeaderError.self) { try result.get() }
    }

    @Test func replaceCompressesAndReplacesTheExistingContentEncoding() async throws {
        let compressor = DeflateRequestCompressor(duplicateHeaderBehavior: .replace)
        let adapted = try await Self.adapt(Self.postRequest(contentEncoding: "gzip"), with: compressor).get()
        #expect(adapted.value(forHTTPHeaderField: "Content-Encoding") == "deflate")
        #expect(adapted.allHTTPHeaderFields?.keys.filter { $0.lowercased() == "content-encoding" }.count == 1)
        #expect(try Self.inflated(try #require(adapted.httpBody)) == Self.text)
    }

    @Test func skipLeavesTheRequestAsItWas() async throws {
        let original = Self.postRequest(contentEncoding: "gzip")
        let adapted = try await Self.adapt(original, with: DeflateRequestCompressor(duplicateHeaderBehavior: .skip)).get()
        #expect(adapted == original)
        #expect(adapted.httpBody == Self.text)
        #expect(adapted.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }

    @Test func shouldCompressBodyDataSeesTheBodyAndCanDecline() async throws {
        let seen = Collected<Data>()
        let compressor = DeflateRequestCompressor { body in
            seen.append(body)
            return false
        }
        let original = Self.postRequest()
        let adapted = try await Self.adapt(original, with: compressor).get()
        #expect(adapted == original)
        #expect(adapted.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(seen.values == [Self.text])
    }

    /// Declining wins over the duplicate header check, which Alamofire makes only for bodies it compresses.
    @Test func aDeclinedBodyIsNotCheckedForContentEncoding() async throws {
        let original = Self.postRequest(contentEncoding: "gzip")
        let adapted = try await Self.adapt(original, with: DeflateRequestCompressor { _ in false }).get()
        #expect(adapted == original)
    }

    @Test func aRequestWithoutBodyDataPassesThroughUnasked() async throws {
        let asked = Collected<Data>()
        let compressor = DeflateRequestCompressor { body in
            asked.append(body)
            return true
        }
        // No body at all, even with a Content-Encoding that would otherwise fail.
        var get = URLRequest(url: URL(string: "http://127.0.0.1:1/get")!)
        get.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        #expect(try await Self.adapt(get, with: compressor).get() == get)
        // A body stream is not compressed.
        var streamed = URLRequest(url: URL(string: "http://127.0.0.1:1/post")!)
        streamed.httpMethod = "POST"
        streamed.httpBodyStream = InputStream(data: Self.text)
        let adapted = try await Self.adapt(streamed, with: compressor).get()
        #expect(adapted.httpBody == nil)
        #expect(adapted.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(asked.values.isEmpty)
    }

    // MARK: - End to end

    @Test func jsonBodyArrivesCompressedAndInflatesOnTheServer() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session()).request(
                server.url("/post"), method: .post, parameters: ["key": "value"], encoder: JSONParameterEncoder.default,
                interceptor: .deflateCompressor)
            let response = try await withTimeout { await request.serializingDecodable(HTTPBinResponse.self).response }
            let echoed = try response.result.get()
            #expect(echoed.json == ["key": "value"])
            #expect(echoed.data == #"{"key":"value"}"#)
            #expect(echoed.headers["Content-Encoding"] == "deflate")
            #expect(echoed.headers["Content-Type"] == "application/json")
            // What went over the wire is the compressed body.
            let compressed = try DeflateRequestCompressor().deflate(Data(#"{"key":"value"}"#.utf8))
            #expect(echoed.headers["Content-Length"] == "\(compressed.count)")
            #expect(request.request?.httpBody == compressed)
        }
    }

    @Test func formBodyArrivesCompressedAndInflatesOnTheServer() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(interceptor: .deflateCompressor)
            let request = session.request(server.url("/anything"), method: .put, parameters: ["foo": "bar", "baz": "qux"])
            let echoed = try await withTimeout { await request.serializingDecodable(HTTPBinResponse.self).response }.result.get()
            #expect(echoed.form == ["foo": "bar", "baz": "qux"])
            #expect(echoed.headers["Content-Encoding"] == "deflate")
        }
    }

    @Test func aGetIsSentUncompressed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session()).request(server.url("/get"), interceptor: .deflateCompressor)
            let echoed = try await withTimeout { await request.serializingDecodable(HTTPBinResponse.self).response }.result.get()
            #expect(echoed.headers["Content-Encoding"] == nil)
        }
    }

    @Test func aDuplicateHeaderFailsTheRequestAsAnAdaptationError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session()).request(
                server.url("/post"), method: .post, parameters: ["key": "value"], encoder: JSONParameterEncoder.default,
                headers: ["Content-Encoding": "br"], interceptor: .deflateCompressor)
            let response = try await withTimeout { await request.serializingData().response }
            let error = try #require(response.error)
            #expect(error.isRequestAdaptationError)
            #expect(error.underlyingError is DeflateRequestCompressor.DuplicateHeaderError)
            #expect(response.response == nil)
        }
    }

    /// The server's side of the check: a body that is not one whole zlib stream answers 400.
    @Test(arguments: ["garbage", "truncated", "trailing bytes"])
    func aBodyThatDoesNotInflateAnswers400(kind: String) async throws {
        let compressed = try DeflateRequestCompressor().deflate(Self.text)
        let body: Data =
            switch kind {
            case "garbage": Data("not a zlib stream".utf8)
            case "truncated": compressed.dropLast(3)
            default: compressed + Data([0x00])
            }
        try await HTTPBinServer.withServer { server async throws in
            var urlRequest = URLRequest(url: server.url("/post"))
            urlRequest.httpMethod = "POST"
            urlRequest.httpBody = body
            urlRequest.setValue("deflate", forHTTPHeaderField: "Content-Encoding")
            let request = urlRequest
            let response = try await withTimeout { await keepAlive(Session()).request(request).serializingData().response }
            #expect(response.response?.statusCode == 400)
        }
    }
}
