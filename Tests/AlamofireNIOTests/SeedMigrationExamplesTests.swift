import AlamofireNIO
import Foundation
import HTTPBinServer
import TestWaits
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Alamofire 4.0 examples of the migration guide (seed 004) that still apply in Alamofire 5,
/// written with 5's names (`AF`, `fileURL` for 4's temporary/destination URLs, `.success(())`),
/// against the bundled server.
@Suite struct SeedMigrationExamplesTests {
    let utility = DispatchQueue.global(qos: .utility)

    @Test func simpleDataRequestDefaultsToGet() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await completion { done in
                AF.request(server.url("/get")).response(queue: testQueue, completionHandler: done)
            }
            #expect(response.request?.httpMethod == "GET")
            #expect(response.response?.statusCode == 200)
            #expect(response.error == nil)
            #expect(response.debugDescription.hasPrefix("[Request]: GET \(server.url("/get"))"))
        }
    }

    /// 4.0's complex request sends JSON on a GET; Alamofire 5 refuses a body on GET before sending.
    @Test func complexDataRequestWithProgressValidationAndJSON() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let parameters: Parameters = ["foo": "bar"]
            let progress = OrderRecorder()
            let refused = await AF.request(server.url("/get"), method: .get, parameters: parameters, encoding: JSONEncoding.default)
                .serializingData().response
            guard case .urlRequestValidationFailed(.bodyDataInGETRequest(let body))? = refused.error else {
                Issue.record("expected bodyDataInGETRequest, got \(String(describing: refused.error))")
                return
            }
            #expect(body == Data(#"{"foo":"bar"}"#.utf8))

            let response = try await completion { done in
                AF.request(server.url("/anything"), method: .post, parameters: parameters, encoding: JSONEncoding.default)
                    .downloadProgress(queue: utility) { progress.append("\($0.fractionCompleted)") }
                    .validate { _, _, data in data == nil ? .failure(AFError.responseValidationFailed(reason: .dataFileNil)) : .success(())
                    }
                    .responseJSON(queue: testQueue) { done(UncheckedSendableBox($0)) }
            }
            let json = try #require(response.value.value as? [String: Any])
            #expect(json["data"] as? String == #"{"foo":"bar"}"#)
            #expect(json["method"] as? String == "POST")
            await withCheckedContinuation { continuation in utility.async(flags: .barrier) { continuation.resume() } }
            #expect(progress.values.last == "1.0")
        }
    }

    @Test func simpleDownloadReportsItsFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                // As `suggestedDownloadDestination`, in a directory of the test's own.
                let suggested = DownloadRequest.suggestedDownloadDestination(for: .documentDirectory)
                let destination: DownloadRequest.Destination = { temporaryURL, response in
                    (directory.appendingPathComponent(suggested(temporaryURL, response).destinationURL.lastPathComponent), [])
                }
                let response = try await completion { done in
                    AF.download(server.url("/image/png"), to: destination).response(queue: testQueue, completionHandler: done)
                }
                #expect(response.request?.url == server.url("/image/png"))
                #expect(response.response?.statusCode == 200)
                #expect(response.fileURL == directory.appendingPathComponent("png"))
                #expect(response.error == nil)
                let bytes = try Data(contentsOf: try #require(response.fileURL))
                #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            }
        }
    }

    @Test func downloadOfAURLRequestValidatesAndReadsTheData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let urlRequest = URLRequest(url: server.url("/bytes/64?seed=9"))
                let destination: DownloadRequest.Destination = { _, _ in (directory.appendingPathComponent("bytes"), []) }
                let response = await AF.download(urlRequest, to: destination).validate().serializingData().response
                #expect(response.value == seededBytes(64, seed: 9))
                #expect(response.fileURL == directory.appendingPathComponent("bytes"))
            }
        }
    }

    @Test func complexDownloadWithOptionsProgressAndFileValidation() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let fileURL = directory.appendingPathComponent("a/b/get.json")
                let destination: DownloadRequest.Destination = { _, _ in (fileURL, [.createIntermediateDirectories, .removePreviousFile]) }
                let parameters: Parameters = ["foo": "bar"]
                let validated = OrderRecorder()
                let response = try await completion { done in
                    AF.download(server.url("/get"), method: .get, parameters: parameters, encoding: URLEncoding.default, to: destination)
                        .downloadProgress(queue: utility) { _ in }
                        .validate { _, _, fileURL in
                            guard let fileURL, let data = try? Data(contentsOf: fileURL) else {
                                return .failure(AFError.explicitlyCancelled)
                            }
                            validated.append("\(data.count > 0)")
                            return .success(())
                        }
                        .responseJSON(queue: testQueue) { done(UncheckedSendableBox($0)) }
                }
                #expect(validated.values == ["true"])
                #expect(response.value.fileURL == fileURL)
                #expect((response.value.value as? [String: Any])?["args"] as? [String: String] == ["foo": "bar"])
            }
        }
    }

    @Test func uploadsOfDataAndFiles() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let data = Data("data".utf8)
                let posted = await AF.upload(data, to: server.url("/post")).serializingDecodable(HTTPBinResponse.self).response
                #expect(posted.request?.httpMethod == "POST")
                #expect(posted.value?.data == "data")

                let fileURL = directory.appendingPathComponent("body.txt")
                try Data("file body".utf8).write(to: fileURL)
                let urlRequest = try URLRequest(url: server.url("/post"), method: .post)
                let withRequest = try await AF.upload(fileURL, with: urlRequest).validate().serializingDecodable(HTTPBinResponse.self).value
                #expect(withRequest.data == "file body")

                let uploadProgress = OrderRecorder()
                let put = try await completion { done in
                    AF.upload(fileURL, to: server.url("/put"), method: .put)
                        .uploadProgress(queue: utility) { uploadProgress.append("\($0.completedUnitCount)") }
                        .downloadProgress { _ in }
                        .validate { _, _, _ in .success(()) }
                        .responseJSON(queue: testQueue) { done(UncheckedSendableBox($0)) }
                }
                #expect((put.value.value as? [String: Any])?["data"] as? String == "file body")
                await withCheckedContinuation { continuation in utility.async(flags: .barrier) { continuation.resume() } }
                #expect(uploadProgress.values.last == "9")
            }
        }
    }

    /// 4.0 made an invalid URL an error instead of a crash.
    @Test func invalidURLsAreErrorsAndRequestsExposeTheirURL() async throws {
        let response = await AF.request("http://exa mple.com/a b").serializingData().response
        guard case .invalidURL(let url)? = response.error else {
            Issue.record("expected invalidURL, got \(String(describing: response.error))")
            return
        }
        #expect(url as? String == "http://exa mple.com/a b")
        #expect(response.error?.localizedDescription.contains("URL is not valid") == true)
        let urlRequest = URLRequest(url: URL(string: "https://httpbin.org/get")!)
        #expect(urlRequest.url?.absoluteString == "https://httpbin.org/get")
    }

    /// The guide's `AccessTokenAdapter`, in Alamofire 5's `adapt(_:for:completion:)` form.
    @Test func accessTokenAdapterAddsTheHeaderForItsHost() async throws {
        struct AccessTokenAdapter: RequestAdapter {
            let accessToken: String
            let prefix: String
            func adapt(
                _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
            ) {
                var urlRequest = urlRequest
                if urlRequest.url?.absoluteString.hasPrefix(prefix) == true {
                    urlRequest.setValue("Bearer " + accessToken, forHTTPHeaderField: "Authorization")
                }
                completion(.success(urlRequest))
            }
        }
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(
                interceptor: Interceptor(adapters: [AccessTokenAdapter(accessToken: "1234", prefix: server.url("/").absoluteString)]))
            let echoed = try await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).value
            #expect(echoed.headers["Authorization"] == "Bearer 1234")
            let elsewhere = await session.request("http://127.0.0.1:1/get").serializingData().response
            #expect(elsewhere.request?.headers["Authorization"] == nil)
        }
    }

    /// The guide's `OAuth2Handler` retrier: retry a 401 after a delay, once.
    @Test func retrierRetriesUnauthorizedResponses() async throws {
        struct OAuth2Handler: RequestRetrier {
            func retry(
                _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
            ) {
                if request.response?.statusCode == 401, request.retryCount == 0 {
                    completion(.retryWithDelay(0.05))
                } else {
                    completion(.doNotRetry)
                }
            }
        }
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(interceptor: Interceptor(retriers: [OAuth2Handler()]))
            let request = session.request(server.url("/status/401")).validate()
            let response = await request.serializingData().response
            #expect(request.retryCount == 1)
            #expect(response.error?.responseCode == 401)
            #expect(request.allMetrics.count == 2)
        }
    }

    @Test func metricsComeWithEveryResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/get")).serializingData().response
            let metrics = try #require(response.metrics)
            #expect(metrics.transactionMetrics.count == 1)
            #expect((metrics.transactionMetrics.first?.response as? HTTPURLResponse)?.statusCode == 200)
            #expect(metrics.redirectCount == 0)
        }
    }

    /// The guide's switch over `AFError`, fed by real failures.
    @Test func afErrorCasesDescribeWhatWentWrong() async throws {
        try await HTTPBinServer.withServer { server async throws in
            func describe(_ error: AFError?) -> String {
                switch error {
                case .invalidURL?: "invalid URL"
                case .parameterEncodingFailed?: "parameter encoding"
                case .responseValidationFailed(let reason)?:
                    switch reason {
                    case .dataFileNil, .dataFileReadFailed: "file"
                    case .missingContentType: "missing content type"
                    case .unacceptableContentType(_, let type): "content type \(type)"
                    case .unacceptableStatusCode(let code): "status \(code)"
                    case .customValidationFailed: "custom"
                    }
                case .responseSerializationFailed?: "serialization"
                case .sessionTaskFailed(let error as URLError)?: "URLError \(error.code.rawValue)"
                case nil: "none"
                default: "other"
                }
            }
            #expect(describe(await AF.request("http://exa mple.com/").serializingData().response.error) == "invalid URL")
            #expect(describe(await AF.request(server.url("/status/503")).validate().serializingData().response.error) == "status 503")
            #expect(
                describe(await AF.request(server.url("/html")).validate(contentType: ["application/json"]).serializingData().response.error)
                    == "content type text/html")
            #expect(
                describe(await AF.request(server.url("/html")).serializingDecodable(HTTPBinResponse.self).response.error) == "serialization"
            )
            #expect(
                describe(await AF.request("http://127.0.0.1:1/").serializingData().response.error)
                    == "URLError \(URLError.Code.cannotConnectToHost.rawValue)")
            let bad = await AF.request(server.url("/post"), method: .post, parameters: ["x": Double.nan], encoding: JSONEncoding.default)
                .serializingData().response
            #expect(describe(bad.error) == "parameter encoding")
        }
    }

    @Test func parameterEncodingsPutParametersWhereTheySay() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let parameters: Parameters = ["foo": "bar"]
            let url = server.url("/anything")
            func echo(_ method: HTTPMethod, _ encoding: any ParameterEncoding) async throws -> [String: Any] {
                let data = try await AF.request(url, method: method, parameters: parameters, encoding: encoding).serializingData().value
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            }
            #expect(try await echo(.get, URLEncoding.default)["args"] as? [String: String] == ["foo": "bar"])
            #expect(try await echo(.post, URLEncoding(destination: .queryString))["args"] as? [String: String] == ["foo": "bar"])
            #expect(try await echo(.post, URLEncoding.queryString)["data"] as? String == "")
            #expect(try await echo(.post, URLEncoding.httpBody)["form"] as? [String: String] == ["foo": "bar"])
            #expect(try await echo(.post, JSONEncoding(options: []))["data"] as? String == #"{"foo":"bar"}"#)
            #expect(try await echo(.post, JSONEncoding.prettyPrinted)["data"] as? String == "{\n  \"foo\" : \"bar\"\n}")
            let xml = try await echo(.post, PropertyListEncoding(format: .xml, options: 0))
            #expect((xml["data"] as? String)?.contains("<key>foo</key>") == true)
            let binary = try await echo(.post, PropertyListEncoding.binary)
            #expect((binary["headers"] as? [String: String])?["Content-Type"] == "application/x-plist")
        }
    }

    /// The README's custom encoding: a JSON array of strings as the body.
    @Test func customParameterEncoding() async throws {
        struct JSONStringArrayEncoding: ParameterEncoding {
            let array: [String]
            func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
                var urlRequest = try urlRequest.asURLRequest()
                let data = try JSONSerialization.data(withJSONObject: array, options: [])
                if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                    urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
                }
                urlRequest.httpBody = data
                return urlRequest
            }
        }
        try await HTTPBinServer.withServer { server async throws in
            let data = try await AF.request(server.url("/post"), method: .post, encoding: JSONStringArrayEncoding(array: ["a", "b"]))
                .serializingData().value
            let value = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(value["data"] as? String == #"["a","b"]"#)
            #expect(value["json"] as? [String] == ["a", "b"])
            #expect((value["headers"] as? [String: String])?["Content-Type"] == "application/json")
        }
    }

    @Test func downloadResponseSerializersChain() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("x.plist")
                let order = OrderRecorder()
                let _: Void = try await completion { done in
                    AF.download(server.url("/json"), to: { _, _ in (target, []) })
                        .responseData(queue: testQueue) { order.append("data \($0.value?.isEmpty == false)") }
                        .responseString(queue: testQueue) { order.append("string \($0.value?.contains("slideshow") == true)") }
                        .responseJSON(queue: testQueue) { order.append("json \($0.value != nil)") }
                        .responsePropertyList(queue: testQueue) { response in
                            order.append("plist \(response.error?.isResponseSerializationError == true)")
                            done(())
                        }
                }
                #expect(order.values == ["data true", "string true", "json true", "plist true"])
            }
        }
    }
}

/// Carries a non-Sendable response (a parsed JSON `Any`) out of a completion handler in tests.
struct UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
