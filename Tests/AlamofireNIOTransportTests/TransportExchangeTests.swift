import AlamofireNIOTransport
import Crypto
import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

@Suite struct TransportExchangeTests {
    @Test func getReturnsHeadBodyAndMetrics() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            var request = TransportRequest(url: server.url("/get?a=1"))
            request.headers.add(name: "X-Test", value: "yes")
            let fetched = try await transport.fetch(request)
            #expect(fetched.status == 200)
            #expect(fetched.head.headers.first(name: "Content-Type") == "application/json")
            #expect(fetched.json["url"] as? String == "http://127.0.0.1:\(server.port)/get?a=1")
            let headers = fetched.json["headers"] as? [String: String]
            #expect(headers?["X-Test"] == "yes")
            #expect(headers?["Host"] == "127.0.0.1:\(server.port)")

            let metrics = fetched.metrics
            #expect(metrics.isReusedConnection == false)
            #expect(metrics.networkProtocolName == "http/1.1")
            #expect(metrics.remoteAddress == "127.0.0.1")
            #expect(metrics.remotePort == server.port)
            #expect(metrics.localAddress == "127.0.0.1")
            #expect(metrics.negotiatedTLSVersion == nil)
            let ordered = [
                metrics.fetchStart, metrics.domainLookupStart, metrics.domainLookupEnd, metrics.connectStart, metrics.connectEnd,
                metrics.requestStart, metrics.requestEnd, metrics.responseStart, metrics.responseEnd,
            ]
            #expect(!ordered.contains(nil))
            #expect(ordered.compactMap { $0 } == ordered.compactMap { $0 }.sorted())
            #expect(metrics.responseBodyBytesAfterDecoding == Int64(fetched.body.readableBytes))
            #expect(metrics.responseBodyBytesReceived == Int64(fetched.body.readableBytes))
            #expect(metrics.requestBodyBytesSent == 0)
            #expect(metrics.requestHeaderBytesSent > 40)
        }
    }

    @Test func keepAliveReusesOneConnection() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            var reused: [Bool] = []
            for _ in 0..<5 {
                reused.append(try await transport.fetch(server.url("/get")).metrics.isReusedConnection)
            }
            #expect(reused == [false, true, true, true, true])
            #expect(server.statistics.acceptedConnections == 1)
            #expect(server.statistics.requestsPerConnection == [5])
        }
    }

    @Test func reusedConnectionMetricsOmitConnectionSetup() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            _ = try await transport.fetch(server.url("/get"))
            let second = try await transport.fetch(server.url("/get")).metrics
            #expect(second.connectStart == nil && second.domainLookupStart == nil && second.secureConnectionStart == nil)
            #expect(second.remotePort == server.port)
        }
    }

    @Test func connectionCloseFromServerIsHonoured() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            for _ in 0..<3 {
                let fetched = try await transport.fetch(server.url("/response-headers?Connection=close"))
                #expect(fetched.status == 200)
            }
            #expect(server.statistics.acceptedConnections == 3)
        }
    }

    @Test func postsBytesWithContentLength() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            var request = TransportRequest(method: .POST, url: server.url("/post"), body: .bytes(ByteBuffer(string: "{\"a\":1}")))
            request.headers.add(name: "Content-Type", value: "application/json")
            let progress = NIOLockedValueBox<[Int64]>([])
            request.onUploadProgress = { sent, expected in
                progress.withLockedValue { $0.append(sent) }
                #expect(expected == 7)
            }
            let fetched = try await transport.fetch(request)
            #expect(fetched.json["data"] as? String == "{\"a\":1}")
            #expect((fetched.json["headers"] as? [String: String])?["Content-Length"] == "7")
            #expect(progress.withLockedValue { $0 } == [7])
            #expect(fetched.metrics.requestBodyBytesSent == 7)
        }
    }

    @Test func emptyPostSendsContentLengthZero() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let fetched = try await makeTransport().fetch(server.url("/post"), .POST)
            #expect((fetched.json["headers"] as? [String: String])?["Content-Length"] == "0")
        }
    }

    @Test func uploadsAFileFromDisk() async throws {
        try await HTTPBinServer.withServer { server async throws in
            var generator = SeededBytes(seed: 21)
            let bytes = generator.next(3 * 65536 + 17)
            let file = try Self.temporaryFile(Data(bytes))
            defer { try? FileManager.default.removeItem(at: file) }
            let fetched = try await makeTransport().fetch(server.url("/upload"), .PUT, body: .file(file))
            #expect(fetched.json["bytes"] as? Int == bytes.count)
            #expect(fetched.json["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
        }
    }

    /// On a plain connection a file goes by `sendfile`, in 512 KiB slices, each reported when written
    /// (the buffered path, over TLS, reports every 512 KiB read).
    @Test func aFileOverAPlainConnectionGoesInSlicesBySendfile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            var generator = SeededBytes(seed: 22)
            let bytes = generator.next(5 * 1024 * 1024 + 17)
            let file = try Self.temporaryFile(Data(bytes))
            defer { try? FileManager.default.removeItem(at: file) }
            let progress = NIOLockedValueBox<[Int64]>([])
            var request = TransportRequest(method: .PUT, url: server.url("/upload"), body: .file(file))
            request.onUploadProgress = { sent, expected in
                #expect(expected == Int64(bytes.count))
                progress.withLockedValue { $0.append(sent) }
            }
            let fetched = try await makeTransport().fetch(request)
            #expect(fetched.json["bytes"] as? Int == bytes.count)
            #expect(fetched.json["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
            #expect(progress.withLockedValue { $0 } == (1...10).map { Int64($0) << 19 } + [Int64(bytes.count)])
            #expect(fetched.completion.metrics.requestBodyBytesSent == Int64(bytes.count))
        }
    }

    /// A server that answers before taking the body: the answer arrives, and the file sent by
    /// `sendfile` is closed once its connection is (no descriptor is left open).
    @Test func aFileCutShortByAnEarlyAnswerIsClosed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let file = try Self.temporaryFile(Data(count: 32 << 20))
            defer { try? FileManager.default.removeItem(at: file) }
            let transport = makeTransport()
            let fetched = try await transport.fetch(server.url("/status/201"), .PUT, body: .file(file))
            #expect(fetched.status == 201)
            transport.shutdown()
            // The slice being written when the connection closed fails, and the file goes with it.
            let open = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] }
            let stillOpen = {
                open().contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == file.path }
            }
            for _ in 0..<200 where stillOpen() { try await Task.sleep(for: .milliseconds(10)) }
            #expect(!stillOpen())
        }
    }

    /// A PUT whose reused connection is reset once its file body has started goes again on a fresh
    /// connection, and is answered there. (A POST would not: `ExchangeHandlerTests` holds a slice
    /// back to show it, as loopback's socket buffers take a whole slice at once.)
    @Test func aPutWhoseFileWasPartlySentIsRetried() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let file = try Self.temporaryFile(Data(count: 4 << 20))
            defer { try? FileManager.default.removeItem(at: file) }
            let url = server.faultURL("/close-mid-body/\(UUID().uuidString)")
            let transport = makeTransport()
            #expect(try await transport.fetch(server.faultURL("/")).status == 200)
            let fetched = try await transport.fetch(url, .PUT, body: .file(file))
            #expect(fetched.status == 200)
            #expect(String(buffer: fetched.body) == "ok")
        }
    }

    /// A file cut short between two `sendfile` slices fails the request at once with a clear error
    /// (`sendfile` past the end writes nothing, and NIO would retry it until the idle timeout).
    @Test func aFileThatShrinksWhileSentFailsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let file = try Self.temporaryFile(Data(count: 4 << 20))
            defer { try? FileManager.default.removeItem(at: file) }
            var request = TransportRequest(method: .PUT, url: server.url("/upload"), body: .file(file))
            request.onUploadProgress = { sent, _ in
                // Runs once the first slice is written, before the next is cut.
                if sent == 1 << 19 { truncate(file.path, 100) }
            }
            let started = ContinuousClock.now
            let error = await transportError { try await makeTransport().fetch(request) }
            #expect(error?.code == .cannotDecodeRawData)
            #expect(error?.message.contains("shrank to 100 bytes") == true)
            #expect(ContinuousClock.now - started < .seconds(30))
        }
    }

    /// A new file in the temporary directory holding `contents` (the test removes it).
    private static func temporaryFile(_ contents: Data) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        try contents.write(to: file)
        return file
    }

    @Test func missingFileIsAnErrorBeforeAnythingIsSent() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
            let error = await transportError { try await makeTransport().fetch(server.url("/upload"), .POST, body: .file(missing)) }
            #expect(error?.code == .fileDoesNotExist)
            #expect(server.statistics.acceptedConnections == 0)
        }
    }

    @Test func streamsABodyOfUnknownLengthChunked() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let body = TransportRequest.Body.stream(length: nil) { writer in
                var generator = SeededBytes(seed: 4)
                for _ in 0..<10 {
                    var chunk = ByteBuffer()
                    generator.write(10_000, into: &chunk)
                    try await writer.write(chunk)
                }
            }
            let fetched = try await makeTransport().fetch(server.url("/upload"), .POST, body: body)
            var generator = SeededBytes(seed: 4)
            #expect(fetched.json["bytes"] as? Int == 100_000)
            #expect(
                fetched.json["sha256"] as? String == SHA256.hash(data: generator.next(100_000)).map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test func streamShorterThanAnnouncedIsAnError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let body = TransportRequest.Body.stream(length: 10) { writer in try await writer.write(ByteBuffer(string: "short")) }
            let error = await transportError { try await makeTransport().fetch(server.url("/upload"), .POST, body: body) }
            #expect(error?.code == .cannotDecodeRawData)
        }
    }

    @Test func streamLongerThanAnnouncedFailsBeforeTheExtraBytesAreSent() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let body = TransportRequest.Body.stream(length: 5) { writer in
                try await writer.write(ByteBuffer(string: "12345GET /get HTTP/1.1\r\nHost: x\r\n\r\n"))
            }
            let error = await transportError { try await makeTransport().fetch(server.url("/upload"), .POST, body: body) }
            #expect(error?.code == .cannotDecodeRawData)
            #expect(error?.message == "the request body had more than the 5 bytes announced")
            try await server.waitUntil { $0.openConnections == 0 }
            // The smuggled request never reached the server.
            #expect(server.statistics.totalRequests <= 1)
        }
    }

    @Test func bodyStreamsWithBackPressureAndDownloadProgress() async throws {
        try await HTTPBinServer.withServer { server async throws in
            var request = TransportRequest(url: server.url("/bytes/1000000?seed=8"))
            let lastProgress = NIOLockedValueBox<(Int64, Int64?)>((0, nil))
            request.onDownloadProgress = { received, expected in lastProgress.withLockedValue { $0 = (received, expected) } }
            let response = try await makeTransport().execute(request)
            var hasher = SHA256()
            var count = 0
            for try await chunk in response.body {
                count += chunk.readableBytes
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            var generator = SeededBytes(seed: 8)
            #expect(count == 1_000_000)
            #expect(hasher.finalize() == SHA256.hash(data: generator.next(1_000_000)))
            #expect(lastProgress.withLockedValue { $0.0 } == 1_000_000)
            #expect(lastProgress.withLockedValue { $0.1 } == 1_000_000)
        }
    }

    @Test func collectingModeHandsOverTheWholeResponseOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let collected = try await transport.execute(TransportRequest(url: server.url("/bytes/300000?seed=5")), collectingUpTo: 1 << 20)
            var generator = SeededBytes(seed: 5)
            #expect(collected.head.status == .ok)
            #expect(Array(collected.body.readableBytesView) == generator.next(300_000))
            #expect(collected.completion.metrics.responseBodyBytesAfterDecoding == 300_000)
            let tooBig = await transportError {
                try await transport.execute(TransportRequest(url: server.url("/bytes/2000")), collectingUpTo: 1000)
            }
            #expect(tooBig?.code == .dataLengthExceedsMaximum)
            let truncated = await transportError {
                try await transport.execute(TransportRequest(url: server.faultURL("/truncated-body")), collectingUpTo: 1000)
            }
            #expect(truncated?.code == .networkConnectionLost)
            // The connection that refused the oversized body is gone; the pool still serves.
            #expect(try await transport.execute(TransportRequest(url: server.url("/get")), collectingUpTo: 1 << 20).head.status == .ok)
        }
    }

    @Test(arguments: ["gzip", "deflate"])
    func compressedResponsesAreDecoded(encoding: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let fetched = try await makeTransport().fetch(server.url("/\(encoding)"))
            #expect(fetched.json[encoding == "gzip" ? "gzipped" : "deflated"] as? Bool == true)
            #expect(fetched.metrics.responseBodyBytesAfterDecoding == Int64(fetched.body.readableBytes))
            #expect(fetched.metrics.responseBodyBytesReceived < fetched.metrics.responseBodyBytesAfterDecoding)
        }
    }

    @Test func decompressionBombIsRejected() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let error = await transportError { try await makeTransport().fetch(server.url("/gzip-bomb")) }
            #expect(error?.code == .dataLengthExceedsMaximum)
        }
    }

    @Test func decompressionCanBeTurnedOff() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let fetched = try await makeTransport { $0.maximumDecompressionRatio = nil }.fetch(server.url("/gzip"))
            #expect(fetched.body.readableBytesView.starts(with: [0x1F, 0x8B]))
        }
    }

    @Test func trailersAndHeadResponses() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let transport = makeTransport()
            let head = try await transport.fetch(server.url("/bytes/100"), .HEAD)
            #expect(head.head.headers.first(name: "Content-Length") == "100")
            #expect(head.body.readableBytes == 0)
            // The connection stays usable after a HEAD response without a body.
            #expect(try await transport.fetch(server.url("/get")).metrics.isReusedConnection)
        }
    }
}
