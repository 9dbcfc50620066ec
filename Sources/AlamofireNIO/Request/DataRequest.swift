import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A request whose response body is kept in memory as `Data`.
public class DataRequest: Request, @unchecked Sendable {
    /// `URLRequestConvertible` value used to create `URLRequest`s for this instance.
    public let convertible: any URLRequestConvertible

    init(
        convertible: any URLRequestConvertible, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?, session: Session
    ) {
        self.convertible = convertible
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        try convertible.asURLRequest()
    }

    /// With an `onHTTPResponse` handler the body streams in after the head, so that the handler hears of the response
    /// before the body arrives and `.cancel` stops it; otherwise it is collected, which is faster.
    override func loadingDestination() -> LoadingTask.Destination {
        mutableState.withLock { $0.httpResponseHandler } == nil ? .memory : .stream(keptWhole: true)
    }

    /// `Data` read from the server so far.
    public var data: Data? { mutableState.withLock { $0.data } }

    // MARK: Validation

    /// A closure used to validate a request that takes a URL request, a URL response and data, and returns whether the
    /// request was valid.
    public typealias Validation = @Sendable (URLRequest?, HTTPURLResponse, Data?) -> ValidationResult

    /// Validates the request, using the specified closure.
    ///
    /// - Note: If validation fails, subsequent calls to response handlers will have an associated error.
    /// - Parameter validation: `Validation` closure used to validate the response.
    /// - Returns: The instance.
    @discardableResult
    @preconcurrency public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator({ validation($0.request, $1, $0.data) }) { [unowned self] outcome, response, result in
            monitor()?.request(self, didValidateRequest: outcome.request, response: response, data: outcome.data, withResult: result)
        }
        return self
    }

    // MARK: Responses

    /// Sets a closure called whenever the `DataRequest` produces an `HTTPURLResponse` and providing a completion
    /// handler to return a `ResponseDisposition` value.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which the closure will be called. `.main` by default.
    ///   - handler: Closure called when the instance produces an `HTTPURLResponse`. The `completionHandler` provided
    ///              MUST be called, otherwise the request will never complete.
    /// - Returns:   The instance.
    @_disfavoredOverload
    @discardableResult
    @preconcurrency public func onHTTPResponse(
        on queue: DispatchQueue = .main,
        perform handler:
            @escaping @Sendable (
                _ response: HTTPURLResponse, _ completionHandler: @escaping @Sendable (ResponseDisposition) -> Void
            ) -> Void
    ) -> Self {
        setHTTPResponseHandler(on: queue, handler)
        return self
    }

    /// Sets a closure called whenever the `DataRequest` produces an `HTTPURLResponse`.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which the closure will be called. `.main` by default.
    ///   - handler: Closure called when the instance produces an `HTTPURLResponse`.
    /// - Returns:   The instance.
    @discardableResult
    @preconcurrency public func onHTTPResponse(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (HTTPURLResponse) -> Void
    ) -> Self {
        setHTTPResponseHandler(on: queue, Self.allowing(handler))
        return self
    }

    // MARK: Response handlers

    /// Adds a handler using a `DataResponseSerializerProtocol` value: what both public forms do.
    /// Adds a handler using `responseSerializer`; `report` tells the monitors (nil for a value that cannot cross queues,
    /// such as `responseJSON`'s `Any`, which no monitor hears of).
    private func appendSerializer<Serializer: DataResponseSerializerProtocol>(
        _ responseSerializer: Serializer, queue: DispatchQueue, report: (@Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void)?,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue,
            serialize: { outcome in
                self.serializeTimed {
                    try responseSerializer.serialize(
                        request: outcome.request, response: outcome.response(for: responseSerializer), data: outcome.data,
                        error: outcome.error)
                }
            },
            makeResponse: { DataResponse($0, result: $1, duration: $2) },
            report: { report?($0) },
            completionHandler: completionHandler)
        return self
    }

    /// Adds a handler to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: The code to be executed once the request has finished.
    /// - Returns:             The request.
    @discardableResult
    @preconcurrency public func response(
        queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue, retriesOnFailure: false,
            serialize: { outcome in (outcome.error.map { .failure($0) } ?? .success(outcome.data), 0) },
            makeResponse: { DataResponse($0, result: $1, duration: $2) },
            report: { response in self.monitor()?.request(self, didParseResponse: response) },
            completionHandler: completionHandler)
        return self
    }

    /// Adds a handler using a `DataResponseSerializerProtocol` value to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns:              The request.
    @discardableResult
    @preconcurrency public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self where Serializer.SerializedObject: Sendable {
        appendSerializer(responseSerializer, queue: queue, report: reportParsed, completionHandler: completionHandler)
    }

    /// Adds a handler using a `ResponseSerializer` value to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns:              The request.
    @discardableResult
    @preconcurrency public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self where Serializer.SerializedObject: Sendable {
        appendSerializer(responseSerializer, queue: queue, report: reportParsed, completionHandler: completionHandler)
    }

    /// Tells the monitors of a serialized response (one whose value may cross queues).
    private func reportParsed<Value: Sendable>(_ response: AFDataResponse<Value>) {
        monitor()?.performEvent(.dataRequestDidParseResponse) { $0.request(self, didParseResponse: response) }
    }

    /// The data; an empty body fails unless the method (HEAD) or status (204, 205) allows it.
    @discardableResult
    @preconcurrency public func responseData(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body as text, in `encoding` or the response's charset (ISO Latin 1 when it names none).
    @discardableResult
    @preconcurrency public func responseString(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil, emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body parsed by `JSONSerialization`.
    @discardableResult
    @preconcurrency public func responseJSON(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        appendSerializer(
            JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods,
                options: options), queue: queue, report: nil, completionHandler: completionHandler)
    }

    /// The body decoded as `T` by `decoder` (a `JSONDecoder` by default).
    @discardableResult
    @preconcurrency public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(), emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body as a property list.
    @discardableResult
    @preconcurrency public func responsePropertyList(
        queue: DispatchQueue = .main, options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        appendSerializer(PropertyListResponseSerializer(options: options), queue: queue, report: nil, completionHandler: completionHandler)
    }
}

/// Carries a value the compiler cannot prove `Sendable` (such as a parsed JSON `Any`) to the queue
/// that hands it to the user; it is not touched anywhere else.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
