import AFSynchronization
import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// httpbin's echo, as Decodable.
struct HTTPBinResponse: Decodable, Sendable {
    let args: [String: String]
    let headers: [String: String]
    let url: String
    let form: [String: String]?
    let data: String?
    let json: [String: String]?
}

let testQueue = DispatchQueue(label: "tests.responses")

@Suite struct SessionTests {
    @Test func requestDecodesWithAsyncAwait() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let value = try await AF.request(server.url("/get"), parameters: ["foo": "bar"]).serializingDecodable(HTTPBinResponse.self)
                .value
            #expect(value.args == ["foo": "bar"])
            #expect(value.url == "http://127.0.0.1:\(server.port)/get?foo=bar")
            #expect(value.headers["Accept-Encoding"] == expectedDefaultAcceptEncoding)
            #expect(value.headers["User-Agent"]?.hasSuffix("AlamofireNIO/\(AFInfo.version)") == true)
        }
    }

    @Test func seedPostExamplesEncodeAsDocumented() async throws {
        struct Login: Encodable, Sendable {
            let email: String
            let password: String
        }
        try await HTTPBinServer.withServer { server async throws in
            let login = Login(email: "test@test.test", password: "testPassword")
            let json = try await AF.request(server.url("/post"), method: .post, parameters: login, encoder: JSONParameterEncoder.default)
                .serializingDecodable(HTTPBinResponse.self).value
            #expect(json.json == ["email": "test@test.test", "password": "testPassword"])
            #expect(json.headers["Content-Type"] == "application/json")

            let form = try await AF.request(server.url("/post"), method: .post, parameters: ["foo": "bar"])
                .serializingDecodable(HTTPBinResponse.self).value
            #expect(form.form == ["foo": "bar"])
            #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")

            // Swift 6 mode needs the mixed array's element type, as with Alamofire 5.12, whose `Parameters` are Sendable.
            let parameters: Parameters = ["foo": "bar", "baz": ["a", 1] as [any Sendable], "qux": ["x": 1, "y": 2, "z": 3]]
            let legacy = try await AF.request(server.url("/post"), method: .post, parameters: parameters).serializingData().value
            let echoed = try JSONSerialization.jsonObject(with: legacy) as? [String: Any]
            #expect(
                echoed?["form"] as? NSDictionary == ["foo": "bar", "baz[]": ["a", "1"], "qux[x]": "1", "qux[y]": "2", "qux[z]": "3"]
                    as NSDictionary)
        }
    }

    @Test func completionHandlersRunInOrderOnTheirQueue() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let order = OrderRecorder()
            let done: Void = try await completion { finished in
                AF.request(server.url("/get"))
                    .responseData(queue: testQueue) { response in
                        dispatchPrecondition(condition: .onQueue(testQueue))
                        order.append("data:\(response.data?.isEmpty == false)")
                    }
                    .responseString(queue: testQueue) { response in order.append("string:\(response.value?.contains("\"url\"") == true)") }
                    .responseDecodable(of: HTTPBinResponse.self, queue: testQueue) { response in
                        order.append("decodable:\(response.value != nil)")
                        finished(())
                    }
            }
            _ = done
            #expect(order.values == ["data:true", "string:true", "decodable:true"])
        }
    }

    @Test func validationPasses2xxWithAcceptableContentType() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let result = await AF.request(server.url("/json"), headers: [.accept("application/json")]).validate().serializingData().result
            #expect((try? result.get())?.isEmpty == false)
        }
    }

    @Test func statusValidationFails() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/status/404")).validate(statusCode: 200..<300).serializingData().response
            #expect(response.error?.responseCode == 404)
            #expect(response.response?.statusCode == 404)
        }
    }

    @Test func contentTypeValidationFails() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/json")).validate(contentType: ["application/xml"]).serializingData().response
            #expect(response.error?.responseContentType == "application/json")
            #expect(response.error?.acceptableContentTypes == ["application/xml"])
        }
    }

    @Test func customValidationErrorIsWrapped() async throws {
        struct Rejected: Error {}
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/get")).validate { _, _, _ in .failure(Rejected()) }.serializingData().response
            guard case .responseValidationFailed(.customValidationFailed(let error)) = response.error else {
                Issue.record("unexpected \(String(describing: response.error))")
                return
            }
            #expect(error is Rejected)
        }
    }

    @Test func invalidURLIsReported() async {
        let response = await AF.request("http://[::1").serializingData().response
        #expect(response.error?.isInvalidURLError == true)
        #expect(response.request == nil)
    }

    @Test func refusedConnectionIsSessionTaskFailed() async throws {
        // Bound but not listening: a stopped server's port could be taken by another test's meanwhile.
        let response = try await RefusingPort.withRefusingPort { port in
            await AF.request("http://127.0.0.1:\(port)/get").serializingData().response
        }
        #expect((response.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
        #expect(response.error?.isSessionTaskError == true)
    }

    @Test func requestTimeoutIsTimedOut() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/hold/never")) { $0.timeoutInterval = 0.3 }.serializingData().response
            #expect((response.error?.underlyingError as? URLError)?.code == .timedOut)
        }
    }

    @Test func cancelIsExplicitlyCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = AF.request(server.url("/hold/never"))
            let task = request.serializingData()
            try await server.waitUntil { $0.totalRequests == 1 }
            request.cancel()
            let response = await task.response
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(request.isCancelled)
        }
    }

    @Test func dataTaskCancelCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let task = AF.request(server.url("/hold/never")).serializingData()
            try await server.waitUntil { $0.totalRequests == 1 }
            task.cancel()
            #expect(await task.response.error?.isExplicitlyCancelledError == true)
        }
    }

    @Test func emptyResponsesAreAllowedWhereAlamofireAllowsThem() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(try await AF.request(server.url("/status/204")).serializingData().value == Data())
            let empty = await AF.request(server.url("/status/204")).serializingDecodable(Empty.self).result
            #expect((try? empty.get()) != nil)
            #expect(try await AF.request(server.url("/get"), method: .head).serializingData().value == Data())
            let empty200 = await AF.request(server.url("/status/200")).serializingData().response
            guard case .responseSerializationFailed(.inputDataNilOrZeroLength) = empty200.error else {
                Issue.record("unexpected \(String(describing: empty200.error))")
                return
            }
        }
    }

    @Test func serializersReportTheirFailures() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let notJSON = try await completion { done in AF.request(server.url("/html")).responseJSON(queue: testQueue) { done($0.error) } }
            guard case .responseSerializationFailed(.jsonSerializationFailed) = notJSON else {
                Issue.record("unexpected \(String(describing: notJSON))")
                return
            }
            let wrongType = await AF.request(server.url("/json")).serializingDecodable([Int].self).response
            guard case .responseSerializationFailed(.decodingFailed) = wrongType.error else {
                Issue.record("unexpected \(String(describing: wrongType.error))")
                return
            }
        }
    }

    @Test func stringsFollowTheResponseCharset() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let text = try await AF.request(server.url("/encoding/utf8")).serializingString().value
            #expect(text.contains("日本語: いろはにほへと"))
            let latin = try await AF.request(server.url("/response-headers?Content-Type=text/plain;%20charset=iso-8859-1"))
                .serializingString().value
            #expect(latin.contains("iso-8859-1"))
        }
    }

    @Test func jsonResponsesParse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let value = try await completion { done in
                AF.request(server.url("/json")).responseJSON(queue: testQueue) { response in
                    let slideshow = (response.value as? [String: Any])?["slideshow"] as? [String: Any]
                    done(slideshow?["title"] as? String)
                }
            }
            #expect(value == "Sample Slide Show")
        }
    }

    @Test func descriptionsMatchAlamofire() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = AF.request(server.url("/post"), method: .post, parameters: ["a": "b"], encoder: JSONParameterEncoder.default)
            _ = await request.serializingData().response
            #expect(request.description == "POST http://127.0.0.1:\(server.port)/post (200)")
            let curl = request.cURLDescription()
            #expect(curl.hasPrefix("$ curl -v \\\n\t-X POST \\\n\t"))
            #expect(curl.contains("-H \"Content-Type: application/json\""))
            #expect(curl.contains("-d \"{\\\"a\\\":\\\"b\\\"}\""))
            #expect(curl.hasSuffix("\"http://127.0.0.1:\(server.port)/post\""))
        }
    }

    @Test func metricsAreGathered() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/get")).serializingData().response
            let transaction = try #require(response.metrics?.transactionMetrics.first)
            #expect(transaction.networkProtocolName == "http/1.1")
            #expect(transaction.remotePort == server.port)
            #expect(try #require(transaction.responseEndDate) >= (try #require(transaction.fetchStartDate)))
        }
    }

    @Test func oneThousandConcurrentRequestsCompleteExactlyOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let counter = OrderRecorder()
            let statuses = await withTaskGroup(of: Int?.self) { group in
                for index in 0..<1000 {
                    group.addTask {
                        try? await completion { done in
                            session.request(server.url("/get?i=\(index)")).response(queue: testQueue) { response in
                                counter.append("\(index)")
                                done(response.response?.statusCode)
                            }
                        }
                    }
                }
                return await group.reduce(into: [Int?: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(statuses == [200: 1000])
            #expect(Set(counter.values).count == 1000)
            #expect(counter.values.count == 1000)
            #expect(server.statistics.peakOpenConnections <= 6)
        }
    }

    /// A request that fails while it is being built finishes on the root queue while the caller
    /// adds its serializer: the serializer must never be dropped (it once was, and the await hung).
    /// 8 × 5,000 requests hung within seconds before the fix; now they take about a second.
    @Test(.timeLimit(.minutes(1)), arguments: 0..<8)
    func requestsFailingAtCreationAlwaysCompleteTheirHandlers(round: Int) async {
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<5000 {
                group.addTask { await AF.request("http://exa mple.com/").serializingData().response.error?.isInvalidURLError == true }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 5000)
    }

    @Test func eventMonitorSeesTheLifecycleInOrder() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = OrderRecorder()
            let monitor = ClosureEventMonitor(queue: testQueue)
            monitor.requestDidCreateInitialURLRequest = { _, _ in events.append("initial") }
            monitor.requestDidCreateURLRequest = { _, _ in events.append("created") }
            monitor.requestDidResume = { _ in events.append("resumed") }
            monitor.requestDidGatherMetrics = { _, _ in events.append("metrics") }
            monitor.requestDidCompleteTaskWithError = { _, _, error in events.append("completed:\(error == nil)") }
            monitor.requestDidFinish = { _ in events.append("finished") }
            let session = Session(eventMonitors: [monitor])
            _ = await session.request(server.url("/get")).serializingData().response
            let finished: Void = try await completion { done in testQueue.async { done(()) } }
            _ = finished
            // Set up lazily: the resume comes first, as in Alamofire 5.11 and later.
            #expect(events.values == ["resumed", "initial", "created", "metrics", "completed:true", "finished"])
        }
    }

    @Test func adapterAndRetrierApply() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let attempts = OrderRecorder()
            let adapter = Adapter { request, _, completion in
                var request = request
                request.headers.add(.authorization(bearerToken: "token-\(attempts.values.count)"))
                completion(.success(request))
            }
            let retrier = Retrier { request, _, _, completion in
                attempts.append("retry")
                completion(request.retryCount < 2 ? .retry : .doNotRetry)
            }
            let session = Session(interceptor: Interceptor(adapters: [adapter], retriers: [retrier]))
            let request = session.request(server.url("/status/500")).validate()
            let response = await request.serializingData().response
            #expect(response.error?.responseCode == 500)
            #expect(request.retryCount == 2)
            // The third failure is asked about by the load, then by the serializer that fails with it.
            #expect(attempts.values == ["retry", "retry", "retry", "retry"])
            #expect(request.requests.last?.headers["Authorization"] == "Bearer token-2")
        }
    }

    @Test func startRequestsImmediatelyFalseWaitsForResume() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(startRequestsImmediately: false)
            let request = session.request(server.url("/get"))
            let task = request.serializingData()
            #expect(request.state == .initialized)
            request.resume()
            #expect(try await task.value.isEmpty == false)
        }
    }
}

/// Collects strings from any thread.
final class OrderRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ value: String) { lock.withLock { storage.append(value) } }
    var values: [String] { lock.withLock { storage } }
}

@Suite struct RedirectTests {
    @Test func redirectsAreFollowedToTheEnd() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/redirect/3")).serializingDecodable(HTTPBinResponse.self).response
            #expect(response.value?.url == "http://127.0.0.1:\(server.port)/get")
            #expect(response.response?.statusCode == 200)
            #expect(response.metrics?.redirectCount == 3)
            #expect(response.metrics?.transactionMetrics.count == 4)
            #expect((response.metrics?.transactionMetrics.first?.response as? HTTPURLResponse)?.statusCode == 302)
        }
    }

    @Test func absoluteAndRelativeLocationsResolve() async throws {
        try await HTTPBinServer.withServer { server async throws in
            #expect(
                try await AF.request(server.url("/absolute-redirect/2")).serializingDecodable(HTTPBinResponse.self).value.url
                    == "http://127.0.0.1:\(server.port)/get")
            #expect(
                try await AF.request(server.url("/relative-redirect/2")).serializingDecodable(HTTPBinResponse.self).value.url
                    == "http://127.0.0.1:\(server.port)/get")
        }
    }

    @Test(arguments: [(302, "GET", false), (303, "GET", false), (307, "POST", true), (308, "POST", true)])
    func postRedirectsFollowURLSessionsRules(code: Int, method: String, keepsBody: Bool) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/redirect-to?url=%2Fanything&status_code=\(code)")
            let value = try await AF.request(url, method: .post, parameters: ["a": "1"], encoder: JSONParameterEncoder.default)
                .serializingData().value
            let echoed = try JSONSerialization.jsonObject(with: value) as? [String: Any]
            #expect(echoed?["method"] as? String == method)
            #expect((echoed?["data"] as? String == #"{"a":"1"}"#) == keepsBody)
        }
    }

    /// Each hop is started from the last one's completion, on the event loop: the pool must already
    /// have the connection back, or every hop would open a new one.
    @Test func redirectHopsReuseTheConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let response = await session.request(server.url("/redirect/3")).serializingData().response
            #expect(response.response?.statusCode == 200)
            #expect(response.metrics?.transactionMetrics.map(\.isReusedConnection) == [false, true, true, true])
            // The server counts a request once its response is written: wait for the fourth.
            try await server.waitUntil { $0.totalRequests == 4 }
            #expect(server.statistics.acceptedConnections == 1)
        }
    }

    @Test func tooManyRedirectsFail() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.request(server.url("/redirect/17")).serializingData().response
            #expect((response.error?.underlyingError as? URLError)?.code == .httpTooManyRedirects)
            let sixteen = await AF.request(server.url("/redirect/16")).serializingData().response
            #expect(sixteen.response?.statusCode == 200)
        }
    }
}
