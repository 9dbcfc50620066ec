public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What a data request produced: the request and response, the data, the metrics and the
/// serialized result.
public struct DataResponse<Success, Failure: Error> {
    /// The request sent, after adaptation.
    public let request: URLRequest?
    /// The server's response.
    public var response: HTTPURLResponse? { receivedResponse?.httpURLResponse }
    /// The response as it arrived, made into Foundation's type when ``response`` is first read.
    let receivedResponse: ReceivedResponse?
    /// The body.
    public let data: Data?
    /// Timings and byte counts of the exchanges.
    public let metrics: TaskMetrics?
    /// Seconds spent serializing.
    public let serializationDuration: TimeInterval
    /// The serialized value, or why there is none.
    public let result: Result<Success, Failure>

    /// The value, when serialization succeeded.
    public var value: Success? { try? result.get() }

    /// The error, when the request or serialization failed.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    /// Creates a response.
    ///
    /// - Parameters: the fields, as the properties describe them.
    public init(
        request: URLRequest?, response: HTTPURLResponse?, data: Data?, metrics: TaskMetrics?, serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.init(
            request: request, receivedResponse: response.map(ReceivedResponse.init), data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }

    init(
        request: URLRequest?, receivedResponse: ReceivedResponse?, data: Data?, metrics: TaskMetrics?, serializationDuration: TimeInterval,
        result: Result<Success, Failure>
    ) {
        self.request = request
        self.receivedResponse = receivedResponse
        self.data = data
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// The same response with the value transformed.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        replacing(result.map(transform))
    }

    /// The same response with the value transformed by a throwing closure; its error becomes the failure.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        replacing(result.mapError { $0 as any Error }.flatMap { value in Result { try transform(value) } })
    }

    /// The same response with the error transformed.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        replacing(result.mapError(transform))
    }

    /// The same response with the error transformed by a throwing closure.
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DataResponse<Success, any Error> {
        replacing(
            result.flatMapError { error in
                Result<Success, any Error> { throw try transform(error) }
            })
    }

    private func replacing<S, F: Error>(_ result: Result<S, F>) -> DataResponse<S, F> {
        DataResponse<S, F>(
            request: request, receivedResponse: receivedResponse, data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }
}

/// A `DataResponse` whose failure is an ``AFError``.
public typealias AFDataResponse<Success> = DataResponse<Success, AFError>

/// Default type of `Result` returned by Alamofire, with an ``AFError`` as its failure.
public typealias AFResult<Success> = Result<Success, AFError>

extension DataResponse: Sendable where Success: Sendable, Failure: Sendable {}

extension DataResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// `success(<value>)` or `failure(<error>)`.
    public var description: String { "\(result)" }

    /// The request, response, data size, metrics and result, in Alamofire's layout.
    public var debugDescription: String {
        guard let request else { return "[Request]: None\n[Result]: \(result)" }
        let requestDescription = DebugDescription.description(of: request)
        let responseDescription =
            response.map { DebugDescription.description(of: $0, data: data) } ?? "[Response]: None"
        let networkDuration = metrics.map { "\($0.taskInterval.duration)s" } ?? "None"
        return """
            \(requestDescription)
            \(responseDescription)
            [Network Duration]: \(networkDuration)
            [Serialization Duration]: \(serializationDuration)s
            [Result]: \(result)
            """
    }
}

/// The text blocks of ``DataResponse/debugDescription``.
enum DebugDescription {
    static func description(of request: URLRequest) -> String {
        let method = request.httpMethod ?? "GET"
        let url = request.url?.absoluteString ?? "None"
        let headers = headerBlock(request.headers)
        let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) }.map { "\n    [Body]: \($0)" } ?? "\n    [Body]: None"
        return "[Request]: \(method) \(url)\n    [Headers]:\(headers)\(body)"
    }

    static func description(of response: HTTPURLResponse, data: Data?) -> String {
        let body = data.map { String(decoding: $0, as: UTF8.self) }.map { "\n    [Body]: \($0)" } ?? "\n    [Body]: None"
        return "[Response]:\n    [Status Code]: \(response.statusCode)\n    [Headers]:\(headerBlock(response.headers))\(body)"
    }

    static func headerBlock(_ headers: HTTPHeaders) -> String {
        guard !headers.isEmpty else { return " None" }
        return "\n" + headers.sorted().map { "        \($0.name): \($0.value)" }.joined(separator: "\n")
    }
}

extension DataResponse where Failure == AFError {
    /// A finished request's outcome with `result`, as a serializer reports it.
    init(_ outcome: Request.Outcome, result: Result<Success, AFError>, duration: TimeInterval) {
        self.init(
            request: outcome.request, receivedResponse: outcome.receivedResponse, data: outcome.data, metrics: outcome.metrics,
            serializationDuration: duration, result: result)
    }
}
