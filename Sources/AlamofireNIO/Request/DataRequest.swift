public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A request whose response body is kept in memory as `Data`.
public class DataRequest: Request, @unchecked Sendable {
    /// What this request's `URLRequest` is made from.
    public let convertible: any URLRequestConvertible

    init(
        convertible: any URLRequestConvertible, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue,
        eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?, session: Session
    ) {
        self.convertible = convertible
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        try convertible.asURLRequest()
    }

    /// The body received so far (all of it once the request has finished); nil when there was none.
    public var data: Data? { mutableState.withLock { $0.data } }

    // MARK: Validation

    /// Checks a response; `.failure` makes the request fail with that error.
    public typealias Validation = @Sendable (URLRequest?, HTTPURLResponse, Data?) -> ValidationResult

    /// Adds a check that runs when the response has arrived, before any serializer.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator({ validation($0.request, $1, $0.data) }) { [unowned self] outcome, response, result in
            eventMonitor?.performEvent {
                $0.request(self, didValidateRequest: outcome.request, response: response, data: outcome.data, withResult: result)
            }
        }
        return self
    }

    // MARK: Response handlers

    /// Calls `completionHandler` on `queue` with the data as received.
    @discardableResult
    public func response(queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void) -> Self {
        appendResponseSerializer(
            queue: queue,
            makeResponse: { DataResponse($0, result: $0.error.map { .failure($0) } ?? .success($0.data), duration: 0) },
            report: { response in self.eventMonitor?.performEvent { $0.request(self, didParseResponse: response) } },
            completionHandler: completionHandler)
        return self
    }

    /// Calls `completionHandler` on `queue` with what `responseSerializer` makes of the response.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendSerializer(responseSerializer, queue: queue, completionHandler: completionHandler)
    }

    private func appendSerializer<Serializer: DataResponseSerializerProtocol>(
        _ responseSerializer: Serializer, queue: DispatchQueue,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue,
            makeResponse: { outcome in
                let (result, duration) = self.serializeTimed {
                    try responseSerializer.serialize(
                        request: outcome.request, response: outcome.response, data: outcome.data, error: outcome.error)
                }
                return DataResponse(outcome, result: result, duration: duration)
            },
            report: { response in
                let response = UncheckedSendable(response)
                self.eventMonitor?.performEvent { $0.request(self, didParseResponse: response.value) }
            },
            completionHandler: completionHandler)
        return self
    }

    /// The same for a ``ResponseSerializer``, so that `.data`, `.string` and `.decodable(of:)` can name it.
    @discardableResult
    public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendSerializer(responseSerializer, queue: queue, completionHandler: completionHandler)
    }

    /// The data; an empty body fails unless the method (HEAD) or status (204, 205) allows it.
    @discardableResult
    public func responseData(
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
    public func responseString(
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
    public func responseJSON(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods,
                options: options),
            completionHandler: completionHandler)
    }

    /// The body decoded as `T` by `decoder` (a `JSONDecoder` by default).
    @discardableResult
    public func responseDecodable<T: Decodable>(
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
    public func responsePropertyList(
        queue: DispatchQueue = .main, options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: PropertyListResponseSerializer(options: options), completionHandler: completionHandler)
    }
}

/// Carries a value the compiler cannot prove `Sendable` (such as a parsed JSON `Any`) to the queue
/// that hands it to the user; it is not touched anywhere else.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
