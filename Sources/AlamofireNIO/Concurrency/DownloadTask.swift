public import Foundation

/// A download request's serialized response, awaitable.
///
/// ```swift
/// let fileURL = try await AF.download(url, to: destination).serializingDownloadedFileURL().value
/// ```
public struct DownloadTask<Value: Sendable>: Sendable {
    private let task: SerializingTask<AFDownloadResponse<Value>>

    fileprivate init(_ task: SerializingTask<AFDownloadResponse<Value>>) {
        self.task = task
    }

    /// The whole response.
    public var response: AFDownloadResponse<Value> {
        get async { await task.response }
    }

    /// The result.
    public var result: Result<Value, AFError> {
        get async { await response.result }
    }

    /// The value, or the ``AFError`` that stopped it.
    public var value: Value {
        get async throws { try await result.get() }
    }

    /// Cancels the download; its response then carries ``AFError/explicitlyCancelled``.
    public func cancel() { task.request.cancel() }

    /// Resumes the download.
    public func resume() { task.request.resume() }

    /// Suspends the download.
    public func suspend() { task.request.suspend() }
}

extension DownloadRequest {
    /// The downloaded file's URL, awaitable.
    public func serializingDownloadedFileURL(automaticallyCancelling shouldAutomaticallyCancel: Bool = true) -> DownloadTask<URL> {
        serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The file's contents, awaitable.
    public func serializingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<Data> {
        serializingDownload(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The file's contents as text, awaitable.
    public func serializingString(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor, encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<String> {
        serializingDownload(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The file's contents decoded as `Value`, awaitable.
    public func serializingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods
    ) -> DownloadTask<Value> {
        serializingDownload(
            using: DecodableResponseSerializer<Value>(
                dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The same for a ``ResponseSerializer``, so that `.data`, `.string` and `.decodable(of:)` can name it.
    public func serializingDownload<Serializer: ResponseSerializer>(
        using serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        makeDownloadTask(serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// What `serializer` makes of the download, awaitable.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        makeDownloadTask(serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Both public forms in one: they differ only so that the static factories resolve.
    private func makeDownloadTask<Serializer: DownloadResponseSerializerProtocol>(
        _ serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool
    ) -> DownloadTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        DownloadTask(
            SerializingTask(request: self, automaticallyCancelling: shouldAutomaticallyCancel) { queue, fulfil in
                response(queue: queue, responseSerializer: serializer, completionHandler: fulfil)
            })
    }
}
