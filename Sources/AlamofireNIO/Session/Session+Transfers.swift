public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Downloads

extension Session {
    /// Creates a `DownloadRequest` using a `URLRequest` created using the passed components, `RequestInterceptor`, and
    /// `Destination`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                `Parameters` (a.k.a. `[String: Any]`) value to be encoded into the `URLRequest`.
    ///                                `nil` by default.
    ///   - encoding:                  `ParameterEncoding` to be used to encode the `parameters` value into the
    ///                                `URLRequest`. `URLEncoding.default` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default: it stays in the temporary
    ///                                directory.
    /// - Returns:                     The created `DownloadRequest`.
    public func download(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestConvertible(
            url: convertible, method: method, parameters: UncheckedSendable(parameters), encoding: encoding, headers: headers,
            requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequest` created using the passed components, `Encodable` parameters, and
    /// a `RequestInterceptor`.
    ///
    /// - Parameters: as for the `ParameterEncoding` form, with `parameters` an `Encodable` value and `encoder` the
    ///   `ParameterEncoder` that encodes it (`URLEncodedFormParameterEncoder.default` by default).
    /// - Returns: The created `DownloadRequest`.
    public func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        let convertible = RequestEncodableConvertible(
            url: convertible, method: method, parameters: parameters, encoder: encoder, headers: headers, requestModifier: requestModifier)
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequestConvertible` value, a `RequestInterceptor`, and a `Destination`.
    ///
    /// - Parameters:
    ///   - convertible:               `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default.
    /// - Returns:                     The created `DownloadRequest`.
    public func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(.request(convertible), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from the `resumeData` produced from a previously cancelled or failed
    /// `DownloadRequest`, continuing its partial file with `Range` and `If-Range` requests.
    ///
    /// The data must be AlamofireNIO's (see ``DownloadRequest/resumeData``); data that cannot be read fails the request
    /// with `AFError.createURLRequestFailed(error:)` and a ``DownloadRequest/ResumeDataError``. As with Alamofire, no
    /// `URLRequest` is built or adapted for it: the session's and request's interceptors only retry.
    ///
    /// - Parameters:
    ///   - data:                      The resume data from a previously cancelled or failed `DownloadRequest`.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `DownloadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - destination:               `DownloadRequest.Destination` closure used to determine how and where the
    ///                                downloaded file should be moved. `nil` by default.
    /// - Returns:                     The created `DownloadRequest`.
    public func download(
        resumingWith data: Data, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(.resumeData(data), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    private func download(
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
    /// Creates an `UploadRequest` for the given `Data`, `URLRequest` components, and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - data:                      The `Data` to upload.
    ///   - convertible:               `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the `UploadRequest` should resume after the first response handler is
    ///                                added. `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` instance to be used by the returned `UploadRequest`. `.default` by default.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `UploadRequest`.
    public func upload(
        _ data: Data, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .data(data), with: uploadRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the given `Data` using the `URLRequestConvertible` value and `RequestInterceptor`.
    public func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .data(data), with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the file at the given file `URL`, using a `URLRequest` from the provided
    /// components and `RequestInterceptor`. The file is streamed from disk.
    public func upload(
        _ fileURL: URL, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .file(fileURL, shouldRemove: false),
            with: uploadRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the file at the given file `URL` using the `URLRequestConvertible` value and
    /// `RequestInterceptor`.
    public func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .file(fileURL, shouldRemove: false), with: convertible, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` from the `InputStream` provided using a `URLRequest` from the provided components and
    /// `RequestInterceptor`. The stream is sent chunked.
    public func upload(
        _ stream: InputStream, to convertible: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            .stream(stream), with: uploadRequest(to: convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: nil, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` from the provided `InputStream` using the `URLRequestConvertible` value and
    /// `RequestInterceptor`.
    public func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            .stream(stream), with: convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager)
    }

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

    /// An upload's request: a URL, method and headers, with no parameters.
    private func uploadRequest(
        to url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, requestModifier: RequestModifier?
    ) -> any URLRequestConvertible {
        RequestEncodableConvertible<Empty>(
            url: url, method: method, parameters: nil, encoder: URLEncodedFormParameterEncoder.default, headers: headers,
            requestModifier: requestModifier)
    }

    private func upload(
        _ uploadable: UploadRequest.Uploadable, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?, fileManager: FileManager
    ) -> UploadRequest {
        upload(
            ParameterlessUploadConvertible(request: convertible, uploadable: uploadable), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}
