public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Downloads

extension Session {
    /// A download whose parameters are encoded by an `Encodable`-aware ``ParameterEncoder``.
    /// - Parameter destination: where to move the file; nil leaves it at its temporary URL.
    public func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, to: destination)
    }

    /// A download whose ``Parameters`` dictionary is encoded by a ``ParameterEncoding``.
    public func download(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, to: destination)
    }

    /// A download of a `URLRequestConvertible`.
    public func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let request = DownloadRequest(
            downloadable: .request(convertible), underlyingQueue: rootQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor.monitors.isEmpty ? nil : eventMonitor, interceptor: interceptor, destination: destination,
            fileManager: .default, session: self)
        perform(request)
        return request
    }
}

// MARK: Uploads

extension Session {
    /// Uploads `data` as the body (POST by default).
    public func upload(
        _ data: Data, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .data(data), to: convertible, method: method, headers: headers, interceptor: interceptor, fileManager: fileManager,
            requestModifier: requestModifier)
    }

    /// Uploads `data` as the body of the request `convertible` makes.
    public func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(.data(data), with: convertible, interceptor: interceptor, fileManager: fileManager)
    }

    /// Uploads the file at `fileURL`, streamed from disk (POST by default).
    public func upload(
        _ fileURL: URL, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .file(fileURL, shouldRemove: false), to: convertible, method: method, headers: headers, interceptor: interceptor,
            fileManager: fileManager, requestModifier: requestModifier)
    }

    /// Uploads the file at `fileURL` as the body of the request `convertible` makes.
    public func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(.file(fileURL, shouldRemove: false), with: convertible, interceptor: interceptor, fileManager: fileManager)
    }

    /// Uploads what `stream` yields, sent chunked (POST by default).
    public func upload(
        _ stream: InputStream, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .stream(stream), to: convertible, method: method, headers: headers, interceptor: interceptor, fileManager: fileManager,
            requestModifier: requestModifier)
    }

    /// Uploads what `stream` yields as the body of the request `convertible` makes.
    public func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(.stream(stream), with: convertible, interceptor: interceptor, fileManager: fileManager)
    }

    /// An upload whose request and body both come from `convertible`.
    public func upload(
        _ convertible: any UploadConvertible, interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        let request = UploadRequest(
            convertible: convertible, underlyingQueue: rootQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor.monitors.isEmpty ? nil : eventMonitor, interceptor: interceptor, fileManager: fileManager,
            session: self)
        perform(request)
        return request
    }

    private func upload(
        _ uploadable: UploadRequest.Uploadable, to url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        interceptor: (any RequestInterceptor)?, fileManager: FileManager, requestModifier: RequestModifier?
    ) -> UploadRequest {
        // The request builder of `request(_:method:parameters:encoder:…)`, with no parameters.
        let convertible = RequestEncodableConvertible<Empty>(
            url: url, method: method, parameters: nil, encoder: URLEncodedFormParameterEncoder.default, headers: headers,
            requestModifier: requestModifier)
        return upload(uploadable, with: convertible, interceptor: interceptor, fileManager: fileManager)
    }

    private func upload(
        _ uploadable: UploadRequest.Uploadable, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)?,
        fileManager: FileManager
    ) -> UploadRequest {
        upload(
            ParameterlessUploadConvertible(request: convertible, uploadable: uploadable), interceptor: interceptor, fileManager: fileManager
        )
    }
}
