import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session(maximumResponseBodySize:)`: the limit on bodies held in memory, a documented setting.
@Suite struct ResponseBodyLimitTests {
    static func expectTooLarge(_ error: AFError?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .sessionTaskFailed(let underlying as URLError)? = error else {
            Issue.record("\(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(underlying.code == .dataLengthExceedsMaximum, sourceLocation: sourceLocation)
    }

    @Test func theDefaultIsFourGibibytes() {
        #expect(Session.defaultMaximumResponseBodySize == (4 << 30) - 1)
        #expect(keepAlive(Session()).maximumResponseBodySize == (4 << 30) - 1)
        // One buffer holds no more, so a larger limit is lowered to it instead of trapping on a large body.
        #expect(keepAlive(Session(maximumResponseBodySize: .max)).maximumResponseBodySize == (4 << 30) - 1)
        #expect(keepAlive(Session(maximumResponseBodySize: -5)).maximumResponseBodySize == 0)
    }

    @Test func aBodyOverTheLimitFailsADataRequestButNotADownloadOrAStream() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = keepAlive(Session(maximumResponseBodySize: 1000))
            #expect(session.maximumResponseBodySize == 1000)
            let atLimit = try await withTimeout { await session.request(server.url("/bytes/1000")).serializingData().response }
            #expect(atLimit.data?.count == 1000)
            #expect(atLimit.error == nil)
            let over = try await withTimeout { await session.request(server.url("/bytes/1001")).serializingData().response }
            Self.expectTooLarge(over.error)
            let upload = try await withTimeout {
                await session.upload(Data(count: 10), to: server.url("/bytes/4000"), method: .get).serializingData().response
            }
            Self.expectTooLarge(upload.error)
            // With an `onHTTPResponse` handler the body streams in after the head; it is still held in
            // memory, and still bounded.
            let handled = try await withTimeout {
                await session.request(server.url("/bytes/1001")).onHTTPResponse(on: testQueue) { _ in }.serializingData().response
            }
            Self.expectTooLarge(handled.error)
            let handledAtLimit = try await withTimeout {
                await session.request(server.url("/bytes/1000")).onHTTPResponse(on: testQueue) { _ in }.serializingData().response
            }
            #expect(handledAtLimit.data?.count == 1000)
            // Downloads go to a file and streams to their handlers: neither is held in memory.
            let download = try await withTimeout { await session.download(server.url("/bytes/5000")).serializingData().response }
            #expect(download.value?.count == 5000)
            let streamed = try await withTimeout {
                var bytes = 0
                for await chunk in session.streamRequest(server.url("/bytes/5000")).streamTask().streamingData() {
                    bytes += chunk.value?.count ?? 0
                }
                return bytes
            }
            #expect(streamed == 5000)
        }
    }

    @Test func fileAndDataURLsOverTheLimitFail() async throws {
        let session = keepAlive(Session(maximumResponseBodySize: 1000))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("body-limit-\(UUID().uuidString)")
        try Data(count: 1001).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        Self.expectTooLarge(try await withTimeout { await session.request(file).serializingData().response }.error)
        let small = try #require(URL(string: "data:application/octet-stream;base64," + Data(count: 1000).base64EncodedString()))
        #expect(try await withTimeout { await session.request(small).serializingData().response }.value?.count == 1000)
        let large = try #require(URL(string: "data:application/octet-stream;base64," + Data(count: 1001).base64EncodedString()))
        Self.expectTooLarge(try await withTimeout { await session.request(large).serializingData().response }.error)
    }
}
