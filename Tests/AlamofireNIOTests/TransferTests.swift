import AFSynchronization
import Crypto
import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A directory of its own for one test, removed afterwards.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alamofire-nio-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// What `/bytes/n?seed=s` serves.
func seededBytes(_ count: Int, seed: UInt64) -> Data {
    var generator = SeededBytes(seed: seed)
    return Data(generator.next(count))
}

/// What `/upload` answers.
struct UploadSummary: Decodable, Sendable, Equatable {
    let bytes: Int
    let sha256: String
}

func sha256Hex(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

@Suite struct DownloadTests {
    @Test func downloadMovesTheFileToItsDestination() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("nested/dir/file.bin")
                let destination: DownloadRequest.Destination = { _, _ in (target, [.createIntermediateDirectories, .removePreviousFile]) }
                let first = try await AF.download(server.url("/bytes/300000?seed=7"), to: destination).serializingDownloadedFileURL().value
                #expect(first == target)
                #expect(try Data(contentsOf: target) == seededBytes(300_000, seed: 7))
                // Again, over the previous file.
                let again = await AF.download(server.url("/bytes/10?seed=8"), to: destination).serializingData().response
                #expect(again.fileURL == target)
                #expect(again.value == seededBytes(10, seed: 8))
            }
        }
    }

    @Test func withoutDestinationTheTemporaryFileStays() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = await AF.download(server.url("/bytes/1000?seed=3")).serializingData().response
            let fileURL = try #require(response.fileURL)
            defer { try? FileManager.default.removeItem(at: fileURL) }
            #expect(fileURL.deletingLastPathComponent().standardizedFileURL == FileManager.default.temporaryDirectory.standardizedFileURL)
            #expect(response.value == seededBytes(1000, seed: 3))
            #expect(response.resumeData == nil)
        }
    }

    @Test func aDestinationThatCannotBeReachedFailsAndLeavesNoFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("missing/file.bin")
                let response = await AF.download(server.url("/bytes/10"), to: { _, _ in (target, []) }).serializingDownloadedFileURL()
                    .response
                guard case .downloadedFileMoveFailed(_, let source, let destination)? = response.error else {
                    Issue.record("expected downloadedFileMoveFailed, got \(String(describing: response.error))")
                    return
                }
                #expect(destination == target)
                #expect(!FileManager.default.fileExists(atPath: source.path))
                #expect(response.fileURL == nil)
            }
        }
    }

    @Test func redirectsAreFollowedAndOnlyTheLastBodyIsKept() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("final.bin")
                let url = server.url("/redirect-to?url=%2Fbytes%2F2048%3Fseed%3D5&status_code=302")
                let response = await AF.download(url, to: { _, _ in (target, []) }).serializingData().response
                #expect(response.value == seededBytes(2048, seed: 5))
                #expect(response.metrics?.redirectCount == 1)
                #expect(response.response?.url?.path == "/bytes/2048")
            }
        }
    }

    @Test func validationSeesTheStatusAndTheFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let failed = await AF.download(server.url("/status/404")).validate().serializingDownloadedFileURL().response
            #expect(failed.error?.responseCode == 404)
            #expect(failed.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } == true)
            if let fileURL = failed.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("x.json")
                let seen = OrderRecorder()
                let response = await AF.download(server.url("/json"), to: { _, _ in (target, []) })
                    .validate { _, response, fileURL in
                        seen.append("\(response.statusCode) \(fileURL?.lastPathComponent ?? "nil")")
                        return .success(())
                    }
                    .validate(contentType: ["application/json"])
                    .serializingData().response
                #expect(seen.values == ["200 x.json"])
                #expect(response.error == nil)
                let wrongType = await AF.download(server.url("/json")).validate(contentType: ["text/html"]).serializingData().response
                #expect(wrongType.error?.isResponseValidationError == true)
                if let fileURL = wrongType.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            }
        }
    }

    @Test func serializersReadTheFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("get.json")
                let decoded = try await AF.download(server.url("/get?a=1"), to: { _, _ in (target, [.removePreviousFile]) })
                    .serializingDecodable(HTTPBinResponse.self).value
                #expect(decoded.args == ["a": "1"])
                let text = try await AF.download(server.url("/encoding/utf8"), to: { _, _ in (target, [.removePreviousFile]) })
                    .serializingString().value
                #expect(text.contains("Zwölf Boxkämpfer") && text.contains("🚀"))
                let json = try await completion { done in
                    AF.download(server.url("/json"), to: { _, _ in (target, [.removePreviousFile]) })
                        .responseJSON(queue: testQueue) { done(UncheckedSendable($0)) }
                }
                #expect((json.value.value as? [String: Any])?["slideshow"] != nil)
                let emptyFile = await AF.download(server.url("/status/200"), to: { _, _ in (target, [.removePreviousFile]) })
                    .serializingData().response
                #expect(emptyFile.error?.isResponseSerializationError == true)
            }
        }
    }

    @Test func progressReachesTheWholeBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let updates = OrderRecorder()
            let request = AF.download(server.url("/bytes/500000?seed=1"))
                .downloadProgress(queue: testQueue) { progress in
                    updates.append("\(progress.completedUnitCount)/\(progress.totalUnitCount)")
                }
            let response = await request.serializingDownloadedFileURL().response
            if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            // Handlers run on the queue in order; the last one was enqueued before the response.
            await withCheckedContinuation { continuation in testQueue.async { continuation.resume() } }
            #expect(updates.values.last == "500000/500000")
            #expect(request.downloadProgress.fractionCompleted == 1)
        }
    }

    /// A handler whose queue is busy gets the latest counts once it runs, not one call per chunk.
    @Test func progressUpdatesWaitingForABusyQueueAreCoalesced() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let queue = DispatchQueue(label: "tests.progress.busy")
            queue.suspend()
            let calls = OrderRecorder()
            let response = await AF.request(server.url("/bytes/1000000?seed=2"))
                .downloadProgress(queue: queue) { calls.append("\($0.completedUnitCount)/\($0.totalUnitCount)") }
                .serializingData().response
            #expect(response.value?.count == 1_000_000)
            queue.resume()
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            #expect(calls.values == ["1000000/1000000"])
        }
    }

    @Test func aRetriedDownloadLeavesNoFileOfItsFirstAttempt() async throws {
        final class FileURLMonitor: EventMonitor, @unchecked Sendable {
            let queue = DispatchQueue(label: "tests.monitor")
            private let lock = NSLock()
            private var urls: [URL] = []
            var fileURLs: [URL] { lock.withLock { urls } }
            func request(
                _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, fileURL: URL?,
                withResult result: Request.ValidationResult
            ) {
                // Runs on the monitor's queue, after the request moved on: the file may be gone already.
                if let fileURL { lock.withLock { urls.append(fileURL) } }
            }
        }
        try await HTTPBinServer.withServer { server async throws in
            let monitor = FileURLMonitor()
            let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
            let session = Session(interceptor: Interceptor(retriers: [retrier]), eventMonitors: [monitor])
            let request = session.download(server.url("/status/500")).validate(statusCode: [200])
            let response = await request.serializingDownloadedFileURL().response
            await withCheckedContinuation { continuation in monitor.queue.async { continuation.resume() } }
            #expect(request.retryCount == 1)
            #expect(response.error?.responseCode == 500)
            let files = monitor.fileURLs
            #expect(files.count == 2)
            #expect(files.first.map { FileManager.default.fileExists(atPath: $0.path) } == false)
            #expect(files.last.map { FileManager.default.fileExists(atPath: $0.path) } == true)
            if let last = files.last { try? FileManager.default.removeItem(at: last) }
        }
    }

    @Test func cancellingADownloadReportsExplicitlyCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = AF.download(server.url("/hold/never"))
            let task = request.serializingDownloadedFileURL()
            request.cancel()
            let response = await task.response
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(response.fileURL == nil)
        }
    }

    @Test func debugDescriptionNamesTheFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let target = directory.appendingPathComponent("b.bin")
                let response = await AF.download(server.url("/bytes/4"), to: { _, _ in (target, []) }).serializingData().response
                #expect(response.debugDescription.contains("[File URL]: \(target.path)"))
                #expect(response.debugDescription.contains("[Resume Data]: None"))
                #expect(response.debugDescription.hasPrefix("[Request]: GET \(server.url("/bytes/4"))"))
            }
        }
    }
}

@Suite struct UploadTests {
    @Test func dataIsPostedAsTheBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let data = Data("data".utf8)
            let response = try await AF.upload(data, to: server.url("/post")).serializingDecodable(HTTPBinResponse.self).value
            #expect(response.data == "data")
            #expect(response.headers["Content-Length"] == "4")
        }
    }

    @Test func filesStreamFromDiskWithProgress() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let fileURL = directory.appendingPathComponent("body.bin")
                let body = seededBytes(3_000_000, seed: 11)
                try body.write(to: fileURL)
                let progress = OrderRecorder()
                let request = AF.upload(fileURL, to: server.url("/upload"), method: .put)
                    .uploadProgress(queue: testQueue) { progress.append("\($0.completedUnitCount)/\($0.totalUnitCount)") }
                let summary = try await request.serializingDecodable(UploadSummary.self).value
                #expect(summary == UploadSummary(bytes: 3_000_000, sha256: sha256Hex(body)))
                await withCheckedContinuation { continuation in testQueue.async { continuation.resume() } }
                #expect(progress.values.last == "3000000/3000000")
                #expect(FileManager.default.fileExists(atPath: fileURL.path))
            }
        }
    }

    @Test func streamsAreSentChunked() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let body = seededBytes(200_000, seed: 2)
            let summary = try await AF.upload(InputStream(data: body), to: server.url("/upload"))
                .serializingDecodable(UploadSummary.self).value
            #expect(summary == UploadSummary(bytes: 200_000, sha256: sha256Hex(body)))
        }
    }

    @Test func uploadsWithARequestKeepItsMethodAndHeaders() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let urlRequest = try URLRequest(url: server.url("/anything"), method: .patch, headers: [.contentType("text/plain")])
            let echoed = try await AF.upload(Data("abc".utf8), with: urlRequest).serializingData().value
            let object = try JSONSerialization.jsonObject(with: echoed) as? [String: Any]
            #expect(object?["method"] as? String == "PATCH")
            #expect(object?["data"] as? String == "abc")
            #expect((object?["headers"] as? [String: String])?["Content-Type"] == "text/plain")
        }
    }

    /// `/status/500` answers without reading the body: the upload ends with that answer, a retry
    /// sends the file again from the start, and the session goes on working.
    @Test func anAnswerBeforeTheBodyIsSentEndsTheUpload() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { directory in
                let fileURL = directory.appendingPathComponent("big.bin")
                let body = seededBytes(8_000_000, seed: 1)
                try body.write(to: fileURL)
                let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
                let session = Session(interceptor: Interceptor(retriers: [retrier]))
                let request = session.upload(fileURL, to: server.url("/status/500")).validate()
                let response = await request.serializingData().response
                #expect(request.retryCount == 1)
                #expect(response.response?.statusCode == 500)
                #expect(response.error?.responseCode == 500)
                let summary = try await session.upload(fileURL, to: server.url("/upload")).serializingDecodable(UploadSummary.self).value
                #expect(summary == UploadSummary(bytes: body.count, sha256: sha256Hex(body)))
            }
        }
    }

    /// URLSession's rules apply to upload bodies too: 302 turns the POST into a GET without the
    /// body, 307 sends the body again.
    @Test(arguments: [(302, "GET", ""), (307, "POST", "payload")])
    func redirectedUploadsFollowURLSessionsRules(code: Int, method: String, body: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/redirect-to?url=%2Fanything&status_code=\(code)")
            let echoed = try await AF.upload(Data("payload".utf8), to: url).serializingData().value
            let object = try JSONSerialization.jsonObject(with: echoed) as? [String: Any]
            #expect(object?["method"] as? String == method)
            #expect(object?["data"] as? String == body)
        }
    }

    @Test func aMissingFileIsAnErrorNotACrash() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let missing = URL(fileURLWithPath: "/nonexistent/alamofire-nio/\(UUID().uuidString)")
            let response = await AF.upload(missing, to: server.url("/post")).serializingData().response
            #expect((response.error?.underlyingError as? URLError)?.code == .fileDoesNotExist)
        }
    }

    @Test func uploadableFailuresAreReported() async throws {
        struct Broken: UploadConvertible {
            struct Failure: Error {}
            func asURLRequest() throws -> URLRequest { URLRequest(url: URL(string: "http://127.0.0.1:1/")!) }
            func createUploadable() throws -> UploadRequest.Uploadable { throw Failure() }
        }
        let response = await AF.upload(Broken()).serializingData().response
        guard case .createUploadableFailed(let error)? = response.error else {
            Issue.record("expected createUploadableFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is Broken.Failure)
    }
}
