import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `DataRequest` subclass which handles `Data` upload from memory, file, or stream, with upload progress.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// Type describing the origin of the upload, whether `Data`, file, or stream.
    public enum Uploadable: @unchecked Sendable {
        /// Upload from the provided `Data` value.
        case data(Data)
        /// Upload from the provided file `URL`, as well as a `Bool` determining whether the source file should be
        /// automatically removed once uploaded.
        case file(URL, shouldRemove: Bool)
        /// Upload from the provided `InputStream` (sent chunked, once: a retry after it began sending fails).
        case stream(InputStream)
    }

    /// The `UploadableConvertible` value used to produce the `Uploadable` value for this instance.
    public let upload: any UploadableConvertible
    /// `FileManager` used to perform cleanup tasks, including the removal of multipart form encoded payloads written
    /// to disk.
    public let fileManager: FileManager
    /// `Uploadable` value used by the instance, made anew for each attempt.
    public var uploadable: Uploadable? { uploadableState.withLock { $0.uploadable } }
    private let uploadableState = Mutex<(uploadable: Uploadable?, isCleanedUp: Bool)>((nil, false))

    init(
        convertible: any UploadConvertible, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?,
        fileManager: FileManager, session: Session
    ) {
        self.upload = convertible
        self.fileManager = fileManager
        super.init(
            convertible: convertible, underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, session: session)
    }

    /// Makes the body for this attempt, as Alamofire does once the request is adapted.
    override func prepareTask() -> AFError? {
        do {
            let made = try upload.createUploadable()
            let (replaced, isCleanedUp) = uploadableState.withLock { state in
                defer { if !state.isCleanedUp { state.uploadable = made } }
                return (state.uploadable, state.isCleanedUp)
            }
            // A file made while a cancel finished the request (a large form written off the root
            // queue) would outlive it: nothing is left to remove it.
            if isCleanedUp {
                if case .file(let url, shouldRemove: true) = made { try? fileManager.removeItem(at: url) }
                return .explicitlyCancelled
            }
            // A retry that made a new file removes the last attempt's.
            if case .file(let old, shouldRemove: true) = replaced, case .file(let new, _) = made, old != new {
                try? fileManager.removeItem(at: old)
            }
            monitor()?.request(self, didCreateUploadable: made)
            return nil
        } catch {
            let failure = error.asAFError(or: .createUploadableFailed(error: error))
            monitor()?.request(self, didFailToCreateUploadableWithError: failure)
            return failure
        }
    }

    override func loadingBody() -> RequestBody? {
        switch uploadable {
        case .data(let data): .data(data)
        case .file(let url, _): .file(url)
        case .stream(let stream): .stream(stream)
        case nil: nil
        }
    }

    override func makeSessionTask(for task: LoadingTask) -> URLSessionTask { LoadingUploadTask(task, request: self) }

    /// A streamed upload's task asks for its stream as it starts, as URLSession's does.
    override func willStartLoadingTask(_ task: LoadingTask) {
        guard case .stream(let stream) = uploadable else { return }
        session?.delegate.tell(self, about: task, .taskNeedsNewBodyStream) { $0.urlSession($1, taskNeedsNewBodyStream: $2) }
        let provided = UncheckedSendable(stream)
        monitor()?.performEvent(.uploadRequestDidProvideInputStream) { $0.request(self, didProvideInputStream: provided.value) }
    }

    /// Once serialization has ended, a file made for this upload (`shouldRemove`) is removed.
    override func cleanup() {
        let made = uploadableState.withLock { state in
            state.isCleanedUp = true
            return state.uploadable
        }
        if case .file(let url, shouldRemove: true) = made { try? fileManager.removeItem(at: url) }
        super.cleanup()
    }
}

/// A type that can produce an `UploadRequest.Uploadable` value.
public protocol UploadableConvertible: Sendable {
    /// Produces an `UploadRequest.Uploadable` value from the instance.
    ///
    /// - Returns: The `UploadRequest.Uploadable`.
    /// - Throws:  Any `Error` produced during creation.
    func createUploadable() throws -> UploadRequest.Uploadable
}

extension UploadRequest.Uploadable: UploadableConvertible {
    /// Returns the uploadable itself.
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}

/// A type that can be converted to an upload, whether from an `UploadRequest.Uploadable` or `URLRequestConvertible`.
public protocol UploadConvertible: UploadableConvertible & URLRequestConvertible {}

/// An upload's request (a URL, method and headers) with its body source.
struct ParameterlessUploadConvertible: UploadConvertible {
    let request: any URLRequestConvertible
    let uploadable: any UploadableConvertible

    func asURLRequest() throws -> URLRequest { try request.asURLRequest() }
    func createUploadable() throws -> UploadRequest.Uploadable { try uploadable.createUploadable() }
}
