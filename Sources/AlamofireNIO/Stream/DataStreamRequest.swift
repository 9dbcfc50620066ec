import AFSynchronization
import AlamofireNIOLoading
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// `Request` subclass which streams HTTP response `Data` through a `Handler` closure.
///
/// The body is never collected: the loading task hands each chunk over as it arrives, and the
/// request passes it to every stream handler added with `responseStream…` (each serializes on the
/// serialization queue when it has a serializer, then calls its handler on its own queue, in
/// arrival order), to the `InputStream` of ``asInputStream(bufferSize:)`` and to the async streams
/// of ``streamTask()``. Once the request has finished, each handler gets one `.complete` event,
/// after every chunk it was given has been handled.
///
/// Back-pressure: bytes handed to consumers but not yet handled (a handler still to run, an async
/// stream element not yet taken, input stream bytes not yet read) are counted; while more than
/// ``maximumBufferedBytes`` wait, the loading task reads nothing more from the socket, so a slow
/// consumer keeps memory flat whatever the size of the stream.
///
/// ```swift
/// AF.streamRequest("https://example.com/events").responseStreamString { stream in
///     switch stream.event {
///     case let .stream(result): print(result)
///     case let .complete(completion): print(completion.error as Any)
///     }
/// }
/// ```
public final class DataStreamRequest: Request, @unchecked Sendable {
    /// Closure type handling `DataStreamRequest.Stream` values.
    public typealias Handler<Success, Failure: Error> = @Sendable (Stream<Success, Failure>) throws -> Void

    /// Type encapsulating an `Event` as it flows through the stream, as well as a `CancellationToken` which can be used
    /// to stop the stream at any time.
    public struct Stream<Success, Failure: Error> {
        /// Latest `Event` from the stream.
        public let event: Event<Success, Failure>
        /// Token used to cancel the stream.
        public let token: CancellationToken

        /// Cancel the ongoing stream by canceling the underlying `DataStreamRequest`.
        public func cancel() {
            token.cancel()
        }
    }

    /// Type representing an event flowing through the stream. Contains either the `Result` of processing streamed
    /// `Data` or the completion of the stream.
    public enum Event<Success, Failure: Error> {
        /// Output produced every time the instance receives additional `Data`. The associated value contains the
        /// `Result` of processing the incoming `Data`.
        case stream(Result<Success, Failure>)
        /// Output produced when the instance has completed, whether due to stream end, cancellation, or an error.
        /// Associated `Completion` value contains the final state.
        case complete(Completion)
    }

    /// Value containing the state of a `DataStreamRequest` when the stream was completed.
    public struct Completion: Sendable {
        /// Last `URLRequest` issued by the instance.
        public let request: URLRequest?
        /// Last `HTTPURLResponse` received by the instance.
        public let response: HTTPURLResponse?
        /// Last metrics produced for the instance (`URLSessionTaskMetrics` in Alamofire; see `TaskMetrics`).
        public let metrics: TaskMetrics?
        /// `AFError` produced for the instance, if any.
        public let error: AFError?
    }

    /// Type used to cancel an ongoing stream.
    public struct CancellationToken: Sendable {
        weak var request: DataStreamRequest?

        init(_ request: DataStreamRequest) {
            self.request = request
        }

        /// Cancel the ongoing stream by canceling the underlying `DataStreamRequest`.
        public func cancel() {
            request?.cancel()
        }
    }

    /// The most bytes consumers may have been handed without having handled them before the loading
    /// task stops reading the response (1 MiB).
    public static let maximumBufferedBytes = 1 << 20

    /// `URLRequestConvertible` value used to create `URLRequest`s for this instance.
    public let convertible: any URLRequestConvertible
    /// Whether or not the instance will be cancelled if stream parsing encounters an error.
    public let automaticallyCancelOnStreamError: Bool
    /// The body an integration streams up with the request (see `Session.streamingExchange(_:body:interceptor:)`).
    let uploadBody: ChunkedRequestBody?
    /// Whether a response head, once received, ends the retries: its consumer has been handed it and
    /// cannot take another (an integration's exchange).
    let retriesEndAtResponse: Bool

    /// Who takes the chunks, and the counts behind completions and back-pressure.
    let streamState = Mutex(StreamConsumers<CheckedContinuation<Void, Never>>(maximumBufferedBytes: DataStreamRequest.maximumBufferedBytes))

    init(
        convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool, underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue, eventMonitor: CompositeEventMonitor?, interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?, session: Session, uploadBody: ChunkedRequestBody? = nil, retriesEndAtResponse: Bool = false
    ) {
        self.convertible = convertible
        self.automaticallyCancelOnStreamError = automaticallyCancelOnStreamError
        self.uploadBody = uploadBody
        self.retriesEndAtResponse = retriesEndAtResponse
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, session: session)
    }

    override func makeInitialURLRequest() throws -> URLRequest {
        try convertible.asURLRequest()
    }

    override func loadingDestination() -> LoadingTask.Destination { .stream(keptWhole: false) }

    override func loadingBody() -> RequestBody? { uploadBody.map { .chunks($0) } }

    /// An integration's exchange whose head was handed on cannot take a second response.
    override var mayBeRetried: Bool { !(retriesEndAtResponse && hasReceivedResponse) }

    override func didReceiveData(_ data: Data) {
        let taken = streamState.withLock { $0.chunkArrived(bytes: data.count) }
        let (streams, inputStream) = (taken.handlers, taken.inputStream)
        inputStream?.append(data) { [weak self] in self?.consumerHandled(bytes: data.count, executing: false) }
        for stream in streams { stream(data) }
    }

    override func cleanup() {
        let error = error
        let ended = streamState.withLock { $0.ended(error: error) }
        let (inputStream, waiters) = (ended.inputStream, ended.resume)
        inputStream?.finish(error: error)
        waiters.forEach { $0.resume() }
        super.cleanup()
    }

    // MARK: Back-pressure

    /// Returns once the consumers hold at most ``maximumBufferedBytes`` not yet handled, or the
    /// calling task is cancelled (the loading task is).
    func awaitDemand() async {
        guard let ticket = streamState.withLock({ $0.demandTicket() }) else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (parked, observers) = streamState.withLock { $0.park(continuation, ticket: ticket, isCancelled: Task.isCancelled) }
                observers.forEach { $0() }
                if !parked { continuation.resume() }
            }
        } onCancel: {
            streamState.withLock { $0.unpark(ticket: ticket) }?.resume()
        }
    }

    /// Whether the loading task is waiting for the consumers to catch up.
    var isAwaitingDemand: Bool { streamState.withLock { $0.isAwaitingDemand } }

    /// Runs `observer` once the loading task is waiting for the consumers to catch up: now, if it
    /// is, or as it parks (on the loading task's thread).
    func whenAwaitingDemand(_ observer: @escaping @Sendable () -> Void) {
        streamState.withLock { $0.whenAwaitingDemand(observer) }?()
    }

    /// A consumer is done with `bytes` of one chunk; `executing` says it was a stream handler.
    func consumerHandled(bytes: Int, executing: Bool) {
        let (completions, waiters) = streamState.withLock { $0.consumerHandled(bytes: bytes, byHandler: executing) }
        waiters.forEach { $0.resume() }
        completions.forEach { $0() }
    }

    // MARK: Validation

    /// A closure used to validate a request that takes a `URLRequest` and `HTTPURLResponse` and returns whether the
    /// request was valid.
    public typealias Validation = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) -> ValidationResult

    /// Validates the `URLRequest` and `HTTPURLResponse` received for the instance using the provided `Validation` closure.
    /// As in Alamofire, validators run once the stream has ended.
    ///
    /// - Parameter validation: `Validation` closure used to validate the request and response.
    /// - Returns:              The `DataStreamRequest`.
    @discardableResult
    @preconcurrency public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator({ validation($0.request, $1) }) { [unowned self] outcome, response, result in
            monitor()?.request(self, didValidateRequest: outcome.request, response: response, withResult: result)
        }
        return self
    }

    // MARK: Responses

    /// Produces an `InputStream` that receives the `Data` received by the instance. It is read like any
    /// `InputStream`: `read(_:maxLength:)` blocks until bytes arrive and returns 0 once the stream has
    /// ended (-1 with `streamError` set when the request failed). Alamofire offers it on Apple
    /// platforms only.
    ///
    /// - Note: The `InputStream` produced by this method must have `open()` called before being able to read `Data`.
    ///         Additionally, this method will automatically call `resume()` on the instance, regardless of whether or
    ///         not the creating session has `startRequestsImmediately` set to `true`.
    ///
    /// - Parameter bufferSize: Size, in bytes, of the buffer read ahead of the reader: the stream holds at least this
    ///                         much before the request stops reading the response.
    /// - Returns:              The `InputStream`.
    public func asInputStream(bufferSize: Int = 1024) -> InputStream? {
        defer { resume() }
        let (stream, hasEnded, endError) = streamState.withLock { state in
            (state.inputStream { DataStreamInputStream(bufferSize: bufferSize) }, state.hasEnded, state.endError)
        }
        if hasEnded { stream.finish(error: endError) }
        return stream
    }

    /// Sets a closure called whenever the `DataStreamRequest` produces an `HTTPURLResponse` and providing a completion
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

    /// Sets a closure called whenever the `DataStreamRequest` produces an `HTTPURLResponse`.
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
}

extension DataStreamRequest.Stream {
    /// Incoming `Result` values from `Event.stream`.
    public var result: Result<Success, Failure>? {
        guard case .stream(let result) = event else { return nil }
        return result
    }

    /// `Success` value of the instance, if any.
    public var value: Success? {
        guard case .success(let value) = result else { return nil }
        return value
    }

    /// `Failure` value of the instance, if any.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    /// `Completion` value of the instance, if any.
    public var completion: DataStreamRequest.Completion? {
        guard case .complete(let completion) = event else { return nil }
        return completion
    }
}

extension DataStreamRequest.Stream: Sendable where Success: Sendable {}
extension DataStreamRequest.Event: Sendable where Success: Sendable {}
