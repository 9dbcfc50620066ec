import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Multipart uploads

extension Session {
    /// Creates an `UploadRequest` for the multipart form data built by a closure, using a `URLRequest` from the
    /// provided components and `RequestInterceptor`.
    ///
    /// A form whose parts' contents add up to less than `encodingMemoryThreshold` bytes is encoded in memory and
    /// sent at once; a larger one is written to a temporary file, streamed from disk (memory stays flat whatever
    /// its size) and the file removed once the request is done.
    ///
    /// - Parameters:
    ///   - multipartFormData:       `MultipartFormData` building closure.
    ///   - url:                     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - encodingMemoryThreshold: Byte threshold used to determine whether the form data is encoded into memory or
    ///                              onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold` by
    ///                              default.
    ///   - method:                  `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - fileManager:             `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                              written to disk before being uploaded. `.default` instance by default.
    ///   - requestModifier:         `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                              provided parameters. `nil` by default.
    /// - Returns:                   The created `UploadRequest`.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let formData = MultipartFormData(fileManager: fileManager)
        multipartFormData(formData)
        return upload(
            multipartFormData: formData, to: url, usingThreshold: encodingMemoryThreshold, method: method, headers: headers,
            interceptor: interceptor, fileManager: fileManager, requestModifier: requestModifier)
    }

    /// Creates an `UploadRequest` using a `MultipartFormData` building closure, the provided `URLRequestConvertible`
    /// value, and a `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       `MultipartFormData` building closure.
    ///   - request:                 `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - encodingMemoryThreshold: Byte threshold used to determine whether the form data is encoded into memory or
    ///                              onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold` by
    ///                              default.
    ///   - interceptor:             `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by default.
    ///   - fileManager:             `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                              written to disk before being uploaded. `.default` instance by default.
    /// - Returns:                   The created `UploadRequest`.
    public func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        let formData = MultipartFormData(fileManager: fileManager)
        multipartFormData(formData)
        return upload(
            multipartFormData: formData, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the prebuilt `MultipartFormData` value using the provided `URLRequest`
    /// components and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:         `MultipartFormData` instance to upload.
    ///   - url:                       `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - encodingMemoryThreshold:   Byte threshold used to determine whether the form data is encoded into memory
    ///                                or onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold`
    ///                                by default.
    ///   - method:                    `HTTPMethod` for the `URLRequest`. `.post` by default.
    ///   - headers:                   `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first response handler is added.
    ///                                `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` to be used if the form data exceeds the memory threshold and is
    ///                                written to disk before being uploaded. `.default` instance by default.
    ///   - requestModifier:           `RequestModifier` which will be applied to the `URLRequest` created from the
    ///                                provided parameters. `nil` by default.
    /// - Returns:                     The created `UploadRequest`.
    public func upload(
        multipartFormData: MultipartFormData, to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default, requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let convertible = RequestEncodableConvertible<Empty>(
            url: url, method: method, parameters: nil, encoder: URLEncodedFormParameterEncoder.default, headers: headers,
            requestModifier: requestModifier)
        return upload(
            multipartFormData: multipartFormData, with: convertible, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` for the prebuilt `MultipartFormData` value using the providing `URLRequestConvertible`
    /// value and `RequestInterceptor`.
    ///
    /// - Parameters:
    ///   - multipartFormData:         `MultipartFormData` instance to upload.
    ///   - request:                   `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - encodingMemoryThreshold:   Byte threshold used to determine whether the form data is encoded into memory
    ///                                or onto disk before being uploaded. `MultipartFormData.encodingMemoryThreshold`
    ///                                by default.
    ///   - interceptor:               `RequestInterceptor` value to be used by the returned `DataRequest`. `nil` by
    ///                                default.
    ///   - shouldAutomaticallyResume: Whether the request should resume after the first response handler is added.
    ///                                `nil` by default: the session's `startRequestsImmediately`.
    ///   - fileManager:               `FileManager` instance to be used by the returned `UploadRequest`. `.default`
    ///                                instance by default.
    /// - Returns:                     The created `UploadRequest`.
    public func upload(
        multipartFormData: MultipartFormData, with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil, fileManager: FileManager = .default
    ) -> UploadRequest {
        let upload = MultipartUpload(
            encodingMemoryThreshold: encodingMemoryThreshold, request: request, multipartFormData: multipartFormData,
            fileManager: fileManager)
        return self.upload(upload, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}
