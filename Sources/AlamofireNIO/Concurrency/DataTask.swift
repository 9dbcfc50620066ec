import AFSynchronization
public import Foundation
import Synchronization

/// A data request's serialized response, awaitable.
///
/// ```swift
/// let value = try await AF.request(url).serializingDecodable(Item.self).value
/// ```
public struct DataTask<Value: Sendable>: Sendable {
    private let task: SerializingTask<AFDataResponse<Value>>

    fileprivate init(_ task: SerializingTask<AFDataResponse<Value>>) {
        self.task = task
    }

    /// The whole response.
    public var response: AFDataResponse<Value> {
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

    /// Cancels the request; its response then carries ``AFError/explicitlyCancelled``.
    public func cancel() { task.request.cancel() }

    /// Resumes the request.
    public func resume() { task.request.resume() }

    /// Suspends the request.
    public func suspend() { task.request.suspend() }
}

extension DataRequest {
    /// The data, awaitable.
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: whether cancelling the awaiting task cancels the request.
    ///   - dataPreprocessor: prepares the data before it is serialized.
    ///   - emptyResponseCodes: the status codes for which an empty body is allowed.
    ///   - emptyRequestMethods: the request methods for which an empty body is allowed.
    public func serializingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
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
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
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
        _ type: Value.Type = Value.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
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

    /// The same for a ``ResponseSerializer``, so that `.data`, `.string` and `.decodable(of:)` can name it.
    public func serializingResponse<Serializer: ResponseSerializer>(
        using serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        makeDataTask(serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// What `serializer` makes of the response, awaitable.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        makeDataTask(serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Both public forms in one: they differ only so that the static factories resolve.
    private func makeDataTask<Serializer: DataResponseSerializerProtocol>(
        _ serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool
    ) -> DataTask<Serializer.SerializedObject> where Serializer.SerializedObject: Sendable {
        DataTask(
            SerializingTask(request: self, automaticallyCancelling: shouldAutomaticallyCancel) { queue, fulfil in
                response(queue: queue, responseSerializer: serializer, completionHandler: fulfil)
            })
    }
}

/// What every kind of request's awaitable task shares: the request and its response, handed over
/// once by a response handler and awaited any number of times.
struct SerializingTask<Response: Sendable>: Sendable {
    let request: Request
    private let outcome = AwaitedResponse<Response>()
    private let shouldAutomaticallyCancel: Bool

    /// - Parameters:
    ///   - request: the request whose response is awaited.
    ///   - shouldAutomaticallyCancel: whether cancelling the awaiting Swift task cancels the request.
    ///   - addHandler: adds the kind's response handler on the given queue, calling the given closure.
    init(
        request: Request, automaticallyCancelling shouldAutomaticallyCancel: Bool,
        addHandler: (DispatchQueue, @escaping @Sendable (Response) -> Void) -> Void
    ) {
        self.request = request
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
        // The handler is added now (no task to start first) and hands the response over on the
        // serialization queue: no hop to the main queue.
        addHandler(request.serializationQueue) { [outcome] in outcome.fulfil($0) }
    }

    var response: Response {
        get async { await outcome.value(cancellingOnTaskCancellation: shouldAutomaticallyCancel ? request : nil) }
    }
}

/// A value that arrives once and may be awaited any number of times, before or after it arrives.
///
/// A typed view of ``AwaitedValue``, which holds the value type-erased: generic state would have its
/// type metadata looked up at run time on every lock, since callers in other modules use it
/// unspecialized. Copies share the one value.
struct AwaitedResponse<Value: Sendable>: Sendable {
    private let awaited = AwaitedValue()

    /// Stores the value and wakes everyone waiting for it. Only the first call counts.
    func fulfil(_ value: Value) {
        awaited.fulfil(value)
    }

    /// The value, once it has arrived; when the awaiting task is cancelled first, `request` (if
    /// given) is cancelled, which makes the value arrive.
    func value(cancellingOnTaskCancellation request: Request?) async -> Value {
        let value: any Sendable
        if let request {
            value = await withTaskCancellationHandler {
                await awaited.value
            } onCancel: {
                request.cancel()
            }
        } else {
            value = await awaited.value
        }
        // Only `fulfil(_:)` stores a value, and it takes a `Value`.
        guard let value = value as? Value else { preconditionFailure("AwaitedResponse holds a \(type(of: value)), not a \(Value.self)") }
        return value
    }
}

/// ``AwaitedResponse``'s value and waiters, type-erased.
final class AwaitedValue: Sendable {
    private struct State {
        var value: (any Sendable)?
        var waiters: [CheckedContinuation<any Sendable, Never>] = []
    }

    private let state = Mutex(State())

    /// Stores the value and wakes everyone waiting for it. Only the first call counts.
    func fulfil(_ value: any Sendable) {
        let waiters = state.withLock { state -> [CheckedContinuation<any Sendable, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: value) }
    }

    /// The value, once it has arrived.
    var value: any Sendable {
        get async {
            if let value = state.withLock({ $0.value }) { return value }
            return await withCheckedContinuation { continuation in
                let value = state.withLock { state -> (any Sendable)? in
                    if state.value == nil { state.waiters.append(continuation) }
                    return state.value
                }
                if let value { continuation.resume(returning: value) }
            }
        }
    }
}
