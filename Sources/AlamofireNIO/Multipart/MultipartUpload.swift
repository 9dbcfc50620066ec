import AFSynchronization
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body of a multipart upload, made once: a form whose parts' contents add up to less than
/// `encodingMemoryThreshold` bytes is encoded in memory; a larger one is written to a temporary
/// file (`org.alamofire.manager/multipart.form.data/<UUID>` in the file manager's temporary
/// directory), streamed from disk and removed when the request is done, as in Alamofire. A retry
/// sends the same body again, since the form's streams can be read only once.
final class MultipartUpload: UploadConvertible {
    let encodingMemoryThreshold: UInt64
    let request: any URLRequestConvertible
    let multipartFormData: MultipartFormData
    let fileManager: FileManager
    private let result = Mutex<Result<UploadRequest.Uploadable, any Error>?>(nil)

    init(
        encodingMemoryThreshold: UInt64, request: any URLRequestConvertible, multipartFormData: MultipartFormData,
        fileManager: FileManager
    ) {
        self.encodingMemoryThreshold = encodingMemoryThreshold
        self.request = request
        self.multipartFormData = multipartFormData
        self.fileManager = fileManager
    }

    func asURLRequest() throws -> URLRequest {
        var urlRequest = try request.asURLRequest()
        urlRequest.headers.add(.contentType(multipartFormData.contentType))
        return urlRequest
    }

    func createUploadable() throws -> UploadRequest.Uploadable {
        // Built under the lock: a second attempt waits for the first build and reuses it.
        try result.withLock { result in
            if let result { return result }
            let built = Result { try build() }
            result = built
            return built
        }.get()
    }

    private func build() throws -> UploadRequest.Uploadable {
        if multipartFormData.contentLength < encodingMemoryThreshold {
            return .data(try multipartFormData.encode())
        }
        let directoryURL = fileManager.temporaryDirectory.appendingPathComponent("org.alamofire.manager/multipart.form.data")
        let fileURL = directoryURL.appendingPathComponent(UUID().uuidString)
        try fileManager.createDirectory(at: directoryURL, withIntermediateDirectories: true, attributes: nil)
        do {
            try multipartFormData.writeEncodedData(to: fileURL)
        } catch {
            try? fileManager.removeItem(at: fileURL)
            throw error
        }
        return .file(fileURL, shouldRemove: true)
    }
}
