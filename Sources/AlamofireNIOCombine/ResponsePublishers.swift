#if Combine
import AFSynchronization
public import AlamofireNIO
import Foundation
import Synchronization

#if canImport(Combine)
public import Combine
#else
public import OpenCombine
#endif

/// A Combine `Publisher` that publishes the `DataResponse<Value, AFError>` of a `DataRequest`, as
/// Alamofire's: one response, then `.finished`. The request is resumed when the subscriber first
/// asks for a value, and cancelling the subscription cancels the request. On Linux it is an
/// OpenCombine publisher.
public struct DataResponsePublisher<Value: Sendable>: Publisher {
    /// The response.
    public typealias Output = DataResponse<Value, AFError>
    /// Never fails: errors are in the response.
    public typealias Failure = Never

    private let request: DataRequest
    private let responseHandler: ResponseSubscription<Output>.Start

    /// Creates a publisher serializing with a `ResponseSerializer`.
    /// - Parameters:
    ///   - request:    The request whose response is published.
    ///   - queue:      Where the response is published.
    ///   - serializer: What makes the response's value.
    public init<Serializer: ResponseSerializer>(_ request: DataRequest, queue: DispatchQueue, serializer: Serializer)
    where Value == Serializer.SerializedObject {
        self.request = request
        responseHandler = { request.response(queue: queue, responseSerializer: serializer, completionHandler: $0).resume() }
    }

    /// Creates a publisher serializing with a `DataResponseSerializerProtocol`.
    /// - Parameters:
    ///   - request:    The request whose response is published.
    ///   - queue:      Where the response is published.
    ///   - serializer: What makes the response's value.
    public init<Serializer: DataResponseSerializerProtocol>(_ request: DataRequest, queue: DispatchQueue, serializer: Serializer)
    where Value == Serializer.SerializedObject {
        self.request = request
        responseHandler = { request.response(queue: queue, responseSerializer: serializer, completionHandler: $0).resume() }
    }

    /// Publishes only the response's `Result`.
    public func result() -> AnyPublisher<Result<Value, AFError>, Never> {
        map(\.result).eraseToAnyPublisher()
    }

    /// Publishes the response's value, or fails with its error.
    public func value() -> AnyPublisher<Value, AFError> {
        setFailureType(to: AFError.self).flatMap { $0.result.valuePublisher }.eraseToAnyPublisher()
    }

    /// Attaches `subscriber`.
    public func receive<S>(subscriber: S) where S: Subscriber & Sendable, S.Failure == Failure, S.Input == Output {
        subscriber.receive(subscription: ResponseSubscription(start: responseHandler, cancel: request.cancel, downstream: subscriber))
    }
}

extension DataResponsePublisher where Value == Data? {
    /// Creates a publisher of the response without serialization.
    public init(_ request: DataRequest, queue: DispatchQueue) {
        self.request = request
        responseHandler = { request.response(queue: queue, completionHandler: $0).resume() }
    }
}

/// A Combine `Publisher` that publishes the `DownloadResponse<Value, AFError>` of a
/// `DownloadRequest`, as Alamofire's (see ``DataResponsePublisher``).
public struct DownloadResponsePublisher<Value: Sendable>: Publisher {
    /// The response.
    public typealias Output = DownloadResponse<Value, AFError>
    /// Never fails: errors are in the response.
    public typealias Failure = Never

    private let request: DownloadRequest
    private let responseHandler: ResponseSubscription<Output>.Start

    /// Creates a publisher serializing with a `ResponseSerializer`.
    /// - Parameters:
    ///   - request:    The request whose response is published.
    ///   - queue:      Where the response is published.
    ///   - serializer: What makes the response's value from the file.
    public init<Serializer: ResponseSerializer>(_ request: DownloadRequest, queue: DispatchQueue, serializer: Serializer)
    where Value == Serializer.SerializedObject {
        self.request = request
        responseHandler = { request.response(queue: queue, responseSerializer: serializer, completionHandler: $0).resume() }
    }

    /// Creates a publisher serializing with a `DownloadResponseSerializerProtocol`.
    /// - Parameters:
    ///   - request:    The request whose response is published.
    ///   - queue:      Where the response is published.
    ///   - serializer: What makes the response's value from the file.
    public init<Serializer: DownloadResponseSerializerProtocol>(_ request: DownloadRequest, queue: DispatchQueue, serializer: Serializer)
    where Value == Serializer.SerializedObject {
        self.request = request
        responseHandler = { request.response(queue: queue, responseSerializer: serializer, completionHandler: $0).resume() }
    }

    /// Publishes only the response's `Result`.
    public func result() -> AnyPublisher<Result<Value, AFError>, Never> {
        map(\.result).eraseToAnyPublisher()
    }

    /// Publishes the response's value, or fails with its error.
    public func value() -> AnyPublisher<Value, AFError> {
        setFailureType(to: AFError.self).flatMap { $0.result.valuePublisher }.eraseToAnyPublisher()
    }

    /// Attaches `subscriber`.
    public func receive<S>(subscriber: S) where S: Subscriber & Sendable, S.Failure == Failure, S.Input == Output {
        subscriber.receive(subscription: ResponseSubscription(start: responseHandler, cancel: request.cancel, downstream: subscriber))
    }
}

extension DownloadResponsePublisher where Value == URL? {
    /// Creates a publisher of the response without serialization.
    public init(_ request: DownloadRequest, queue: DispatchQueue) {
        self.request = request
        responseHandler = { request.response(queue: queue, completionHandler: $0).resume() }
    }
}

/// The subscription of a one-response publisher: the first demand adds the response handler (and
/// resumes the request); the response goes downstream, then `.finished`. Cancelling cancels the
/// request, and a response that arrives afterwards is dropped (Alamofire's still delivers it).
final class ResponseSubscription<Response: Sendable>: Subscription, Sendable {
    /// Adds a handler that receives the response, and resumes the request.
    typealias Start = @Sendable (@escaping @Sendable (Response) -> Void) -> Void

    private struct State {
        /// Sends the response, then `.finished`, to the subscriber; nil once sent or cancelled.
        var send: (@Sendable (Response) -> Void)?
        /// Adds the response handler, until the first demand (the handler holds this subscription, so
        /// keeping it would keep the request alive from here).
        var start: Start?
        /// Cancels the request, until the response is sent.
        var cancelRequest: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>

    init<Downstream: Subscriber & Sendable>(
        start: @escaping Start, cancel: @escaping @Sendable () -> Any, downstream: Downstream
    ) where Downstream.Input == Response, Downstream.Failure == Never {
        self.state = Mutex(
            State(
                send: { response in
                    _ = downstream.receive(response)
                    downstream.receive(completion: .finished)
                }, start: start, cancelRequest: { _ = cancel() }))
    }

    func request(_ demand: Subscribers.Demand) {
        let start = state.withLock { state in demand > 0 && state.send != nil ? state.start.take() : nil }
        start? { [self] response in
            let send = state.withLock { state in
                state.cancelRequest = nil
                return state.send.take()
            }
            send?(response)
        }
    }

    func cancel() {
        let cancelRequest = state.withLock { state in
            state.send = nil
            state.start = nil
            return state.cancelRequest.take()
        }
        cancelRequest?()
    }
}

extension Result where Success: Sendable, Failure == AFError {
    /// A publisher of the value, or of the error.
    var valuePublisher: AnyPublisher<Success, AFError> {
        switch self {
        case .success(let value): Just(value).setFailureType(to: AFError.self).eraseToAnyPublisher()
        case .failure(let error): Fail(error: error).eraseToAnyPublisher()
        }
    }
}
#endif
