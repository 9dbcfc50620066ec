import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``DataRequest`` whose body comes from `Data`, a file or an `InputStream`, with upload progress.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// Where an upload's body comes from.
    public enum Uploadable: @unchecked Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A file, streamed from disk; removed once the request ends when `shouldRemove` is set.
        case file(URL, shouldRemove: Bool)
        /// A stream, read once: a request with a stream body is not retried after it started sending.
        case stream(InputStream)
    }

    /// What the request and its body are made from.
    public let upload: any UploadConvertible
    /// Used to remove a file the request made for its own body.
    public let fileManager: FileManager
    /// The body source, once made.
    public var uploadable: Uploadable? { uploadableState.withLock { $0 } }
    private let uploadableState = Mutex<Uploadable?>(nil)

    init(
        convertible: any UploadConvertible, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?, fileManager: FileManager, session: Session
    ) {
        self.upload = convertible
        self.fileManager = fileManager
        super.init(
            convertible: convertible, underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        let request = try upload.asURLRequest()
        if uploadable == nil {
            do {
                let made = try upload.createUploadable()
                uploadableState.withLock { $0 = made }
            } catch {
                throw error.asAFError(or: .createUploadableFailed(error: error))
            }
        }
        return request
    }

    override func loadingBody() -> RequestBody? {
        switch uploadable {
        case .data(let data): .data(data)
        case .file(let url, _): .file(url)
        case .stream(let stream): .stream(stream)
        case nil: nil
        }
    }

    override func finish() {
        if case .file(let url, shouldRemove: true) = uploadable { try? fileManager.removeItem(at: url) }
        super.finish()
    }
}

/// Makes an upload's body source.
public protocol UploadableConvertible: Sendable {
    /// The body source; throwing fails the request with ``AFError/createUploadableFailed(error:)``.
    func createUploadable() throws -> UploadRequest.Uploadable
}

extension UploadRequest.Uploadable: UploadableConvertible {
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}

/// Makes both an upload's `URLRequest` and its body source.
public protocol UploadConvertible: UploadableConvertible & URLRequestConvertible {}

/// An upload's request (a URL, method and headers) with its body source.
struct ParameterlessUploadConvertible: UploadConvertible {
    let request: any URLRequestConvertible
    let uploadable: any UploadableConvertible

    func asURLRequest() throws -> URLRequest { try request.asURLRequest() }
    func createUploadable() throws -> UploadRequest.Uploadable { try uploadable.createUploadable() }
}
