import AlamofireNIO
import Foundation
import HTTPBinServer
import TestWaits
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request examples of Alamofire's usage guide (seed 000), with httpbin.org replaced by the
/// bundled server, asserting what each one sends and gets back.
@Suite struct SeedExamplesTests {
    let arrays: [String: [String]] = ["foo": ["bar"], "baz": ["a", "b"], "qux": ["x", "y", "z"]]

    @Test func httpMethodsReachTheirEndpoints() async throws {
        try await HTTPBinServer.withServer { server async throws in
            for method in [HTTPMethod.get, .post, .put, .delete] {
                let response = await AF.request(server.url("/\(method.rawValue.lowercased())"), method: method).serializingData().response
                #expect(response.response?.statusCode == 200)
                #expect(response.request?.httpMethod == method.rawValue)
            }
        }
    }

    /// The guide's `HTTPMethod(rawValue: "CUSTOM")`, with a name the test server's HTTP parser knows
    /// (llhttp has a fixed table of methods and leaves unknown ones unanswered).
    @Test func customHTTPMethodIsSentAsIs() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let value = try await AF.request(server.url("/anything"), method: HTTPMethod(rawValue: "PURGE")).serializingData().value
            #expect((try JSONSerialization.jsonObject(with: value) as? [String: Any])?["method"] as? String == "PURGE")
        }
    }

    @Test func requestModifierSetsTheTimeout() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/get")) { urlRequest in urlRequest.timeoutInterval = 5 }.serializingData().response
            #expect(response.request?.timeoutInterval == 5)
        }
    }

    @Test func jsonParameterEncodersWriteTheDocumentedBodies() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let sorted = await AF.request(server.url("/post"), method: .post, parameters: arrays, encoder: JSONParameterEncoder.sortedKeys)
                .serializingData().response
            #expect(sorted.request?.httpBody == Data(#"{"baz":["a","b"],"foo":["bar"],"qux":["x","y","z"]}"#.utf8))
            #expect(sorted.request?.headers["Content-Type"] == "application/json")
            let echoed = try JSONSerialization.jsonObject(with: try #require(sorted.data)) as? [String: Any]
            #expect(echoed?["json"] as? NSDictionary == arrays as NSDictionary)
        }
    }

    @Test func manualEncodingOutsideAlamofire() throws {
        let url = URL(string: "https://httpbin.org/get")!
        let urlRequest = URLRequest(url: url)
        let encoded = try URLEncodedFormParameterEncoder.default.encode(["foo": "bar"], into: urlRequest)
        #expect(encoded.url?.absoluteString == "https://httpbin.org/get?foo=bar")
    }

    @Test func headersReachTheServerBothWays() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let literal: HTTPHeaders = ["Authorization": "Basic VXNlcm5hbWU6UGFzc3dvcmQ=", "Accept": "application/json"]
            let typed: HTTPHeaders = [.authorization(username: "Username", password: "Password"), .accept("application/json")]
            for headers in [literal, typed] {
                let echoed = try await AF.request(server.url("/headers"), headers: headers).serializingDecodable(EchoedHeaders.self).value
                #expect(echoed.headers["Authorization"] == "Basic VXNlcm5hbWU6UGFzc3dvcmQ=")
                #expect(echoed.headers["Accept"] == "application/json")
            }
        }
    }

    @Test func sessionHeadersComeFromTheConfiguration() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.af.default
            configuration.headers.add(.userAgent("StoreSearch/1.0"))
            let session = Session(configuration: configuration)
            let echoed = try await session.request(server.url("/headers"), headers: ["X-Trace": "1"]).serializingDecodable(
                EchoedHeaders.self
            ).value
            #expect(echoed.headers["User-Agent"] == "StoreSearch/1.0")
            #expect(echoed.headers["X-Trace"] == "1")
            #expect(echoed.headers["Accept-Encoding"] == expectedDefaultAcceptEncoding)
        }
    }

    @Test func manualValidationExampleSucceeds() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let outcome = try await completion { (done: @escaping @Sendable (String) -> Void) in
                AF.request(server.url("/get"))
                    .validate(statusCode: 200..<300)
                    .validate(contentType: ["application/json"])
                    .responseData(queue: testQueue) { response in
                        switch response.result {
                        case .success: done("Validation Successful")
                        case .failure(let error): done("\(error)")
                        }
                    }
            }
            #expect(outcome == "Validation Successful")
        }
    }

    @Test func responseHandlersSeeTheSameExchange() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let (data, string, decodable) = try await completion {
                (done: @escaping @Sendable ((Data?, String?, [String: String]?)) -> Void) in
                let collected = Collected()
                AF.request(server.url("/get?a=1"))
                    .response(queue: testQueue) { collected.data = $0.data }
                    .responseString(queue: testQueue) { collected.string = $0.value }
                    .responseDecodable(of: HTTPBinResponse.self, queue: testQueue) { response in
                        done((collected.data, collected.string, response.value?.args))
                    }
            }
            #expect(data.map { String(decoding: $0, as: UTF8.self) } == string)
            #expect(decodable == ["a": "1"])
        }
    }

    struct EchoedHeaders: Decodable, Sendable {
        let headers: [String: String]
    }

    /// Values handed from one handler to the next; the handlers run one after another on `testQueue`.
    final class Collected: @unchecked Sendable {
        var data: Data?
        var string: String?
    }
}
