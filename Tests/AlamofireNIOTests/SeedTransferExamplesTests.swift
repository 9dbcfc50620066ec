import AlamofireNIO
import Foundation
import HTTPBinServer
import TestWaits
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The download, upload, metrics and cURL examples of Alamofire's usage guide (seed 000), against
/// the bundled server; files go to a directory of each test's own instead of Documents.
@Suite struct SeedTransferExamplesTests {
    /// The guide's `struct HTTPBinResponse: Decodable { let url: String }`.
    struct URLOnlyResponse: Decodable, Sendable { let url: String }

    @Test func downloadIntoMemoryOfAnImage() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await completion { done in
                AF.download(server.url("/image/png")).responseData(queue: testQueue, completionHandler: done)
            }
            let data = try #require(response.value)
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
        }
    }

    @Test func downloadToADestinationWithOptions() async throws {
        try await HTTPBinServer.withServer { server async throws in
            try await withTemporaryDirectory { documentsURL in
                let destination: DownloadRequest.Destination = { _, _ in
                    let fileURL = documentsURL.appendingPathComponent("images/image.png")
                    return (fileURL, [.removePreviousFile, .createIntermediateDirectories])
                }
                for _ in 0..<2 {
                    let response = try await completion { done in
                        AF.download(server.url("/image/png"), to: destination).response(queue: testQueue, completionHandler: done)
                    }
                    #expect(response.error == nil)
                    #expect(response.fileURL?.path == documentsURL.appendingPathComponent("images/image.png").path)
                    let imagePath = try #require(response.fileURL?.path)
                    #expect(FileManager.default.contents(atPath: imagePath)?.starts(with: [0x89, 0x50]) == true)
                }
            }
        }
    }

    @Test func suggestedDestinationNamesTheFileAfterTheResponse() throws {
        let destination = DownloadRequest.suggestedDownloadDestination(for: .documentDirectory)
        let documents = try #require(FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first)
        let temporary = URL(fileURLWithPath: "/tmp/x.tmp")
        let plain = try #require(
            HTTPURLResponse(url: URL(string: "http://h/image/png")!, statusCode: 200, httpVersion: nil, headerFields: [:]))
        #expect(destination(temporary, plain).destinationURL == documents.appendingPathComponent("png"))
        #expect(destination(temporary, plain).options == [])
        let named = try #require(
            HTTPURLResponse(
                url: URL(string: "http://h/download")!, statusCode: 200, httpVersion: nil,
                headerFields: ["Content-Disposition": "attachment; filename=\"report.pdf\""]))
        #expect(destination(temporary, named).destinationURL == documents.appendingPathComponent("report.pdf"))
    }

    @Test func downloadProgressOnAProgressQueue() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let progressQueue = DispatchQueue(label: "com.alamofire.progressQueue", qos: .utility)
            let fractions = OrderRecorder()
            let response = await AF.download(server.url("/image/png"))
                .downloadProgress(queue: progressQueue) { progress in fractions.append("\(progress.fractionCompleted)") }
                .serializingData().response
            if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            await withCheckedContinuation { continuation in progressQueue.async { continuation.resume() } }
            #expect(fractions.values.last == "1.0")
        }
    }

    /// Without a Content-Length, progress stays at 0 and jumps to 1 at the end.
    @Test func progressWithoutContentLengthJumpsToOne() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let fractions = OrderRecorder()
            let request = AF.request(server.url("/stream-bytes/50000?chunk_size=10000"))
                .downloadProgress(queue: testQueue) { fractions.append("\($0.fractionCompleted)") }
            _ = try await request.serializingData().value
            await withCheckedContinuation { continuation in testQueue.async { continuation.resume() } }
            #expect(fractions.values.dropLast().allSatisfy { $0 == "0.0" })
            #expect(fractions.values.last == "1.0")
            #expect(request.downloadProgress.completedUnitCount == 50000)
        }
    }

    /// The guide's "Resuming a Download": `cancel { data in resumeData = data }`, then
    /// `AF.download(resumingWith:)`. The cancel waits for the first bytes here, since a download
    /// cancelled before its task exists has nothing to resume (in Alamofire too).
    @Test func resumingADownloadFromItsResumeData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let resumeData = try await completion { (done: @escaping @Sendable (Data?) -> Void) in
                // Held after 20,000 bytes until the client leaves: the cancel comes mid-body.
                let download = AF.download(server.url("/range/40000?chunk_size=1000&hold=cut&hold_at=20000"))
                download.downloadProgress { progress in
                    guard progress.completedUnitCount > 0 else { return }
                    download.cancel { data in done(data) }
                }
                download.responseData(queue: testQueue) { _ in }
            }
            let response = try await completion { done in
                AF.download(resumingWith: resumeData!).responseData(queue: testQueue, completionHandler: done)
            }
            #expect(response.value?.count == 40000)
            #expect(response.response?.statusCode == 206)
            if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
        }
    }

    /// Version 3's "Accessing Resume Data for Failed Downloads": a transfer cut short leaves
    /// `download.resumeData`.
    @Test func accessingResumeDataOfAFailedDownload() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let download = AF.download(server.url("/range/40000?chunk_size=1000&abort_at=12000"))
            let response = try await completion { done in download.response(queue: testQueue, completionHandler: done) }
            let resumeData = try #require(download.resumeData)
            #expect(response.resumeData == resumeData)
            #expect(String(data: resumeData, encoding: .utf8)?.contains("\"bytesReceived\":12000") == true)
            let resumed = await AF.download(resumingWith: resumeData).serializingData().response
            #expect(resumed.value?.count == 40000)
            if let fileURL = resumed.fileURL { try? FileManager.default.removeItem(at: fileURL) }
        }
    }

    @Test func uploadingDataAndAFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let data = Data("data".utf8)
            let fromData = try await AF.upload(data, to: server.url("/post")).serializingDecodable(URLOnlyResponse.self).value
            #expect(fromData.url == server.url("/post").absoluteString)
            try await withTemporaryDirectory { directory in
                let fileURL = directory.appendingPathComponent("video.mov")
                try seededBytes(100_000, seed: 4).write(to: fileURL)
                let upload = OrderRecorder()
                let download = OrderRecorder()
                let response = try await completion { done in
                    AF.upload(fileURL, to: server.url("/post"))
                        .uploadProgress(queue: testQueue) { upload.append("\($0.fractionCompleted)") }
                        .downloadProgress(queue: testQueue) { download.append("\($0.fractionCompleted)") }
                        .responseDecodable(of: URLOnlyResponse.self, queue: testQueue, completionHandler: done)
                }
                #expect(response.value?.url == server.url("/post").absoluteString)
                #expect(upload.values.last == "1.0")
                #expect(download.values.last == "1.0")
            }
        }
    }

    @Test func metricsAndCURLOfARequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let curl = OrderRecorder()
            let response = try await completion { done in
                AF.request(server.url("/get"))
                    .cURLDescription(on: testQueue) { curl.append($0) }
                    .responseJSON(queue: testQueue) { done(UncheckedSendableBox($0)) }
            }
            let metrics = try #require(response.value.metrics)
            #expect(metrics.transactionMetrics.count == 1)
            let description = try #require(curl.values.first)
            #expect(description.hasPrefix("$ curl -v \\\n\t-X GET \\\n\t-H \""))
            #expect(description.hasSuffix("\"\(server.url("/get").absoluteString)\""))
            #expect(description.contains("-H \"User-Agent: "))
        }
    }
}
