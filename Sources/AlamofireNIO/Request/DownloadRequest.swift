import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A request whose response body is streamed into a file, then moved where its ``Destination`` says.
/// Memory stays flat whatever the size.
public final class DownloadRequest: Request, @unchecked Sendable {
    /// What to do on the file system when moving the downloaded file.
    public struct Options: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Creates the destination's missing parent directories.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Removes a file already at the destination.
        public static let removePreviousFile = Options(rawValue: 1 << 1)
    }

    /// Where to move the downloaded file, given where it is now and the response.
    public typealias Destination =
        @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) -> (destinationURL: URL, options: Options)

    /// A destination in `directory` of `domain`, named after the response's suggested file name.
    public class func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory, in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = []
    ) -> Destination {
        { temporaryURL, response in
            let directoryURL = FileManager.default.urls(for: directory, in: domain).first
            return (directoryURL?.appendingPathComponent(suggestedFilename(for: response)) ?? temporaryURL, options)
        }
    }

    /// The name Apple's URLSession suggests: the `Content-Disposition` file name, else the URL's last
    /// path component, else its host. (Linux's `HTTPURLResponse` only looks at the header and says
    /// "Unknown" otherwise.)
    static func suggestedFilename(for response: HTTPURLResponse) -> String {
        if let name = response.suggestedFilename, name != "Unknown", !name.isEmpty { return name }
        if let last = response.url?.lastPathComponent, !last.isEmpty, last != "/" { return last }
        return response.url?.host ?? "Unknown"
    }

    /// What the request is made from.
    public enum Downloadable: Sendable {
        /// A request to send.
        case request(any URLRequestConvertible)
    }

    /// What this download is made from.
    public let downloadable: Downloadable
    /// Where the file goes; nil leaves it at its temporary URL.
    public let destination: Destination?
    let fileManager: FileManager

    init(
        downloadable: Downloadable, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?, destination: Destination?, fileManager: FileManager, session: Session
    ) {
        self.downloadable = downloadable
        self.destination = destination
        self.fileManager = fileManager
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        switch downloadable {
        case .request(let convertible): try convertible.asURLRequest()
        }
    }

    override func loadingDestination() -> LoadingTask.Destination {
        .file(directory: fileManager.temporaryDirectory)
    }

    /// Moves the file to its destination, as Alamofire does before validation.
    override func didFinishLoad() -> AFError? {
        let (temporaryURL, response) = mutableState.withLock { ($0.fileURL, $0.response) }
        guard let temporaryURL, let response, let destination else { return nil }
        let (destinationURL, options) = destination(temporaryURL, response)
        do {
            if options.contains(.removePreviousFile), fileManager.fileExists(atPath: destinationURL.path) {
                try fileManager.removeItem(at: destinationURL)
            }
            if options.contains(.createIntermediateDirectories) {
                try fileManager.createDirectory(at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            try fileManager.moveItem(at: temporaryURL, to: destinationURL)
            mutableState.withLock { $0.fileURL = destinationURL }
            return nil
        } catch {
            // The temporary file is not left behind, as URLSession removes its own.
            try? fileManager.removeItem(at: temporaryURL)
            mutableState.withLock { $0.fileURL = nil }
            return .downloadedFileMoveFailed(error: error, source: temporaryURL, destination: destinationURL)
        }
    }

    /// Cancelled while its last bytes were being written: the file goes, as URLSession's would.
    override func didAbandonLoad() {
        let fileURL = mutableState.withLock { state in
            defer { state.fileURL = nil }
            return state.fileURL
        }
        if let fileURL { try? fileManager.removeItem(at: fileURL) }
    }

    /// A retried download starts a new file: the last attempt's temporary one is removed (a file
    /// already moved to a destination stays there, as with Alamofire).
    override func prepareForRetry() {
        if destination == nil, let fileURL { try? fileManager.removeItem(at: fileURL) }
        super.prepareForRetry()
    }

    /// Where the body is now: the destination once moved, else the temporary file; nil before.
    public var fileURL: URL? { mutableState.withLock { $0.fileURL } }

    /// Data to resume from; downloads here are not resumable yet, so always nil.
    public var resumeData: Data? { nil }

    // MARK: Validation

    /// Checks a response and the downloaded file; `.failure` makes the request fail with that error.
    public typealias Validation = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ fileURL: URL?) -> ValidationResult

    /// Adds a check that runs when the response has arrived and the file has been moved.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator({ validation($0.request, $1, $0.fileURL) }) { [unowned self] outcome, response, result in
            eventMonitor?.performEvent {
                $0.request(self, didValidateRequest: outcome.request, response: response, fileURL: outcome.fileURL, withResult: result)
            }
        }
        return self
    }

    /// Fails the request unless its status code is in `acceptableStatusCodes`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        validate { _, response, _ in ResponseValidation.statusCode(response, acceptable: acceptableStatusCodes) }
    }

    /// Fails the request unless its `Content-Type` matches one of `acceptableContentTypes`; an empty
    /// file passes, a missing one fails with `.dataFileNil`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(contentType acceptableContentTypes: @escaping @autoclosure @Sendable () -> S) -> Self
    where S.Element == String {
        validate { [fileManager] _, response, fileURL in
            guard let fileURL else { return .failure(AFError.responseValidationFailed(reason: .dataFileNil)) }
            guard let size = (try? fileManager.attributesOfItem(atPath: fileURL.path))?[.size] as? NSNumber else {
                return .failure(AFError.responseValidationFailed(reason: .dataFileReadFailed(at: fileURL)))
            }
            return ResponseValidation.contentType(response, bodyIsEmpty: size.int64Value == 0, acceptable: Array(acceptableContentTypes()))
        }
    }

    /// Requires a 2xx status and a `Content-Type` the request's `Accept` header allows.
    @discardableResult
    public func validate() -> Self {
        // Unowned: the validator is kept by the request, which runs it.
        let acceptableContentTypes: @Sendable () -> [String] = { [unowned self] in self.acceptableContentTypes }
        return validate(statusCode: 200..<300).validate(contentType: acceptableContentTypes())
    }

    // MARK: Response handlers

    /// Calls `completionHandler` on `queue` with the file as downloaded.
    @discardableResult
    public func response(queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDownloadResponse<URL?>) -> Void) -> Self {
        appendResponseSerializer(
            queue: queue,
            makeResponse: { DownloadResponse($0, result: $0.error.map { .failure($0) } ?? .success($0.fileURL), duration: 0) },
            report: { response in self.eventMonitor?.performEvent { $0.request(self, didParseResponse: response) } },
            completionHandler: completionHandler)
        return self
    }

    /// Calls `completionHandler` on `queue` with what `responseSerializer` makes of the file.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendSerializer(responseSerializer, queue: queue, completionHandler: completionHandler)
    }

    /// The same for a ``ResponseSerializer``, so that `.data`, `.string` and `.decodable(of:)` can name it.
    @discardableResult
    public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendSerializer(responseSerializer, queue: queue, completionHandler: completionHandler)
    }

    private func appendSerializer<Serializer: DownloadResponseSerializerProtocol>(
        _ responseSerializer: Serializer, queue: DispatchQueue,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue,
            makeResponse: { outcome in
                let (result, duration) = self.serializeTimed {
                    try responseSerializer.serializeDownload(
                        request: outcome.request, response: outcome.response, fileURL: outcome.fileURL, error: outcome.error)
                }
                return DownloadResponse(outcome, result: result, duration: duration)
            },
            report: { response in
                let response = UncheckedSendable(response)
                self.eventMonitor?.performEvent { $0.request(self, didParseResponse: response.value) }
            },
            completionHandler: completionHandler)
        return self
    }

    /// The file's URL; fails when there is no file.
    @discardableResult
    public func responseURL(
        queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDownloadResponse<URL>) -> Void
    )
        -> Self
    {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// The file's contents; an empty file fails unless the method (HEAD) or status (204, 205) allows it.
    @discardableResult
    public func responseData(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The file's contents as text, in `encoding` or the response's charset.
    @discardableResult
    public func responseString(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil, emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The file's contents parsed by `JSONSerialization`.
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods,
                options: options),
            completionHandler: completionHandler)
    }

    /// The file's contents decoded as `T`.
    @discardableResult
    public func responseDecodable<T: Decodable>(
        of type: T.Type = T.self, queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(), emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The file's contents as a property list.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue = .main, options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: PropertyListResponseSerializer(options: options), completionHandler: completionHandler)
    }
}
