#if Combine
public import AlamofireNIO
import Foundation

extension DataRequest {
    /// A ``DataResponsePublisher`` serializing with `serializer`, publishing on `queue`.
    public func publishResponse<Serializer: ResponseSerializer, T>(
        using serializer: Serializer, on queue: DispatchQueue = .main
    )
        -> DataResponsePublisher<T> where Serializer.SerializedObject == T
    {
        DataResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A ``DataResponsePublisher`` serializing with a `DataResponseSerializerProtocol`, publishing on `queue`.
    public func publishResponse<Serializer: DataResponseSerializerProtocol, T>(
        using serializer: Serializer, on queue: DispatchQueue = .main
    )
        -> DataResponsePublisher<T> where Serializer.SerializedObject == T
    {
        DataResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A ``DataResponsePublisher`` of the body as `Data` (a `DataResponseSerializer`).
    public func publishData(
        queue: DispatchQueue = .main, preprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<Data> {
        publishResponse(
            using: DataResponseSerializer(
                dataPreprocessor: preprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DataResponsePublisher`` of the body as a `String` (a `StringResponseSerializer`).
    public func publishString(
        queue: DispatchQueue = .main, preprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil, emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<String> {
        publishResponse(
            using: StringResponseSerializer(
                dataPreprocessor: preprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DataResponsePublisher`` of the body decoded as `T` (a `DecodableResponseSerializer`).
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self, queue: DispatchQueue = .main,
        preprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(), emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DataResponsePublisher<T> {
        publishResponse(
            using: DecodableResponseSerializer(
                dataPreprocessor: preprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DataResponsePublisher`` of the response without serialization.
    public func publishUnserialized(queue: DispatchQueue = .main) -> DataResponsePublisher<Data?> {
        DataResponsePublisher(self, queue: queue)
    }
}

extension DataStreamRequest {
    /// A ``DataStreamPublisher`` serializing each chunk with `serializer`.
    public func publishStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer, on queue: DispatchQueue = .main
    )
        -> DataStreamPublisher<Serializer.SerializedObject>
    {
        DataStreamPublisher(self, queue: queue, serializer: serializer)
    }

    /// A ``DataStreamPublisher`` of the chunks as `Data`.
    public func publishData(queue: DispatchQueue = .main) -> DataStreamPublisher<Data> {
        publishStream(using: PassthroughStreamSerializer(), on: queue)
    }

    /// A ``DataStreamPublisher`` of the chunks as `String`s.
    public func publishString(queue: DispatchQueue = .main) -> DataStreamPublisher<String> {
        publishStream(using: StringStreamSerializer(), on: queue)
    }

    /// A ``DataStreamPublisher`` of the chunks decoded as `T`.
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self, queue: DispatchQueue = .main, decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> DataStreamPublisher<T> {
        publishStream(using: DecodableStreamSerializer(decoder: decoder, dataPreprocessor: preprocessor), on: queue)
    }
}

extension DownloadRequest {
    /// A ``DownloadResponsePublisher`` serializing with `serializer`.
    public func publishResponse<Serializer: ResponseSerializer, T>(
        using serializer: Serializer, on queue: DispatchQueue = .main
    )
        -> DownloadResponsePublisher<T> where Serializer.SerializedObject == T
    {
        DownloadResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A ``DownloadResponsePublisher`` serializing with a `DownloadResponseSerializerProtocol`.
    public func publishResponse<Serializer: DownloadResponseSerializerProtocol, T>(
        using serializer: Serializer, on queue: DispatchQueue = .main
    ) -> DownloadResponsePublisher<T> where Serializer.SerializedObject == T {
        DownloadResponsePublisher(self, queue: queue, serializer: serializer)
    }

    /// A ``DownloadResponsePublisher`` of the downloaded file's URL (a `URLResponseSerializer`).
    public func publishURL(queue: DispatchQueue = .main) -> DownloadResponsePublisher<URL> {
        publishResponse(using: URLResponseSerializer(), on: queue)
    }

    /// A ``DownloadResponsePublisher`` of the file's contents as `Data`.
    public func publishData(
        queue: DispatchQueue = .main, preprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<Data> {
        publishResponse(
            using: DataResponseSerializer(
                dataPreprocessor: preprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DownloadResponsePublisher`` of the file's contents as a `String`.
    public func publishString(
        queue: DispatchQueue = .main, preprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil, emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<String> {
        publishResponse(
            using: StringResponseSerializer(
                dataPreprocessor: preprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DownloadResponsePublisher`` of the file's contents decoded as `T`.
    public func publishDecodable<T: Decodable & Sendable>(
        type: T.Type = T.self, queue: DispatchQueue = .main,
        preprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(), emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DownloadResponsePublisher<T> {
        publishResponse(
            using: DecodableResponseSerializer(
                dataPreprocessor: preprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            on: queue)
    }

    /// A ``DownloadResponsePublisher`` of the response without serialization.
    public func publishUnserialized(on queue: DispatchQueue = .main) -> DownloadResponsePublisher<URL?> {
        DownloadResponsePublisher(self, queue: queue)
    }
}
#endif
