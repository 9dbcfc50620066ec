import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A `DataStreamRequest`'s values as async sequences.
///
/// ```swift
/// for await stream in AF.streamRequest(url).streamTask().streamingStrings() {
///     if let line = stream.value { print(line) }
/// }
/// ```
///
/// A consumer that takes elements more slowly than they arrive holds the request back: the
/// elements it has not taken count against ``DataStreamRequest/maximumBufferedBytes``.
public struct DataStreamTask: Sendable {
    /// Type of created streams.
    public typealias Stream<Success, Failure: Error> = StreamOf<DataStreamRequest.Stream<Success, Failure>>

    private let request: DataStreamRequest

    fileprivate init(request: DataStreamRequest) {
        self.request = request
    }

    /// Creates a `Stream` of `Data` values from the underlying `DataStreamRequest`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: `Bool` indicating whether the underlying `DataStreamRequest` should be canceled
    ///                                when observation of the stream stops. `true` by default.
    ///   - bufferingPolicy:           `BufferingPolicy` that determines the stream's buffering behavior.`.unbounded` by default.
    /// - Returns:                     The `Stream`.
    public func streamingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true, bufferingPolicy: Stream<Data, Never>.BufferingPolicy = .unbounded
    ) -> Stream<Data, Never> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, feed in
            // The feed may be given chunks from any thread: each is yielded as it arrives.
            request.appendStream(
                .whereReceived, serializing: { .success($0) }, deliver: feed.yield, complete: feed.finish)
        }
    }

    /// Creates a `Stream` of `UTF-8` `String`s from the underlying `DataStreamRequest`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: `Bool` indicating whether the underlying `DataStreamRequest` should be canceled
    ///                                when observation of the stream stops. `true` by default.
    ///   - bufferingPolicy:           `BufferingPolicy` that determines the stream's buffering behavior.`.unbounded` by default.
    /// - Returns:                     The `Stream`.
    public func streamingStrings(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true, bufferingPolicy: Stream<String, Never>.BufferingPolicy = .unbounded
    ) -> Stream<String, Never> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, feed in
            request.appendStream(
                .serialized(on: request.underlyingQueue), serializing: { .success(String(decoding: $0, as: UTF8.self)) },
                deliver: feed.yield,
                complete: feed.finish)
        }
    }

    /// Creates a `Stream` of `Decodable` values from the underlying `DataStreamRequest`.
    ///
    /// - Parameters:
    ///   - type:                      `Decodable` type to be serialized from stream payloads.
    ///   - shouldAutomaticallyCancel: `Bool` indicating whether the underlying `DataStreamRequest` should be canceled
    ///                                when observation of the stream stops. `true` by default.
    ///   - bufferingPolicy:           `BufferingPolicy` that determines the stream's buffering behavior.`.unbounded` by default.
    /// - Returns:                     The `Stream`.
    public func streamingDecodables<T>(
        _ type: T.Type = T.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<T, AFError>.BufferingPolicy = .unbounded
    ) -> Stream<T, AFError> where T: Decodable & Sendable {
        streamingResponses(
            serializedUsing: DecodableStreamSerializer<T>(), automaticallyCancelling: shouldAutomaticallyCancel,
            bufferingPolicy: bufferingPolicy)
    }

    /// Creates a `Stream` of values using the provided `DataStreamSerializer` from the underlying `DataStreamRequest`.
    ///
    /// - Parameters:
    ///   - serializer:                `DataStreamSerializer` to use to serialize incoming `Data`.
    ///   - shouldAutomaticallyCancel: `Bool` indicating whether the underlying `DataStreamRequest` should be canceled
    ///                                when observation of the stream stops. `true` by default.
    ///   - bufferingPolicy:           `BufferingPolicy` that determines the stream's buffering behavior.`.unbounded` by default.
    /// - Returns:                     The `Stream`.
    public func streamingResponses<Serializer: DataStreamSerializer>(
        serializedUsing serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<Serializer.SerializedObject, AFError>.BufferingPolicy = .unbounded
    ) -> Stream<Serializer.SerializedObject, AFError> where Serializer.SerializedObject: Sendable {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, feed in
            request.appendStream(
                .serialized(on: request.underlyingQueue), serializing: DataStreamRequest.serializing(with: serializer), deliver: feed.yield,
                complete: feed.finish)
        }
    }

    private func createStream<Success: Sendable, Failure: Error>(
        automaticallyCancelling shouldAutomaticallyCancel: Bool, bufferingPolicy: Stream<Success, Failure>.BufferingPolicy,
        register: @escaping @Sendable (DataStreamRequest, StreamFeed<DataStreamRequest.Stream<Success, Failure>>) -> Void
    ) -> Stream<Success, Failure> {
        let request = request
        return .fed(by: request, automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { feed in
            register(request, feed)
        }
    }

    /// Cancel the underlying `DataStreamRequest`.
    public func cancel() {
        request.cancel()
    }

    /// Resume the underlying `DataStreamRequest`.
    public func resume() {
        request.resume()
    }

    /// Suspend the underlying `DataStreamRequest`.
    public func suspend() {
        request.suspend()
    }
}

extension StreamOf where Element: Sendable {
    /// A stream for an async task type: each iteration registers a feed of its own on `request`
    /// (as Alamofire's streams each add a handler), and an iteration that ends while the request
    /// still runs cancels it when `shouldAutomaticallyCancel`.
    static func fed(
        by request: Request, automaticallyCancelling shouldAutomaticallyCancel: Bool, bufferingPolicy: BufferingPolicy,
        register: @escaping @Sendable (StreamFeed<Element>) -> Void
    ) -> StreamOf {
        StreamOf(
            eachIteration: { continuation in
                let feed = StreamFeed<Element>(continuation)
                continuation.onTermination = { _ in
                    feed.terminate()
                    guard shouldAutomaticallyCancel, request.isInitialized || request.isResumed || request.isSuspended else { return }
                    request.cancel()
                }
                register(feed)
                return { feed.took() }
            }, bufferingPolicy: bufferingPolicy)
    }
}

/// Feeds one iteration of an async stream for a stream request, remembering, for each element not
/// yet taken by the consumer, how to release its bytes: an element counts against the request's
/// back-pressure until the iterator hands it out.
final class StreamFeed<Element: Sendable>: Sendable {
    private struct State {
        var pending: [@Sendable () -> Void] = []
        var terminated = false
    }

    private let continuation: AsyncStream<Element>.Continuation
    private let state = Mutex(State())

    init(_ continuation: AsyncStream<Element>.Continuation) {
        self.continuation = continuation
    }

    /// Yields `element`: its delivery is reported at once, its bytes released once the consumer has
    /// taken it (or is gone).
    func yield(_ element: Element, receipt: ChunkReceipt) {
        yield(element, released: receipt.released, handled: receipt.handled, delivered: receipt.delivered)
    }

    /// Yields `element`, calling `release` once the consumer has taken it (or is gone).
    func yield(_ element: Element, releasing release: @escaping @Sendable () -> Void) {
        yield(element, released: release, handled: release, delivered: {})
    }

    private func yield(
        _ element: Element, released: @escaping @Sendable () -> Void, handled: () -> Void, delivered: () -> Void
    ) {
        let accepted = state.withLock { state in
            if !state.terminated { state.pending.append(released) }
            return !state.terminated
        }
        guard accepted else { return handled() }
        let result = continuation.yield(element)
        delivered()
        switch result {
        case .enqueued: break
        // The buffering policy dropped an element: it will never be taken.
        case .dropped: took()
        case .terminated: terminate()
        @unknown default: took()
        }
    }

    /// Ends the stream.
    func finish() {
        continuation.finish()
    }

    /// Yields the last element and ends the stream.
    func finish(with element: Element) {
        continuation.yield(element)
        continuation.finish()
    }

    /// The consumer took one element.
    func took() {
        state.withLock { $0.pending.isEmpty ? nil : $0.pending.removeFirst() }?()
    }

    /// The consumer is gone: nothing it was given will be taken any more.
    func terminate() {
        let pending = state.withLock { state in
            state.terminated = true
            defer { state.pending.removeAll() }
            return state.pending
        }
        pending.forEach { $0() }
    }
}

extension DataStreamRequest {
    /// Creates a `StreamOf<HTTPURLResponse>` for the instance's responses.
    ///
    /// - Parameter bufferingPolicy: `BufferingPolicy` that determines the stream's buffering behavior.`.unbounded` by default.
    /// - Returns:                   The `StreamOf<HTTPURLResponse>`.
    public func httpResponses(bufferingPolicy: StreamOf<HTTPURLResponse>.BufferingPolicy = .unbounded) -> StreamOf<HTTPURLResponse> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            onHTTPResponse(on: underlyingQueue) { (response: HTTPURLResponse) in continuation.yield(response) }
        }
    }

    /// Sets an async closure returning a `Request.ResponseDisposition`, called whenever the `DataStreamRequest`
    /// produces an `HTTPURLResponse`.
    ///
    /// - Parameter handler: Async closure executed when a new `HTTPURLResponse` is received and returning a
    ///                      `ResponseDisposition` value. This value determines whether to continue the request or cancel it as
    ///                      if `cancel()` had been called on the instance. Note, this closure is called on an arbitrary thread.
    /// - Returns:           The instance.
    @_disfavoredOverload
    @discardableResult
    @preconcurrency public func onHTTPResponse(
        perform handler: @escaping @Sendable (_ response: HTTPURLResponse) async -> ResponseDisposition
    ) -> Self {
        setHTTPResponseHandler(on: underlyingQueue, Self.awaiting(handler))
        return self
    }

    /// Sets an async closure called whenever the `DataStreamRequest` produces an `HTTPURLResponse`.
    ///
    /// - Parameter handler: Async closure executed when a new `HTTPURLResponse` is received.
    /// - Returns:           The instance.
    @discardableResult
    @preconcurrency public func onHTTPResponse(perform handler: @escaping @Sendable (_ response: HTTPURLResponse) async -> Void) -> Self {
        setHTTPResponseHandler(on: underlyingQueue, Self.allowing(after: handler))
        return self
    }

    /// Creates a `DataStreamTask` used to `await` streams of serialized values.
    ///
    /// - Returns: The `DataStreamTask`.
    public func streamTask() -> DataStreamTask {
        DataStreamTask(request: self)
    }
}
