import AFSynchronization
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
        /// The options' bits.
        public let rawValue: Int
        /// Creates options from their bits.
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
    @preconcurrency public class func suggestedDownloadDestination(
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
        /// Resume data from an earlier download, to continue it (see ``resumeData``).
        case resumeData(Data)
    }

    /// What this download is made from.
    public let downloadable: Downloadable
    /// Where the file goes; nil leaves it at its temporary URL.
    public let destination: Destination?
    let fileManager: FileManager
    let resumeState = Mutex(ResumeState())

    init(
        downloadable: Downloadable, underlyingQueue: DispatchQueue, serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?,
        interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?, destination: Destination?, fileManager: FileManager,
        session: Session
    ) {
        self.downloadable = downloadable
        self.destination = destination
        self.fileManager = fileManager
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        switch downloadable {
        case .request(let convertible): try convertible.asURLRequest()
        case .resumeData: try resumption().request
        }
    }

    override func loadingDestination() -> LoadingTask.Destination {
        .file(directory: fileManager.temporaryDirectory)
    }

    override func makeSessionTask(for task: LoadingTask) -> URLSessionTask { LoadingDownloadTask(task, request: self) }

    override func loadingResumption(for urlRequest: URLRequest) -> DownloadResumption? {
        takeResumption(for: urlRequest)
    }

    /// A cancel that asked for resume data keeps the partial file and records the data before the task completes.
    override func cancelLoadingTask(_ task: LoadingTask) {
        guard let handler = resumeState.withLock({ $0.takeResumeDataHandler() }) else { return task.cancel() }
        task.cancel(producingResumeData: { resumption in
            let data = resumption?.encoded()
            self.mutableState.withLock { $0.resumeData = data }
            handler(data)
        })
    }

    /// The body is in a temporary file at `location`: move it where the destination says, as Alamofire does before
    /// the task completes (a failed move becomes the request's error and leaves no file behind).
    func didFinishDownloading(using task: LoadingTask, to location: URL, fileManager: FileManager) {
        guard !isCancelled else {
            // Cancelled meanwhile: nothing is moved, and the temporary file goes.
            try? fileManager.removeItem(at: location)
            return
        }
        let response = mutableState.withLock { $0.response }
        let (destinationURL, options) =
            destination.flatMap { destination in response?.httpURLResponse.map { destination(location, $0) } } ?? (location, [])
        monitor()?.request(self, didCreateDestinationURL: destinationURL)
        let result: Result<URL, AFError>
        do {
            if destinationURL != location {
                if options.contains(.removePreviousFile), fileManager.fileExists(atPath: destinationURL.path) {
                    try fileManager.removeItem(at: destinationURL)
                }
                if options.contains(.createIntermediateDirectories) {
                    try fileManager.createDirectory(at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
                }
                try fileManager.moveItem(at: location, to: destinationURL)
            }
            result = .success(destinationURL)
        } catch {
            // The temporary file is not left behind, as URLSession removes its own.
            try? fileManager.removeItem(at: location)
            result = .failure(.downloadedFileMoveFailed(error: error, source: location, destination: destinationURL))
        }
        mutableState.withLock { state in
            switch result {
            case .success(let url): state.fileURL = url
            case .failure(let failure): state.machine.recordFailure(failure)
            }
        }
        monitor()?.performEvent(.downloadRequestDidFinishDownloading) {
            $0.request(self, didFinishDownloadingUsing: self.sessionTask(for: task), with: result)
        }
    }

    /// Cancelled while its last bytes were being written: a file left in the temporary directory goes, as URLSession's
    /// would; one moved to a destination stays there, as with Alamofire.
    override func didAbandonLoad() {
        guard destination == nil else { return }
        let fileURL = mutableState.withLock { state in
            defer { state.fileURL = nil }
            return state.fileURL
        }
        if let fileURL { try? fileManager.removeItem(at: fileURL) }
    }

    /// A retried download starts a new file: the last attempt's temporary one is removed (a file
    /// already moved to a destination stays there, as with Alamofire). An attempt that failed with
    /// resume data is continued instead.
    override func prepareForRetry() {
        if destination == nil, let fileURL { try? fileManager.removeItem(at: fileURL) }
        keepResumptionForRetry()
        super.prepareForRetry()
    }

    /// Once finished: a failed attempt's partial file that no retry continued (the request was cancelled first) goes.
    override func cleanup() {
        discardUnusedResumption()
        super.cleanup()
    }

    /// Where the body is now: the destination once moved, else the temporary file; nil before.
    public var fileURL: URL? { mutableState.withLock { $0.fileURL } }

    /// If the download is resumable and is eventually cancelled or fails, this value may be used to resume the
    /// download using the `download(resumingWith:)` API: the resume data `cancel(producingResumeData: true)` produced,
    /// else the resume data the error carries (``AFError/downloadResumeData``).
    public var resumeData: Data? { outcome.resumeData }

    // MARK: Validation

    /// Checks a response and the downloaded file; `.failure` makes the request fail with that error.
    public typealias Validation = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ fileURL: URL?) -> ValidationResult

    /// Adds a check that runs when the response has arrived and the file has been moved.
    @discardableResult
    @preconcurrency public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator({ validation($0.request, $1, $0.fileURL) }) { [unowned self] outcome, response, result in
            monitor()?.request(self, didValidateRequest: outcome.request, response: response, fileURL: outcome.fileURL, withResult: result)
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
    @preconcurrency public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @autoclosure @Sendable () -> S
    ) -> Self
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

    /// Adds a handler to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: The code to be executed once the request has finished.
    /// - Returns:             The request.
    @discardableResult
    @preconcurrency public func response(
        queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDownloadResponse<URL?>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue, retriesOnFailure: false,
            serialize: { outcome in (outcome.error.map { .failure($0) } ?? .success(outcome.fileURL), 0) },
            makeResponse: { DownloadResponse($0, result: $1, duration: $2) },
            report: { response in self.monitor()?.request(self, didParseResponse: response) },
            completionHandler: completionHandler)
        return self
    }

    /// Adds a handler using a `DownloadResponseSerializerProtocol` value to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data
    ///                         contained in the destination `URL`.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns:              The request.
    @discardableResult
    @preconcurrency public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self where Serializer.SerializedObject: Sendable {
        appendSerializer(responseSerializer, queue: queue, report: reportParsed, completionHandler: completionHandler)
    }

    /// Adds a handler using a `ResponseSerializer` value to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data
    ///                         contained in the destination `URL`.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns:              The request.
    @discardableResult
    @preconcurrency public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main, responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self where Serializer.SerializedObject: Sendable {
        appendSerializer(responseSerializer, queue: queue, report: reportParsed, completionHandler: completionHandler)
    }

    /// Tells the monitors of a serialized response (one whose value may cross queues).
    private func reportParsed<Value: Sendable>(_ response: AFDownloadResponse<Value>) {
        monitor()?.performEvent(.downloadRequestDidParseResponse) { $0.request(self, didParseResponse: response) }
    }

    /// Adds a handler using `responseSerializer`; `report` tells the monitors (nil for a value that cannot cross queues,
    /// such as `responseJSON`'s `Any`, which no monitor hears of).
    private func appendSerializer<Serializer: DownloadResponseSerializerProtocol>(
        _ responseSerializer: Serializer, queue: DispatchQueue,
        report: (@Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void)?,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseSerializer(
            queue: queue,
            serialize: { outcome in
                self.serializeTimed {
                    try responseSerializer.serializeDownload(
                        request: outcome.request, response: outcome.response, fileURL: outcome.fileURL, error: outcome.error)
                }
            },
            makeResponse: { DownloadResponse($0, result: $1, duration: $2) },
            report: { report?($0) },
            completionHandler: completionHandler)
        return self
    }

    /// The file's URL; fails when there is no file.
    @discardableResult
    @preconcurrency public func responseURL(
        queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDownloadResponse<URL>) -> Void
    )
        -> Self
    {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// The file's contents; an empty file fails unless the method (HEAD) or status (204, 205) allows it.
    @discardableResult
    @preconcurrency public func responseData(
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
    @preconcurrency public func responseString(
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
    @preconcurrency public func responseJSON(
        queue: DispatchQueue = .main, dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        appendSerializer(
            JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods,
                options: options), queue: queue, report: nil, completionHandler: completionHandler)
    }

    /// The file's contents decoded as `T`.
    @discardableResult
    @preconcurrency public func responseDecodable<T: Decodable & Sendable>(
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
    @preconcurrency public func responsePropertyList(
        queue: DispatchQueue = .main, options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        appendSerializer(PropertyListResponseSerializer(options: options), queue: queue, report: nil, completionHandler: completionHandler)
    }
}
