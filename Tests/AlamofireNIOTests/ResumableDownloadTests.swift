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

/// A file manager whose temporary directory is one test's own, so partial files can be counted.
final class DownloadDirectoryFileManager: FileManager, @unchecked Sendable {
    let directory: URL

    init(directory: URL) {
        self.directory = directory
        super.init()
    }

    override var temporaryDirectory: URL { directory }

    /// The files in the directory now.
    var files: [String] { ((try? contentsOfDirectory(atPath: directory.path)) ?? []).sorted() }
}

/// What `/range/n` serves: the byte at offset i is the (i % 26)th letter.
func rangeBody(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
}

/// Resume data as a JSON object, to read or change a field.
func resumeDataFields(_ data: Data?) throws -> [String: Any] {
    let data = try #require(data)
    return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
}

func changingResumeData(_ data: Data?, _ change: (inout [String: Any]) -> Void) throws -> Data {
    var fields = try resumeDataFields(data)
    change(&fields)
    return try JSONSerialization.data(withJSONObject: fields)
}

@Suite struct ResumableDownloadTests {
    /// A session writing its downloads into a directory of the test's own.
    func withScopedSession<T>(
        interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = [],
        _ body: (Session, DownloadDirectoryFileManager) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let fileManager = DownloadDirectoryFileManager(directory: directory)
            let session = Session(delegate: SessionDelegate(fileManager: fileManager), interceptor: interceptor, eventMonitors: monitors)
            return try await body(session, fileManager)
        }
    }

    /// A `/range` body of `length` bytes in chunks of 1,000, held at the gate ``cut`` after `offset`
    /// bytes (`query` adds `&`-led parameters).
    func heldRange(_ server: HTTPBinServer, _ length: Int, at offset: Int64, _ query: String = "") -> URL {
        server.url("/range/\(length)?chunk_size=1000&hold=\(Self.cut)&hold_at=\(offset)\(query)")
    }

    /// The gate ``heldRange(_:_:at:_:)`` bodies wait at until ``cancelledDownload(_:_:_:after:)`` opens it.
    static let cut = "cut"

    /// Downloads `url` (a ``heldRange(_:_:at:_:)``), cancels it by producing resume data once `offset`
    /// bytes are written, then opens the gate for the requests that follow.
    func cancelledDownload(
        _ session: Session, _ server: HTTPBinServer, _ url: URL, after offset: Int64
    ) async throws -> (DownloadRequest, Data?) {
        defer { server.release(Self.cut) }
        let request = session.download(url)
        let data = try await withTimeout(seconds: 20) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                let waiting = Mutex<CheckedContinuation<Data?, Never>?>(continuation)
                request.downloadProgress { progress in
                    guard progress.completedUnitCount >= offset else { return }
                    request.cancel(byProducingResumeData: { data in waiting.withLock { $0.take() }?.resume(returning: data) })
                }
                request.resume()
            }
        }
        return (request, data)
    }

    @Test(arguments: [2_000, 50_000, 80_000] as [Int64])
    func aCancelledDownloadContinuesWhereItStopped(offset: Int64) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            try await withScopedSession(monitors: [monitor]) { session, fileManager in
                // The server holds the body after `offset` bytes, so the cancel always comes before its end
                // (a cancel after the end produces no resume data).
                let url = heldRange(server, 100_000, at: offset)
                let (cancelled, resumeData) = try await cancelledDownload(session, server, url, after: offset)
                let response = await cancelled.serializingData().response
                try await untilFinished(cancelled)
                #expect(response.error?.isExplicitlyCancelledError == true)
                #expect(response.resumeData == resumeData)
                #expect(cancelled.resumeData == resumeData)
                let fields = try resumeDataFields(resumeData)
                let kept = try #require(fields["bytesReceived"] as? Int)
                // Progress counts bytes written to the file, all of which are kept: every byte sent.
                #expect(kept == offset)
                #expect(fields["version"] as? Int == 1)
                #expect(fields["entityTag"] as? String == "\"range100000\"")
                let name = try #require(fields["temporaryFileName"] as? String)
                #expect(fileManager.files == [name])

                let fractions = Mutex<[Int64]>([])
                let resumed = session.download(resumingWith: try #require(resumeData))
                    .downloadProgress { progress in fractions.withLock { $0.append(progress.completedUnitCount) } }
                let final = await resumed.serializingData().response
                try await untilFinished(resumed)
                #expect(final.response?.statusCode == 206)
                let body = try #require(final.value)
                #expect(sha256Hex(body) == sha256Hex(rangeBody(100_000)))
                // Progress goes on from the bytes kept. Updates that arrive while one is still queued for the
                // handler are delivered as the newest, so the first seen may already include the next chunk.
                let counts = fractions.withLock { $0 }
                let first = try #require(counts.first)
                #expect(first >= Int64(kept))
                #expect(counts == counts.sorted())
                #expect(counts.last == 100_000)
                #expect(resumed.downloadProgress.totalUnitCount == 100_000)
                // As with Alamofire, no URLRequest is made for resume data.
                #expect(resumed.request == nil)
                #expect(await monitor.events.contains("downloadTaskDidResumeAtOffset"))
                try? FileManager.default.removeItem(at: try #require(final.fileURL))
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    /// Alamofire 5.12's `task(forResumeData:using:)`: an unstarted download task for the resume data's URL.
    @Test func aTaskForResumeDataIsAnUnstartedDownloadTask() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, _ in
                let url = heldRange(server, 100_000, at: 10_000)
                let (cancelled, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                let task = cancelled.task(forResumeData: try #require(resumeData), using: session.session)
                #expect(task is URLSessionDownloadTask)
                #expect(task.state == .suspended)
                #expect(task.originalRequest?.url == url)
                let unreadable = cancelled.task(forResumeData: Data("not resume data".utf8), using: session.session)
                #expect(unreadable is URLSessionDownloadTask)
                #expect(unreadable.state == .suspended)
                #expect(unreadable.originalRequest?.url?.absoluteString == "about:blank")
                #expect(task.taskIdentifier != unreadable.taskIdentifier)
            }
        }
    }

    @Test func aValidatorByDateContinuesToo() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, _ in
                let url = heldRange(server, 60_000, at: 20_000, "&etag=none&last_modified=1")
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 20_000)
                let fields = try resumeDataFields(resumeData)
                #expect(fields["entityTag"] == nil)
                #expect(fields["lastModified"] as? String == "Wed, 21 Oct 2026 07:28:00 GMT")
                let final = await session.download(resumingWith: try #require(resumeData)).serializingData().response
                #expect(final.response?.statusCode == 206)
                #expect(final.value == rangeBody(60_000))
            }
        }
    }

    @Test func aChangedValidatorStartsOver() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                // The entity the bytes came from is not the server's any more: it answers If-Range with the whole body.
                let stale = try changingResumeData(resumeData) { $0["entityTag"] = "\"an older one\"" }
                let final = await session.download(resumingWith: stale).serializingData().response
                #expect(final.response?.statusCode == 200)
                #expect(final.value == rangeBody(30_000))
                #expect(final.metrics?.transactionMetrics.count == 1)
                try? FileManager.default.removeItem(at: try #require(final.fileURL))
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    @Test func aRangeForAnotherEntityIsDroppedAndTheWholeBodyAskedFor() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, _ in
                // A server that ignores If-Range answers with a range of its new entity: the client must not append it.
                let url = heldRange(server, 30_000, at: 10_000, "&ignore_if_range=1")
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                let stale = try changingResumeData(resumeData) { $0["entityTag"] = "\"an older one\"" }
                let final = await session.download(resumingWith: stale).serializingData().response
                #expect(final.response?.statusCode == 200)
                #expect(final.value == rangeBody(30_000))
                #expect(final.metrics?.transactionMetrics.map { $0.response.map { ($0 as? HTTPURLResponse)?.statusCode } } == [206, 200])
            }
        }
    }

    @Test func anUnsatisfiableRangeStartsOver() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                let fields = try resumeDataFields(resumeData)
                // The partial file says it holds more than the resource now has.
                let file = fileManager.directory.appendingPathComponent(try #require(fields["temporaryFileName"] as? String))
                try Data(repeating: 0x2E, count: 40_000).write(to: file)
                let longer = try changingResumeData(resumeData) { $0["bytesReceived"] = 40_000 }
                let final = await session.download(resumingWith: longer).serializingData().response
                #expect(final.metrics?.transactionMetrics.map { $0.response.map { ($0 as? HTTPURLResponse)?.statusCode } } == [416, 200])
                #expect(final.value == rangeBody(30_000))
            }
        }
    }

    @Test func aMissingPartialFileStartsOver() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                for name in fileManager.files { try FileManager.default.removeItem(at: fileManager.directory.appendingPathComponent(name)) }
                let final = await session.download(resumingWith: try #require(resumeData)).serializingData().response
                #expect(final.response?.statusCode == 200)
                #expect(final.value == rangeBody(30_000))
            }
        }
    }

    @Test func aFailedTransferCarriesResumeDataInItsError() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = server.url("/range/50000?chunk_size=1000&abort_at=21000")
                let request = session.download(url)
                let failed = await request.serializingData().response
                guard case .sessionTaskFailed(let underlying as URLError)? = failed.error else {
                    Issue.record("expected sessionTaskFailed, got \(String(describing: failed.error))")
                    return
                }
                #expect(underlying.code == .networkConnectionLost)
                let resumeData = try #require(failed.error?.downloadResumeData)
                #expect(request.resumeData == resumeData)
                #expect(failed.resumeData == resumeData)
                #expect(try resumeDataFields(resumeData)["bytesReceived"] as? Int == 21_000)
                #expect(fileManager.files.count == 1)
                let final = await session.download(resumingWith: resumeData).serializingData().response
                #expect(final.response?.statusCode == 206)
                #expect(final.value == rangeBody(50_000))
            }
        }
    }

    @Test func aRetriedDownloadContinuesTheFailedAttempt() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0)) { session, fileManager in
                let url = server.url("/range/50000?chunk_size=1000&abort_at=33000")
                let response = await session.download(url).serializingData().response
                #expect(response.value == rangeBody(50_000))
                #expect(response.metrics?.transactionMetrics.map { $0.response.map { ($0 as? HTTPURLResponse)?.statusCode } } == [206])
                #expect(response.resumeData == nil)
                try? FileManager.default.removeItem(at: try #require(response.fileURL))
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    /// An error answer to the range (a 503, say) leaves the partial file as the resume data knows it,
    /// so the same data continues it once the server is back.
    @Test func anErrorAnswerToTheRangeKeepsThePartialFileForTheResumeData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                let partialName = try #require(try resumeDataFields(resumeData)["temporaryFileName"] as? String)
                let partialFile = fileManager.directory.appendingPathComponent(partialName)
                let partial = try Data(contentsOf: partialFile)
                let unavailable = try changingResumeData(resumeData) { $0["url"] = server.url("/status/503").absoluteString }

                let refused = await session.download(resumingWith: unavailable).serializingData().response
                #expect(refused.response?.statusCode == 503)
                let errorFile = try #require(refused.fileURL)
                #expect(errorFile.lastPathComponent != partialName)
                try FileManager.default.removeItem(at: errorFile)
                #expect(fileManager.files == [partialName])
                #expect(try Data(contentsOf: partialFile) == partial)

                let final = await session.download(resumingWith: try #require(resumeData)).serializingData().response
                #expect(final.response?.statusCode == 206)
                #expect(final.value == rangeBody(30_000))
            }
        }
    }

    /// A download made from resume data and cancelled before its task ran leaves the partial file alone:
    /// the resume data the user holds still continues it (Alamofire gives no new resume data then).
    @Test(arguments: [false, true])
    func aDownloadCancelledBeforeItsTaskRunsLeavesThePartialFileToItsResumeData(producingResumeData: Bool) async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                let partial = fileManager.files
                #expect(partial.count == 1)
                let request = session.download(resumingWith: try #require(resumeData))
                if producingResumeData { request.cancel(producingResumeData: true) } else { request.cancel() }
                let response = await request.serializingData().response
                #expect(response.error?.isExplicitlyCancelledError == true)
                #expect(request.resumeData == nil)
                #expect(fileManager.files == partial)
                let final = await session.download(resumingWith: try #require(resumeData)).serializingData().response
                #expect(final.response?.statusCode == 206)
                #expect(final.value == rangeBody(30_000))
            }
        }
    }

    /// The partial file a failed attempt left for its retry goes with the request when no task took it
    /// (the request was cancelled before the retry's task was made).
    @Test func aRetrysPartialFileThatNoTaskTookGoesWithTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 10_000)
                let (_, resumeData) = try await cancelledDownload(session, server, url, after: 10_000)
                #expect(fileManager.files.count == 1)
                // What a failed attempt leaves for the retry (`keepResumptionForRetry`).
                let pending = try DownloadResumption(decoding: try #require(resumeData), temporaryDirectory: fileManager.directory)
                let request = session.download(url)
                request.resumeState.withLock { $0.nextResumption = pending }
                request.cancel()
                let response = await request.serializingData().response
                #expect(response.error?.isExplicitlyCancelledError == true)
                // The partial file goes with the request's clean-up, which may come after its response.
                try await untilFinished(request)
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    /// The failed attempt was redirected: its resume data is for the redirect's target, and the retry,
    /// sent to the original URL, follows the redirect again and continues there.
    @Test func aRetryAfterARedirectContinuesTheFailedAttempt() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0)) { session, fileManager in
                var components = try #require(URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false))
                components.queryItems = [URLQueryItem(name: "url", value: "/range/50000?chunk_size=1000&abort_at=33000")]
                let response = await session.download(try #require(components.url)).serializingData().response
                #expect(response.value == rangeBody(50_000))
                #expect(
                    response.metrics?.transactionMetrics.map { $0.response.map { ($0 as? HTTPURLResponse)?.statusCode } } == [302, 206])
                try? FileManager.default.removeItem(at: try #require(response.fileURL))
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    @Test func aDownloadWithoutValidatorProducesNoResumeDataAndLeavesNoFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 5_000, "&etag=none")
                let (request, resumeData) = try await cancelledDownload(session, server, url, after: 5_000)
                _ = await request.serializingData().response
                #expect(resumeData == nil)
                #expect(request.resumeData == nil)
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    @Test func aPlainCancelRemovesThePartialFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, fileManager in
                let url = heldRange(server, 30_000, at: 5_000)
                let request = session.download(url)
                request.downloadProgress { progress in if progress.completedUnitCount >= 5_000 { request.cancel() } }
                let response = await request.serializingData().response
                #expect(response.error?.isExplicitlyCancelledError == true)
                #expect(response.resumeData == nil)
                #expect(fileManager.files.isEmpty)
            }
        }
    }

    @Test func theResumeDataHandlerIsNotCalledForAFinishedDownload() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withScopedSession { session, _ in
                let request = session.download(server.url("/range/10"))
                let response = await request.serializingData().response
                let called = Mutex(false)
                request.cancel(byProducingResumeData: { _ in called.withLock { $0 = true } })
                #expect(response.value == rangeBody(10))
                #expect(request.resumeData == nil)
                #expect(called.withLock { $0 } == false)
                try? FileManager.default.removeItem(at: try #require(response.fileURL))
            }
        }
    }

    @Test(arguments: [
        (Data("not resume data".utf8), DownloadRequest.ResumeDataError.unreadable),
        (Data(#"{"format":"AlamofireNIO.ResumeData","version":9}"#.utf8), .unsupportedVersion(9)),
        (
            Data(
                #"{"format":"AlamofireNIO.ResumeData","version":1,"url":"ftp://x/y","method":"GET","headers":[],"temporaryFileName":"f","bytesReceived":1,"entityTag":"\"e\""}"#
                    .utf8), .invalidURL("ftp://x/y")
        ),
        (
            Data(
                #"{"format":"AlamofireNIO.ResumeData","version":1,"url":"http://127.0.0.1/y","method":"GET","headers":[],"temporaryFileName":"../../etc/passwd","bytesReceived":1,"entityTag":"\"e\""}"#
                    .utf8), .invalidTemporaryFileName("../../etc/passwd")
        ),
        (
            Data(
                #"{"format":"AlamofireNIO.ResumeData","version":1,"url":"http://127.0.0.1/y","method":"GET","headers":[],"temporaryFileName":"org.alamofire.manager","bytesReceived":1,"entityTag":"\"e\""}"#
                    .utf8), .invalidTemporaryFileName("org.alamofire.manager")
        ),
        (
            Data(
                #"{"format":"AlamofireNIO.ResumeData","version":1,"url":"http://127.0.0.1/y","method":"GET","headers":[],"temporaryFileName":"AlamofireNIO_00000000-0000-0000-0000-000000000000.tmp","bytesReceived":1}"#
                    .utf8), .notResumable
        ),
    ])
    func resumeDataThatCannotBeUsedFailsClearly(data: Data, expected: DownloadRequest.ResumeDataError) async throws {
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let response = await session.download(resumingWith: data).serializingData().response
        guard case .createURLRequestFailed(let error as DownloadRequest.ResumeDataError)? = response.error else {
            Issue.record("expected createURLRequestFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error == expected)
        #expect(response.error?.localizedDescription.contains("resume data") == true)
        #expect(await monitor.events.contains("didFailToCreateURLRequest"))
    }
}
