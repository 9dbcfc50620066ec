public import NIOCore
public import NIOHTTP1

/// An open WebSocket: the server's upgrade response, what was negotiated, and the connection's
/// controls. Read ``events`` (once) for the server's messages and close; the connection reads
/// from the socket only as fast as they are taken.
public final class TransportWebSocket: Sendable {
    /// The server's `101 Switching Protocols` response.
    public let response: HTTPResponseHead
    /// The subprotocol the server chose from those offered, if any.
    public let subprotocol: String?
    /// Whether the server accepted permessage-deflate: messages are compressed both ways.
    public let isCompressed: Bool
    /// The handshake's timings and addresses (its `responseEnd` is when the upgrade completed).
    public let metrics: ExchangeMetrics
    /// The server's messages, then its close; the sequence throws ``TransportError`` when the
    /// connection fails or the server breaks the protocol, and ends without a close when the client
    /// closed and the server did not answer in time.
    public let events: TransportWebSocketEvents
    /// The connection's event loop, where ``events`` are produced and sends complete.
    public let eventLoop: any EventLoop
    private let handler: NIOLoopBound<WebSocketConnectionHandler>

    init(
        response: HTTPResponseHead, subprotocol: String?, isCompressed: Bool, metrics: ExchangeMetrics, events: TransportWebSocketEvents,
        handler: NIOLoopBound<WebSocketConnectionHandler>, eventLoop: any EventLoop
    ) {
        self.response = response
        self.subprotocol = subprotocol
        self.isCompressed = isCompressed
        self.metrics = metrics
        self.events = events
        self.handler = handler
        self.eventLoop = eventLoop
    }

    /// Sends a message, then calls `completion` (on the event loop) with nil, or the
    /// ``TransportError`` when the WebSocket is closing or closed. Messages are sent in the order
    /// of the calls.
    public func send(_ message: TransportWebSocketMessage, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let promise = promise(reportingTo: completion)
        eventLoop.execute { [handler] in handler.value.send(message, promise: promise) }
    }

    /// Sends a ping, then calls `completion` (on the event loop) when the pong arrives, or with the
    /// ``TransportError`` when the WebSocket closes first.
    public func ping(completion: @escaping @Sendable ((any Error)?) -> Void) {
        let promise = promise(reportingTo: completion)
        eventLoop.execute { [handler] in handler.value.ping(promise: promise) }
    }

    /// A promise that calls `completion` with nil or its error.
    private func promise(reportingTo completion: @escaping @Sendable ((any Error)?) -> Void) -> EventLoopPromise<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { result in
            if case .failure(let error) = result { completion(error) } else { completion(nil) }
        }
        return promise
    }

    /// Starts the close handshake: sends a close frame with `code` and `reason`; the server's
    /// answer ends ``events``. Does nothing once closing.
    public func close(code: UInt16, reason: ByteBuffer? = nil) {
        eventLoop.execute { [handler] in handler.value.close(code: code, reason: reason) }
    }

    /// Abandons the connection: a `1001 Going Away` close frame is sent without waiting for an
    /// answer, and ``events`` throws `.cancelled`.
    public func cancel() {
        eventLoop.execute { [handler] in handler.value.cancel() }
    }
}

/// The events of a ``TransportWebSocket``, read by one consumer.
public struct TransportWebSocketEvents: AsyncSequence, Sendable {
    public typealias Element = TransportWebSocketEvent
    let producer: WebSocketConnectionHandler.Producer

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: WebSocketConnectionHandler.Producer.AsyncIterator

        public mutating func next() async throws -> TransportWebSocketEvent? {
            do {
                return try await base.next()
            } catch is CancellationError {
                throw TransportError.cancelled
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: producer.makeAsyncIterator())
    }
}

/// What a WebSocket handshake ends with.
public enum TransportWebSocketHandshake: Sendable {
    /// The server switched protocols: the WebSocket is open.
    case upgraded(TransportWebSocket)
    /// The server answered with an ordinary response (a redirect, a challenge, a refusal), read
    /// whole; the connection is closed.
    case refused(CollectedTransportResponse)
}

/// How a WebSocket is opened and run.
public struct TransportWebSocketOptions: Sendable, Hashable {
    /// The subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String]
    /// The largest message accepted from the server; a larger one closes the connection with 1009.
    public var maximumMessageSize: Int
    /// How long the server has to answer the client's close frame.
    public var closeTimeout: TimeAmount
    /// Whether permessage-deflate (RFC 7692) is offered; when the server accepts it, messages are
    /// compressed both ways.
    public var offersCompression: Bool

    /// - Parameters:
    ///   - subprotocols: the subprotocols to offer.
    ///   - maximumMessageSize: the largest message accepted (1 MiB by default, as URLSession's).
    ///   - closeTimeout: how long to wait for the server's close (5 s by default).
    ///   - offersCompression: whether permessage-deflate is offered (by default).
    public init(
        subprotocols: [String] = [], maximumMessageSize: Int = 1 << 20, closeTimeout: TimeAmount = .seconds(5),
        offersCompression: Bool = true
    ) {
        self.subprotocols = subprotocols
        self.maximumMessageSize = maximumMessageSize
        self.closeTimeout = closeTimeout
        self.offersCompression = offersCompression
    }
}
