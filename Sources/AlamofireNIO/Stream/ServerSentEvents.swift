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
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which the handler is called. `.main` by default.
    ///   - handler: Called with each event, then once with the completion.
    /// - Returns:   The instance.
    @discardableResult
    public func responseServerSentEvents(on queue: DispatchQueue = .main, handler: @escaping Handler<ServerSentEvent, Never>) -> Self {
        let parser = Mutex(ServerSentEventParser())
        let deliverEach = callingHandler(handler)
        // Chunks are parsed one after another on the serial serialization queue, so the parser sees them in order.
        appendStream(
            on: queue, serializing: { data -> Result<[ServerSentEvent], Never> in .success(parser.withLock { $0.parse(data) }) },
            deliver: { [unowned self] stream, handled in
                for event in stream.value ?? [] {
                    deliverEach(Stream(event: .stream(.success(event)), token: CancellationToken(self))) {}
                }
                handled()
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
    /// stops iterating or is cancelled. A response that is not a 200 `text/event-stream` ends the
    /// stream with its validation error, as it fails an `EventSource` for good.
    ///
    /// ```swift
    /// for try await event in AF.serverSentEvents("https://example.com/updates", reconnect: true) {
    ///     print(event.id ?? "-", event.data)
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
    /// - Returns:            The events, in order, across connections.
    public func serverSentEvents(
        _ convertible: any URLConvertible, headers: HTTPHeaders? = nil, interceptor: (any RequestInterceptor)? = nil,
        reconnect: Bool = false, reconnectionTime: TimeInterval = 3
    ) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let connections = Task {
            var parser = ServerSentEventParser()
            while !Task.isCancelled {
                var sent = headers ?? HTTPHeaders()
                sent.update(name: "Accept", value: "text/event-stream")
                sent.update(name: "Cache-Control", value: "no-cache")
                if let lastEventID = parser.lastEventID { sent.update(name: "Last-Event-ID", value: lastEventID) }
                let request = streamRequest(convertible, headers: sent, interceptor: interceptor)
                    .validate(statusCode: [200]).validate(contentType: ["text/event-stream"])
                var failure: AFError?
                for await stream in request.streamTask().streamingData() {
                    switch stream.event {
                    case .stream(.success(let data)):
                        for event in parser.parse(data) { continuation.yield(event) }
                    case .complete(let completion):
                        failure = completion.error
                    }
                }
                _ = parser.finish()
                if Task.isCancelled { break }
                if let failure, failure.isResponseValidationError || !reconnect { return continuation.finish(throwing: failure) }
                guard reconnect else { break }
                let delay = parser.reconnectionTime.map { TimeInterval($0) / 1000 } ?? reconnectionTime
                try? await Task.sleep(for: .seconds(delay))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in connections.cancel() }
        return events
    }
}
