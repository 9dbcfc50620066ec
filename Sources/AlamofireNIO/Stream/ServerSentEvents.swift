import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Server-Sent Events on top of `DataStreamRequest` (AlamofireNIO's own; Alamofire has none):
// `responseServerSentEvents` decodes one response's `text/event-stream` body into events for a
// handler, and `Session.serverSentEvents` is an EventSource: an async stream of events that
// reconnects, sending `Last-Event-ID`, when the connection ends.

extension DataStreamRequest {
    /// Adds a handler that gets each event of a `text/event-stream` body (Server-Sent Events), decoded
    /// by the WHATWG rules whatever the chunks' boundaries, then the stream's completion.
    ///
    /// ```swift
    /// AF.streamRequest(url).responseServerSentEvents { stream in
    ///     if let event = stream.value { print(event.event, event.data) }
    /// }
    /// ```
    ///
    /// A line or an event's data longer than `maximumEventSize` cancels the request, which completes with
    /// `AFError.responseSerializationFailed(reason: .customSerializationFailed(error:))` carrying
    /// ``ServerSentEventParser/EventTooLarge``.
    ///
    /// - Parameters:
    ///   - queue:            `DispatchQueue` on which the handler is called. `.main` by default.
    ///   - maximumEventSize: The most bytes a line or an event's data may hold. 4 MiB by default.
    ///   - handler:          Called with each event, then once with the completion.
    /// - Returns:            The instance.
    @discardableResult
    @preconcurrency public func responseServerSentEvents(
        on queue: DispatchQueue = .main, maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize,
        handler: @escaping Handler<ServerSentEvent, Never>
    ) -> Self {
        let parser = Mutex(ServerSentEventParser(maximumEventSize: maximumEventSize))
        // Chunks are parsed one after another on the serial serialization queue, so the parser sees them in order.
        appendStream(
            .serialized(on: queue),
            serializing: { data in
                parser.withLock { parser in Result { () throws(ServerSentEventParser.EventTooLarge) in try parser.parse(data) } }
            },
            deliver: { [unowned self] (stream: Stream<[ServerSentEvent], ServerSentEventParser.EventTooLarge>, receipt: ChunkReceipt) in
                switch stream.result {
                case .success(let events)?:
                    for event in events {
                        capturingError { try handler(Stream(event: .stream(.success(event)), token: CancellationToken(self))) }
                    }
                case .failure(let tooLarge)?:
                    capturingError { throw tooLarge }
                case nil:
                    break
                }
                receipt.handled()
            },
            complete: { [unowned self] stream in
                guard let completion = stream.completion else { return }
                try? handler(Stream(event: .complete(completion), token: CancellationToken(self)))
            })
        return self
    }
}

extension Session {
    /// Streams the Server-Sent Events of `convertible`, as a browser's `EventSource` does: the request
    /// asks for `text/event-stream` without caching; with `reconnect`, a connection that ends or fails
    /// is opened again after the reconnection time (the server's latest `retry`, else
    /// `reconnectionTime`), with `Last-Event-ID` set to the last event's ID, until the consuming task
    /// stops iterating or is cancelled. A response that is not a 200 `text/event-stream` is refused on
    /// its head (its body is not read) and ends the stream with its validation error, as it fails an
    /// `EventSource` for good.
    ///
    /// ```swift
    /// for try await event in AF.serverSentEvents("https://example.com/updates", reconnect: true) {
    ///     print(event.id ?? "-", event.event, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - convertible:      `URLConvertible` value of the event stream.
    ///   - headers:          `HTTPHeaders` to send too. `nil` by default.
    ///   - interceptor:      `RequestInterceptor` of each connection's request. `nil` by default.
    ///   - reconnect:        Whether to reconnect when a connection ends. `false` by default: the stream ends with
    ///                       the first connection (throwing its error, if it failed).
    ///   - reconnectionTime: Seconds to wait before reconnecting while the server has sent no `retry`. 3 by default.
    ///   - maximumEventSize: The most bytes a line or an event's data may hold. 4 MiB by default. A stream that goes
    ///                       past it is cancelled and ends, without reconnecting, throwing
    ///                       `AFError.responseSerializationFailed(reason: .customSerializationFailed(error:))` carrying
    ///                       ``ServerSentEventParser/EventTooLarge``.
    /// - Returns:            The events, in order, across connections.
    public func serverSentEvents(
        _ convertible: any URLConvertible, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        reconnect: Bool = false, reconnectionTime: TimeInterval = 3,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize
    ) -> ServerSentEventStream {
        ServerSentEventStream(
            session: self, convertible: convertible, headers: headers, interceptor: interceptor, reconnect: reconnect,
            reconnectionTime: reconnectionTime, maximumEventSize: maximumEventSize)
    }
}

/// The events of ``Session/serverSentEvents(_:headers:interceptor:reconnect:reconnectionTime:maximumEventSize:)``.
///
/// Pulled, not pushed: each iteration opens its own connections, and a chunk of the body is taken
/// from a connection only once the events before it have been taken, so a consumer that falls
/// behind holds the connection back (``DataStreamRequest/maximumBufferedBytes``) instead of piling
/// events up in memory. Leaving the loop, or cancelling its task, cancels the connection.
public struct ServerSentEventStream: AsyncSequence, Sendable {
    /// The events of the stream.
    public typealias Element = ServerSentEvent

    let session: Session
    let convertible: any URLConvertible
    let headers: HTTPHeaders?
    let interceptor: (any RequestInterceptor)?
    let reconnect: Bool
    let reconnectionTime: TimeInterval
    let maximumEventSize: Int

    /// Returns an iterator that opens its own connections to the event source.
    public func makeAsyncIterator() -> Iterator { Iterator(source: self) }

    /// The iterator of a ``ServerSentEventStream``.
    public struct Iterator: AsyncIteratorProtocol {
        /// One connection: its body's chunks, and the refusal of its head, if it was refused.
        private struct Connection {
            var chunks: DataStreamTask.Stream<Data, Never>.Iterator
            let refusal: Refusal
        }

        /// Set from the response handler's queue, read by the iterator once the connection completed.
        private final class Refusal: Sendable {
            let error = Mutex<AFError?>(nil)
        }

        private let source: ServerSentEventStream
        private var parser: ServerSentEventParser
        private var pending: [ServerSentEvent] = []
        private var connection: Connection?
        private var connections = 0
        private var isFinished = false

        init(source: ServerSentEventStream) {
            self.source = source
            self.parser = ServerSentEventParser(maximumEventSize: source.maximumEventSize)
        }

        /// Returns the next event, connecting (or reconnecting, when allowed) as needed; `nil` when the stream has ended.
        ///
        /// Throws when the server refuses the stream, when a line or an event's data grows past the stream's
        /// `maximumEventSize`, or when the connection fails and reconnection is off.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if isFinished || Task.isCancelled { return nil }
                if connection == nil {
                    if connections > 0 {
                        guard source.reconnect else { return nil }
                        let delay = parser.reconnectionTime.map { TimeInterval($0) / 1000 } ?? source.reconnectionTime
                        try? await Task.sleep(for: .seconds(delay))
                        if Task.isCancelled { return nil }
                    }
                    connection = open()
                    connections += 1
                }
                // Nil: the consuming task was cancelled, and the connection with it.
                guard let stream = await connection?.chunks.next() else {
                    connection = nil
                    continue
                }
                switch stream.event {
                case .stream(.success(let data)):
                    do {
                        pending = try parser.parse(data)
                    } catch {
                        // Dropping the connection's iterator cancels its request.
                        connection = nil
                        isFinished = true
                        throw AFError.responseSerializationFailed(reason: .customSerializationFailed(error: error))
                    }
                case .complete(let completion):
                    let refusal = connection?.refusal.error.withLock { $0 }
                    connection = nil
                    _ = parser.finish()
                    if let failure = refusal ?? (source.reconnect ? nil : completion.error) {
                        isFinished = true
                        throw failure
                    }
                }
            }
        }

        /// Opens a connection, resuming after the last event ID; its head is checked before any body
        /// byte is read.
        private func open() -> Connection {
            var sent = source.headers ?? HTTPHeaders()
            sent.update(name: "Accept", value: "text/event-stream")
            sent.update(name: "Cache-Control", value: "no-cache")
            if let lastEventID = parser.lastEventID { sent.update(name: "Last-Event-ID", value: lastEventID) }
            let refusal = Refusal()
            let request = source.session.streamRequest(
                source.convertible, headers: sent, interceptor: source.interceptor, shouldAutomaticallyResume: true
            )
            .onHTTPResponse(on: source.session.rootQueue) { response, completionHandler in
                let check = ResponseValidation.statusCode(response, acceptable: [200]).flatMap {
                    ResponseValidation.contentType(response, bodyIsEmpty: false, acceptable: ["text/event-stream"])
                }
                guard case .failure(let failure) = check else { return completionHandler(.allow) }
                refusal.error.withLock {
                    $0 = failure.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: failure)))
                }
                completionHandler(.cancel)
            }
            return Connection(chunks: request.streamTask().streamingData().makeAsyncIterator(), refusal: refusal)
        }
    }
}
