public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What a download request produced: the request and response, the file, the metrics and the
/// serialized result.
public struct DownloadResponse<Success, Failure: Error> {
    /// The request sent, after adaptation.
    public let request: URLRequest?
    /// The server's response.
    public var response: HTTPURLResponse? { receivedResponse?.httpURLResponse }
    /// The response as it arrived, made into Foundation's type when ``response`` is first read.
    let receivedResponse: ReceivedResponse?
    /// Where the body was written (the destination, once moved there).
    public let fileURL: URL?
    /// Data to resume the download from, when it was cancelled with resume data.
    public let resumeData: Data?
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
        request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, resumeData: Data?, metrics: TaskMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.init(
            request: request, receivedResponse: response.map(ReceivedResponse.init), fileURL: fileURL, resumeData: resumeData,
            metrics: metrics, serializationDuration: serializationDuration, result: result)
    }

    init(
        request: URLRequest?, receivedResponse: ReceivedResponse?, fileURL: URL?, resumeData: Data?, metrics: TaskMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.request = request
        self.receivedResponse = receivedResponse
        self.fileURL = fileURL
        self.resumeData = resumeData
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// The same response with the value transformed.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DownloadResponse<NewSuccess, Failure> {
        replacing(result.map(transform))
    }

    /// The same response with the value transformed by a throwing closure; its error becomes the failure.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<NewSuccess, any Error> {
        replacing(result.mapError { $0 as any Error }.flatMap { value in Result { try transform(value) } })
    }

    /// The same response with the error transformed.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DownloadResponse<Success, NewFailure> {
        replacing(result.mapError(transform))
    }

    /// The same response with the error transformed by a throwing closure.
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DownloadResponse<Success, any Error> {
        replacing(
            result.flatMapError { error in
                Result<Success, any Error> { throw try transform(error) }
            })
    }

    private func replacing<S, F: Error>(_ result: Result<S, F>) -> DownloadResponse<S, F> {
        DownloadResponse<S, F>(
            request: request, receivedResponse: receivedResponse, fileURL: fileURL, resumeData: resumeData, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }
}

/// A `DownloadResponse` whose failure is an ``AFError``.
public typealias AFDownloadResponse<Success> = DownloadResponse<Success, AFError>

extension DownloadResponse: Sendable where Success: Sendable, Failure: Sendable {}

extension DownloadResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// `success(<value>)` or `failure(<error>)`.
    public var description: String { "\(result)" }

    /// The request, response, file, resume data, metrics and result, in Alamofire's layout.
    public var debugDescription: String {
        guard let request else { return "[Request]: None\n[Result]: \(result)" }
        let responseDescription = response.map { DebugDescription.description(of: $0, data: nil) } ?? "[Response]: None"
        let networkDuration = metrics.map { "\($0.taskInterval.duration)s" } ?? "None"
        let resumeDataDescription = resumeData.map { "\($0)" } ?? "None"
        return """
            \(DebugDescription.description(of: request))
            \(responseDescription)
            [File URL]: \(fileURL?.path ?? "None")
            [Resume Data]: \(resumeDataDescription)
            [Network Duration]: \(networkDuration)
            [Serialization Duration]: \(serializationDuration)s
            [Result]: \(result)
            """
    }
}

extension DownloadResponse where Failure == AFError {
    /// A finished download's outcome with `result`, as a serializer reports it.
    init(_ outcome: Request.Outcome, result: Result<Success, AFError>, duration: TimeInterval) {
        self.init(
            request: outcome.request, receivedResponse: outcome.receivedResponse, fileURL: outcome.fileURL, resumeData: outcome.resumeData,
            metrics: outcome.metrics,
            serializationDuration: duration, result: result)
    }
}
