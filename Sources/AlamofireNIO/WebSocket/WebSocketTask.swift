public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A `WebSocketRequest` for async/await: its events and messages as `StreamOf` sequences, and its
/// controls.
@_spi(WebSocket) public struct WebSocketTask: Sendable {
    private let request: WebSocketRequest

    fileprivate init(request: WebSocketRequest) {
        self.request = request
    }

    /// A stream of a WebSocket's events.
    public typealias EventStreamOf<Success: Sendable, Failure: Error> = StreamOf<WebSocketRequest.Event<Success, Failure>>

    /// The events, with the messages as they arrived; the stream ends after `.completed`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether the request is cancelled when the stream's iteration
    ///                                ends early. `true` by default.
    ///   - bufferingPolicy:           How the stream buffers events not yet taken. `.unbounded` by default.
    public func streamingMessageEvents(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: EventStreamOf<URLSessionWebSocketTask.Message, Never>.BufferingPolicy = .unbounded
    ) -> EventStreamOf<URLSessionWebSocketTask.Message, Never> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0 }) { onEvent in
            _ = request.streamSerializer(PassthroughWebSocketMessageDecoder(), inline: true, delivering: onEvent)
        }
    }

    /// The messages only; the stream ends when the request completes.
    public func streamingMessages(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: StreamOf<URLSessionWebSocketTask.Message>.BufferingPolicy = .unbounded
    ) -> StreamOf<URLSessionWebSocketTask.Message> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0.message }) {
            onEvent in
            _ = request.streamSerializer(PassthroughWebSocketMessageDecoder(), inline: true, delivering: onEvent)
        }
    }

    /// The events, each message decoded as `Value`.
    public func streamingDecodableEvents<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        using decoder: any DataDecoder = JSONDecoder(), bufferingPolicy: EventStreamOf<Value, any Error>.BufferingPolicy = .unbounded
    ) -> EventStreamOf<Value, any Error> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0 }) { onEvent in
            _ = request.streamSerializer(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), delivering: onEvent)
        }
    }

    /// The decoded messages only.
    public func streamingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        using decoder: any DataDecoder = JSONDecoder(), bufferingPolicy: StreamOf<Value>.BufferingPolicy = .unbounded
    ) -> StreamOf<Value> {
        createStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy, transform: { $0.message }) {
            onEvent in
            _ = request.streamSerializer(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), delivering: onEvent)
        }
    }

    private func createStream<Success, Value: Sendable, Failure: Error>(
        automaticallyCancelling shouldAutomaticallyCancel: Bool, bufferingPolicy: StreamOf<Value>.BufferingPolicy,
        transform: @escaping @Sendable (WebSocketRequest.Event<Success, Failure>) -> Value?,
        forResponse register:
            @Sendable @escaping (@escaping @Sendable (WebSocketRequest.Event<Success, Failure>, @escaping @Sendable () -> Void) -> Void) ->
            Void
    ) -> StreamOf<Value> {
        // A message counts against the request's back-pressure until the consumer takes it, so a
        // slow consumer stops the socket's reads.
        .fed(by: request, automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { feed in
            register { event, release in
                if let value = transform(event) { feed.yield(value, releasing: release) } else { release() }
                if case .completed = event.kind { feed.finish() }
            }
        }
    }

    /// Sends a message; returns once it is written (a message sent before the WebSocket opens
    /// waits for it).
    public func send(_ message: URLSessionWebSocketTask.Message) async throws {
        // Resumed where the write completes: no queue of the caller's is involved.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            request.send(message, completingOn: nil) { result in
                continuation.resume(with: result)
            }
        }
    }

    /// Closes the underlying `WebSocketRequest`.
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
        request.close(sending: closeCode, reason: reason)
    }

    /// Cancels the underlying `WebSocketRequest`; the request fails with `AFError.explicitlyCancelled`.
    public func cancel() {
        request.cancel()
    }

    /// Resumes the underlying `WebSocketRequest`.
    public func resume() {
        request.resume()
    }

    /// Suspends the underlying `WebSocketRequest`.
    public func suspend() {
        request.suspend()
    }
}

extension WebSocketRequest {
    /// A `WebSocketTask` for this request, for async/await.
    public func webSocketTask() -> WebSocketTask {
        WebSocketTask(request: self)
    }
}
