#if OpenAPI
import AFSynchronization
import AlamofireNIO
@testable import AlamofireNIOOpenAPI
import Crypto
import Foundation
import HTTPBinServer
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The OpenAPI transport end to end: the generated client (`Generated/`, from `openapi.yaml`) and
/// the transport alone, against the bundled server.
@Suite struct AlamofireTransportTests {
    /// Counts each request's tasks, keeps its end, and holds the last request weakly.
    final class Recorder: EventMonitor, Sendable {
        let queue = DispatchQueue(label: "AlamofireTransportTests.Recorder")
        struct Counts: Sendable {
            var tasks = 0
            var finished: [AFError?] = []
        }

        let counts = Watched(Counts())
        private let last = Mutex(WeakRequest())

        struct WeakRequest {
            weak var request: Request?
        }

        func request(_ request: Request, didCreateTask task: URLSessionTask) {
            counts.change { $0.tasks += 1 }
            last.withLock { $0.request = request }
        }

        var lastRequestIsAlive: Bool { last.withLock { $0.request != nil } }

        func requestDidFinish(_ request: Request) {
            counts.change { $0.finished.append(request.error) }
        }

        var tasks: Int { counts.value.tasks }
        var finished: [AFError?] { counts.value.finished }
    }

    /// Adds a header to every request, as a session's interceptor does.
    struct Tagger: RequestInterceptor {
        func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)
        {
            var urlRequest = urlRequest
            urlRequest.headers.add(name: "X-Adapted", value: "yes")
            completion(.success(urlRequest))
        }
    }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed }
    }

    @Test func aGeneratedClientsOperationGoesThroughTheSessionsInterceptor() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(interceptor: Tagger())
            let client = Client(serverURL: server.url("/"), transport: AlamofireTransport(session: session))
            let output = try await client.getEcho(query: .init(name: "Jane Doe", tag: ["a", "b c"]), headers: .init(X_hyphen_Trace: "t-1"))
            let echo = try output.ok.body.json
            #expect(echo.url == server.url("/get?name=Jane%20Doe&tag=a&tag=b%20c").absoluteString)
            #expect(echo.args.additionalProperties.value["name"] as? String == "Jane Doe")
            #expect(echo.args.additionalProperties.value["tag"] as? [String] == ["a", "b c"])
            #expect(echo.headers.additionalProperties["X-Trace"] == "t-1")
            #expect(echo.headers.additionalProperties["X-Adapted"] == "yes")
            #expect(echo.headers.additionalProperties["Accept"] == "application/json")
        }
    }

    @Test func aStreamedUploadOfUnknownLengthIsSentChunkedAndWhole() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let client = Client(serverURL: server.url("/"), transport: AlamofireTransport(session: Session()))
            let chunks = (0..<64).map { Self.bytes(64 * 1024, seed: UInt8($0)) }
            let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
            let producer = Task {
                for chunk in chunks { continuation.yield(chunk[...]) }
                continuation.finish()
            }
            let output = try await client.uploadBytes(body: .binary(HTTPBody(stream, length: .unknown)))
            await producer.value
            let summary = try output.ok.body.json
            #expect(summary.bytes == 64 * 64 * 1024)
            #expect(summary.sha256 == SHA256.hash(data: Array(chunks.joined())).map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test func aBodyOfKnownLengthIsSentWithItsContentLength() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = AlamofireTransport(session: Session())
            var request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/anything")
            request.headerFields[.contentType] = "text/plain"
            let (response, body) = try await transport.send(request, body: HTTPBody("hello"), baseURL: server.url("/"), operationID: "put")
            #expect(response.status == .ok)
            let echo = try JSONSerialization.jsonObject(with: Data(try await [UInt8](collecting: try #require(body), upTo: 1 << 20)))
            let object = try #require(echo as? [String: Any])
            let headers = try #require(object["headers"] as? [String: String])
            #expect(object["method"] as? String == "PUT")
            #expect(object["data"] as? String == "hello")
            #expect(headers["Content-Length"] == "5")
            #expect(headers["Content-Type"] == "text/plain")
            #expect(headers["Transfer-Encoding"] == nil)
        }
    }

    @Test func aStreamedDownloadArrivesInChunksAndWhole() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let client = Client(serverURL: server.url("/"), transport: AlamofireTransport(session: session))
            let count = 3 * 1024 * 1024 + 17
            let output = try await client.streamBytes(path: .init(count: count), query: .init(seed: 7, chunk_size: 64 * 1024))
            let body = try output.ok.body.binary
            #expect(body.length == .unknown)
            var received: [UInt8] = []
            var chunkCount = 0
            for try await chunk in body {
                received += chunk
                chunkCount += 1
            }
            let expected = try await session.request(server.url("/stream-bytes/\(count)?seed=7")).serializingData().value
            #expect(received.count == count)
            #expect(Data(received) == expected)
            #expect(chunkCount > 1)
        }
    }

    @Test func aResponseIsHandedOnBeforeItsEndlessBodyAndDroppingTheBodyCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = Recorder()
            let transport = AlamofireTransport(session: Session(eventMonitors: [recorder]))
            // A line of 1 GiB that the server sends only as fast as the client reads.
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/sse?count=0&long_line=1073741824")
            var (response, body) = try await transport.send(request, body: nil, baseURL: server.url("/"), operationID: "sse")
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentType] == "text/event-stream")
            var read = 0
            for try await chunk in try #require(body) {
                read += chunk.count
                if read >= 2 * 1024 * 1024 { break }
            }
            #expect(read >= 2 * 1024 * 1024)
            body = nil
            #expect(await recorder.counts.waitUntil { $0.finished.count == 1 })
            #expect(recorder.finished.first??.isExplicitlyCancelledError == true)
        }
    }

    @Test func repeatedResponseFieldsStayApartAndInOrder() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // An ephemeral cookie store: the shared one would send the cookie with other tests' requests.
            let transport = AlamofireTransport(session: Session(configuration: URLSessionConfiguration.af.ephemeral))
            let request = HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: "/response-headers?X-Echo=b&X-Echo=a&Set-Cookie=k%3D1")
            let (response, body) = try await transport.send(request, body: nil, baseURL: server.url("/"), operationID: "headers")
            let echo = try #require(HTTPField.Name("X-Echo"))
            #expect(response.headerFields[values: echo] == ["b", "a"])
            #expect(response.headerFields[values: .setCookie] == ["k=1"])
            let bytes = try await [UInt8](collecting: try #require(body), upTo: 1 << 20)
            #expect(response.headerFields[.contentLength] == "\(bytes.count)")
        }
    }

    @Test func statusesWithoutBodiesAndUndocumentedOnesReachTheClient() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let client = Client(serverURL: server.url("/"), transport: AlamofireTransport(session: Session()))
            #expect(try await client.getStatus(path: .init(code: 204)) == .noContent(.init()))
            guard case .default(statusCode: 418, _) = try await client.getStatus(path: .init(code: 418)) else {
                Issue.record("418 is not the default response")
                return
            }
            // A HEAD's response has no body to hand on.
            let transport = AlamofireTransport(session: Session())
            let head = HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/get")
            let (response, body) = try await transport.send(head, body: nil, baseURL: server.url("/"), operationID: "head")
            #expect(response.status == .ok)
            #expect(body == nil)
        }
    }

    @Test func aRetryPolicyRetriesAnOperationWhoseConnectionClosedBeforeAnswering() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = Recorder()
            let transport = AlamofireTransport(session: Session(eventMonitors: [recorder]), interceptor: RetryPolicy(retryLimit: 2))
            let token = UUID().uuidString
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/fail-once/\(token)")
            let (response, body) = try await transport.send(request, body: nil, baseURL: server.faultURL("/"), operationID: "retry")
            #expect(response.status == .ok)
            #expect(try await String(collecting: try #require(body), upTo: 1024) == "ok")
            #expect(await recorder.counts.waitUntil { $0.finished.count == 1 })
            #expect(recorder.tasks == 2)
        }
    }

    @Test func aFailedOperationThrowsTheSessionsErrorThroughTheClient() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // The fault server closes `/close/…` without answering.
            let client = Client(serverURL: server.faultURL("/close"), transport: AlamofireTransport(session: Session()))
            await #expect {
                _ = try await client.getStatus(path: .init(code: 200))
            } throws: { error in
                guard let error = error as? ClientError, let underlying = error.underlyingError as? AFError else { return false }
                return error.operationID == "getStatus" && underlying.isSessionTaskError
            }
        }
    }

    @Test func cancellingTheCallingTaskCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = Recorder()
            let transport = AlamofireTransport(session: Session(eventMonitors: [recorder]))
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/hang")
            let call = Task { try await transport.send(request, body: nil, baseURL: server.faultURL("/"), operationID: "hang") }
            // Cancelled while it waits for the head, not before it starts.
            #expect(await recorder.counts.waitUntil { $0.tasks == 1 })
            call.cancel()
            await #expect(throws: CancellationError.self) { _ = try await call.value }
            #expect(await recorder.counts.waitUntil { $0.finished.count == 1 })
            #expect(recorder.finished.first??.isExplicitlyCancelledError == true)
        }
    }

    @Test func anOperationsRequestIsReleasedOnceItsBodyIsRead() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = Recorder()
            let client = Client(serverURL: server.url("/"), transport: AlamofireTransport(session: Session(eventMonitors: [recorder])))
            let body = try await client.streamBytes(path: .init(count: 100_000), query: .init(seed: 3)).ok.body.binary
            #expect(try await [UInt8](collecting: body, upTo: 1 << 20).count == 100_000)
            #expect(try await waitUntil { !recorder.lastRequestIsAlive })
        }
    }

    @Test func noRetryIsMadeOnceTheResponseHeadWasHandedOn() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = Recorder()
            let transport = AlamofireTransport(session: Session(eventMonitors: [recorder]), interceptor: RetryPolicy(retryLimit: 2))
            // A head that promises 100 bytes, 10 of them, then a close: retryable, but too late.
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/truncated-body")
            let (response, body) = try await transport.send(request, body: nil, baseURL: server.faultURL("/"), operationID: "truncated")
            #expect(response.status == .ok)
            await #expect {
                _ = try await [UInt8](collecting: try #require(body), upTo: 1024)
            } throws: { error in
                (error as? AFError)?.underlyingError.flatMap { $0 as? URLError }?.code == .networkConnectionLost
            }
            #expect(await recorder.counts.waitUntil { $0.finished.count == 1 })
            #expect(recorder.tasks == 1)
        }
    }

    /// Answers every request with 200 and no body.
    final class AnsweringProtocol: URLProtocol {
        override class func canInit(with request: URLRequest) -> Bool { true }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
        override func startLoading() {
            let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocolDidFinishLoading(self)
        }
        override func stopLoading() {}
    }

    @Test func aStreamedBodyThatAURLProtocolCannotTakeFailsTheOperation() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [AnsweringProtocol.self]
        let transport = AlamofireTransport(session: Session(configuration: configuration))
        let request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/anything")
        await #expect {
            _ = try await transport.send(
                request, body: HTTPBody("data"), baseURL: URL(string: "http://example.invalid")!, operationID: "put")
        } throws: { error in
            (error as? AFError)?.underlyingError.flatMap { $0 as? URLError }?.code == .requestBodyStreamExhausted
        }
        // Without a body, the protocol answers.
        let get = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/anything")
        let (response, _) = try await transport.send(get, body: nil, baseURL: URL(string: "http://example.invalid")!, operationID: "get")
        #expect(response.status == .ok)
    }

    @Test func requestsMapToURLRequestsExactly() throws {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "ignored.example", path: "/items/a%20b?q=1&q=2")
        request.headerFields.append(HTTPField(name: .accept, value: "application/json"))
        request.headerFields.append(HTTPField(name: .accept, value: "text/plain"))
        request.headerFields.append(HTTPField(name: .cookie, value: "a=1"))
        request.headerFields.append(HTTPField(name: .cookie, value: "b=2"))
        let urlRequest = try OpenAPIMapping.urlRequest(for: request, baseURL: URL(string: "http://127.0.0.1:8080/api/v1/")!)
        #expect(urlRequest.url?.absoluteString == "http://127.0.0.1:8080/api/v1/items/a%20b?q=1&q=2")
        #expect(urlRequest.httpMethod == "POST")
        #expect(urlRequest.value(forHTTPHeaderField: "Accept") == "application/json, text/plain")
        #expect(urlRequest.value(forHTTPHeaderField: "Cookie") == "a=1; b=2")
        #expect(urlRequest.allHTTPHeaderFields?.count == 2)
    }
}
#endif
