public import Foundation

/// A data request's serialized response, awaitable.
///
/// ```swift
/// let value = try await AF.request(url).serializingDecodable(Item.self).value
/// ```
public struct DataTask<Value: Sendable>: Sendable {
    private let request: DataRequest
    private let task: Task<AFDataResponse<Value>, Never>
    private let shouldAutomaticallyCancel: Bool

    fileprivate init(request: DataRequest, task: Task<AFDataResponse<Value>, Never>, shouldAutomaticallyCancel: Bool) {
        self.request = request
        self.task = task
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
    }

    /// The whole response.
    public var response: AFDataResponse<Value> {
        get async {
            guard shouldAutomaticallyCancel else { return await task.value }
            return await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                cancel()
            }
        }
    }

    /// The result.
    public var result: Result<Value, AFError> {
        get async { await response.result }
    }

    /// The value, or the ``AFError`` that stopped it.
    public var value: Value {
        get async throws { try await result.get() }
    }

    /// Cancels the request (and so the task).
    public func cancel() {
        task.cancel()
        request.cancel()
    }

    /// Resumes the request.
    public func resume() { request.resume() }

    /// Suspends the request.
    public func suspend() { request.suspend() }
}

extension DataRequest {
    /// The data, awaitable.
    /// - Parameter shouldAutomaticallyCancel: whether cancelling the awaiting task cancels the request.
    public func serializingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = false,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<Data> {
        serializingResponse(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The body as text, awaitable.
    public func serializingString(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = false,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor, encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<String> {
        serializingResponse(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// The body decoded as `Value`, awaitable.
    public func serializingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = false,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods
    ) -> DataTask<Value> {
        serializingResponse(
            using: DecodableResponseSerializer<Value>(
                dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// What `serializer` makes of the response, awaitable.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = false
    ) -> DataTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        let task = Task {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    // The serializing queue hands the response over: no hop to the main queue.
                    self.response(queue: serializationQueue, responseSerializer: serializer) { continuation.resume(returning: $0) }
                }
            } onCancel: {
                self.cancel()
            }
        }
        return DataTask(request: self, task: task, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }
}
