import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session.upload(multipartFormData:...)` against the server, which parses the multipart body:
/// in memory below the threshold, through a temporary file above it, and Alamofire's errors.
@Suite struct MultipartUploadTests {
    struct Echo: Decodable, Sendable {
        let form: [String: String]
        let files: [String: String]
        let headers: [String: String]
    }

    static func temporaryFile(_ contents: String, extension pathExtension: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString).\(pathExtension)")
        try Data(contents.utf8).write(to: url)
        return url
    }

    @Test func aSmallFormIsSentFromMemory() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let file = try Self.temporaryFile("{\"k\":1}", extension: "json")
            defer { try? FileManager.default.removeItem(at: file) }
            let upload = keepAlive(Session()).upload(
                multipartFormData: { form in
                    form.append(Data("Ada".utf8), withName: "name")
                    form.append(file, withName: "document")
                }, to: server.url("/post"))
            let echo = try await withTimeout { try await upload.serializingDecodable(Echo.self).value }
            #expect(echo.form == ["name": "Ada"])
            #expect(echo.files == ["document": "{\"k\":1}"])
            let contentType = try #require(echo.headers["Content-Type"])
            #expect(contentType.hasPrefix("multipart/form-data; boundary=alamofire.boundary."))
            guard case .data(let body) = upload.uploadable else { throw AFError.explicitlyCancelled }
            #expect(echo.headers["Content-Length"] == String(body.count))
        }
    }

    /// At or above the threshold the form goes through a file in `org.alamofire.manager/multipart.form.data`,
    /// which is gone once the request is.
    @Test func aLargeFormIsStreamedFromATemporaryFileThenRemoved() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let form = MultipartFormData()
            form.append(Data(String(repeating: "x", count: 5000).utf8), withName: "big", fileName: "big.txt", mimeType: "text/plain")
            form.append(Data("1".utf8), withName: "small")
            let upload = keepAlive(Session()).upload(multipartFormData: form, to: server.url("/post"), usingThreshold: 1000)
            let echo = try await withTimeout { try await upload.serializingDecodable(Echo.self).value }
            #expect(echo.form == ["small": "1"])
            #expect(echo.files == ["big": String(repeating: "x", count: 5000)])
            guard case .file(let file, shouldRemove: true) = upload.uploadable else {
                Issue.record("expected a file upload, got \(String(describing: upload.uploadable))")
                return
            }
            #expect(file.deletingLastPathComponent().path.hasSuffix("org.alamofire.manager/multipart.form.data"))
            try await untilFinished(upload)
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }

    /// A retry sends the same body again: the form's streams are read once.
    @Test func aRetriedUploadSendsTheSameBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let attempts = Collected<Int>()
            let retrier = Retrier { request, _, _, completion in
                attempts.append(request.retryCount)
                completion(request.retryCount == 0 ? .retry : .doNotRetry)
            }
            let upload = keepAlive(Session()).upload(
                multipartFormData: { form in
                    form.append(
                        InputStream(data: Data("streamed".utf8)), withLength: 8, name: "s", fileName: "s.txt", mimeType: "text/plain")
                }, to: server.url("/post"), interceptor: retrier
            ).validate { _, _, _ in
                // The first attempt fails validation, so the retrier is asked.
                attempts.values.isEmpty ? .failure(AFError.explicitlyCancelled) : .success(())
            }
            let echo = try await withTimeout { try await upload.serializingDecodable(Echo.self).value }
            #expect(attempts.values == [0])
            #expect(upload.retryCount == 1)
            #expect(echo.files == ["s": "streamed"])
        }
    }

    @Test func aMissingFileFailsWithAlamofiresReason() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString).txt")
        let response = try await withTimeout {
            await keepAlive(Session()).upload(multipartFormData: { $0.append(missing, withName: "file") }, to: "http://127.0.0.1:1/post")
                .serializingData().response
        }
        let error = try #require(response.error)
        guard case .multipartEncodingFailed(.bodyPartFileNotReachableWithError(let url, _)) = error else { throw error }
        #expect(url == missing)
        #expect(response.response == nil)
    }
}

/// A part's stream that reports when it is first read and waits for `gate` before giving its bytes,
/// optionally asking its form for its length from inside `read` (as a stream may call back).
final class GatedStream: InputStream {
    let started = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    private let bytes: [UInt8]
    private var offset = 0
    private(set) var isClosed = false
    weak var form: MultipartFormData?

    init(_ text: String) {
        bytes = Array(text.utf8)
        super.init(data: Data())
    }

    override func open() {}
    override func close() { isClosed = true }
    override var hasBytesAvailable: Bool { offset < bytes.count }
    override var streamStatus: Stream.Status { isClosed ? .closed : .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        if offset == 0 {
            _ = form?.contentLength
            started.signal()
            _ = gate.wait(timeout: .now() + 30)
        }
        let count = min(len, bytes.count - offset)
        for index in 0..<count { buffer[index] = bytes[offset + index] }
        offset += count
        return count
    }
}

/// A `FileManager` whose temporary directory is a new folder of its own.
final class ScopedFileManager: FileManager, @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("scoped-\(UUID().uuidString)")
    override var temporaryDirectory: URL { root }
}

extension MultipartUploadTests {
    /// Encoding reads the parts outside the form's lock, so a stream may call back into its form.
    @Test func aStreamMayAskItsFormWhileBeingRead() async throws {
        let form = MultipartFormData(boundary: "b")
        let stream = GatedStream("abc")
        stream.form = form
        form.append(stream, withLength: 3, name: "s", fileName: "s.txt", mimeType: "text/plain")
        stream.gate.signal()
        let shared = UncheckedSendable(form)
        let encoded = try await withTimeout(seconds: 5) {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try shared.value.encode() }) }
            }
        }
        #expect(String(decoding: encoded, as: UTF8.self).contains("\r\n\r\nabc\r\n--b--\r\n"))
    }

    /// A cancel that finishes the request while a large form is being written (set-up off the root
    /// queue, on a request queue of its own) leaves no temporary file behind.
    @Test func aFormWrittenWhileTheRequestIsCancelledLeavesNoFile() async throws {
        // A temporary directory of the test's own: other tests write multipart files meanwhile.
        let fileManager = ScopedFileManager()
        defer { try? FileManager.default.removeItem(at: fileManager.root) }
        let directory = fileManager.temporaryDirectory.appendingPathComponent("org.alamofire.manager/multipart.form.data")
        let stream = GatedStream("gated")
        let session = Session(requestQueue: DispatchQueue(label: "tests.separate-request-queue"))
        let upload = session.upload(
            multipartFormData: { $0.append(stream, withLength: 5, name: "s", fileName: "s.txt", mimeType: "text/plain") },
            to: "http://127.0.0.1:1/post", usingThreshold: 0, fileManager: fileManager)
        upload.resume()
        let started = UncheckedSendable(stream.started)
        try await withTimeout(seconds: 5) {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    _ = started.value.wait(timeout: .now() + 30); continuation.resume()
                }
            }
        }
        upload.cancel()
        try await untilFinished(upload)
        stream.gate.signal()
        // The upload's set-up, blocked on the stream on its own queue, has returned once the queue runs this.
        try await withTimeout(seconds: 5) {
            await withCheckedContinuation { continuation in session.requestQueue.async { continuation.resume() } }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
        #expect(upload.error?.isExplicitlyCancelledError == true)
    }
}
