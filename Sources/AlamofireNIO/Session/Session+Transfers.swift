public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Downloads

extension Session {
    func download(
        _ downloadable: DownloadRequest.Downloadable, interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?,
        to destination: DownloadRequest.Destination?
    ) -> DownloadRequest {
        prepare(
            DownloadRequest(
                downloadable: downloadable, underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, destination: destination,
                fileManager: delegate.fileManager, session: self))
    }
}

// MARK: Uploads

extension Session {
    /// Creates an `UploadRequest` whose request and body both come from `convertible`.
    public func upload(
        _ convertible: any UploadConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        prepare(
            UploadRequest(
                convertible: convertible, underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager, session: self))
    }

    /// A request with a URL, method and headers, and no parameters (uploads and streams).
    func parameterlessRequest(
        to url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, requestModifier: RequestModifier?
    ) -> any URLRequestConvertible {
        RequestEncodableConvertible<Empty>(
            url: url, method: method, parameters: nil, encoder: URLEncodedFormParameterEncoder.default, headers: headers,
            requestModifier: requestModifier)
    }

    func upload(
        _ uploadable: UploadRequest.Uploadable, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?, fileManager: FileManager
    ) -> UploadRequest {
        upload(
            ParameterlessUploadConvertible(request: convertible, uploadable: uploadable), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}
