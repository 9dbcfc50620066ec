import AFSynchronization
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Mocker-style stub: `URLProtocol` classes in the configuration's `protocolClasses` load what
/// they accept, without a socket, for data, download and upload requests.
@Suite struct URLProtocolTests {
    /// Answers `stub.test`: `/echo` sends the request's body back, `/moved` redirects to `/final`,
    /// `/offline` fails, `/hang` never answers; anything else is a JSON greeting.
    final class StubProtocol: URLProtocol {
        static let stopped = Mutex(0)
        /// Yields when `/hang` has started loading.
        static let hanging = AsyncStream<Void>.makeStream()

        override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "stub.test" }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        override func startLoading() {
            guard let client, let url = request.url else { return }
            func respond(_ status: Int, _ body: Data, _ headers: [String: String] = ["Content-Type": "application/json"]) {
                let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
                client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
                client.urlProtocol(self, didLoad: body)
                client.urlProtocolDidFinishLoading(self)
            }
            switch url.path {
            case "/echo":
                respond(200, request.httpBody ?? request.httpBodyStream.map(Self.read) ?? Data(), ["Content-Type": "text/plain"])
            case "/moved":
                let redirect = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": "/final"])!
                client.urlProtocol(
                    self, wasRedirectedTo: URLRequest(url: URL(string: "https://stub.test/final")!), redirectResponse: redirect)
            case "/offline":
                client.urlProtocol(self, didFailWithError: URLError(.notConnectedToInternet))
            case "/hang":
                Self.hanging.continuation.yield()
            default:
                respond(200, Data(#"{"greeting":"hello from \#(url.path)"}"#.utf8))
            }
        }

        override func stopLoading() { Self.stopped.withLock { $0 += 1 } }

        static func read(_ stream: InputStream) -> Data {
            stream.open()
            defer { stream.close() }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 1024)
            while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 { data.append(contentsOf: buffer[..<count]) }
            return data
        }
    }

    struct Greeting: Decodable, Sendable { let greeting: String }

    static let session: Session = {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [StubProtocol.self] + (configuration.protocolClasses ?? [])
        return Session(configuration: configuration)
    }()

    @Test func aDataRequestIsServedByTheStub() async throws {
        let response = try await withTimeout {
            await Self.session.request("https://stub.test/users").validate().serializingDecodable(Greeting.self).response
        }
        #expect(response.value?.greeting == "hello from /users")
        #expect(response.response?.statusCode == 200)
        #expect(response.metrics?.transactionMetrics.count == 1)
    }

    @Test func aDownloadIsServedByTheStub() async throws {
        let response = try await withTimeout { await Self.session.download("https://stub.test/file").serializingData().response }
        #expect(response.value == Data(#"{"greeting":"hello from /file"}"#.utf8))
        #expect(response.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } == true)
        if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
    }

    @Test func uploadsHandTheirBodyToTheStub() async throws {
        let fromData = try await withTimeout {
            try await Self.session.upload(Data("payload".utf8), to: "https://stub.test/echo").serializingString().value
        }
        #expect(fromData == "payload")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID())")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try await withTimeout { try await Self.session.upload(file, to: "https://stub.test/echo").serializingString().value }
        #expect(fromFile == "from a file")
        let parameters = try await withTimeout {
            try await Self.session.request("https://stub.test/echo", method: .post, parameters: ["a": "b"]).serializingString().value
        }
        #expect(parameters == "a=b")
    }

    @Test func aStubsRedirectIsFollowed() async throws {
        let monitor = RecordingMonitor()
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [StubProtocol.self]
        let session = Session(configuration: configuration, eventMonitors: [monitor])
        let response = try await withTimeout {
            await session.request("https://stub.test/moved").serializingDecodable(Greeting.self).response
        }
        #expect(response.value?.greeting == "hello from /final")
        #expect(response.metrics?.redirectCount == 1)
        #expect(await monitor.events.contains("taskWillPerformHTTPRedirection 302"))
    }

    @Test func aStubsFailureIsTheRequestsError() async throws {
        let response = try await withTimeout { await Self.session.request("https://stub.test/offline").serializingData().response }
        #expect((response.error?.underlyingError as? URLError)?.code == .notConnectedToInternet)
    }

    @Test func cancellingStopsTheStub() async throws {
        let before = StubProtocol.stopped.withLock { $0 }
        let request = Self.session.request("https://stub.test/hang")
        let task = request.serializingData()
        // Cancelled once the stub is loading.
        _ = try await withTimeout {
            var started = StubProtocol.hanging.stream.makeAsyncIterator()
            return await started.next() != nil
        }
        request.cancel()
        let response = try await withTimeout { await task.response }
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(StubProtocol.stopped.withLock { $0 } > before)
    }

    @Test func requestsTheStubRefusesGoToTheNetwork() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout { await Self.session.request(server.url("/get")).serializingData().response }
            #expect(response.response?.statusCode == 200)
        }
    }
}
