import Foundation
import HTTPBinServer
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
            let upload = Session().upload(
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
            let upload = Session().upload(multipartFormData: form, to: server.url("/post"), usingThreshold: 1000)
            let echo = try await withTimeout { try await upload.serializingDecodable(Echo.self).value }
            #expect(echo.form == ["small": "1"])
            #expect(echo.files == ["big": String(repeating: "x", count: 5000)])
            guard case .file(let file, shouldRemove: true) = upload.uploadable else {
                Issue.record("expected a file upload, got \(String(describing: upload.uploadable))")
                return
            }
            #expect(file.deletingLastPathComponent().path.hasSuffix("org.alamofire.manager/multipart.form.data"))
            try await DataStreamTests.finished(upload)
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
            let upload = Session().upload(
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
            await Session().upload(multipartFormData: { $0.append(missing, withName: "file") }, to: "http://127.0.0.1:1/post")
                .serializingData().response
        }
        let error = try #require(response.error)
        guard case .multipartEncodingFailed(.bodyPartFileNotReachableWithError(let url, _)) = error else { throw error }
        #expect(url == missing)
        #expect(response.response == nil)
    }
}
