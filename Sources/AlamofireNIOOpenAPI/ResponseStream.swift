#if OpenAPI
import AFSynchronization
import AlamofireNIO
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// One operation's response: its head, awaited by the caller of `send`, and its body, read by
/// whoever takes the `HTTPBody` as the server sends it.
///
/// The request's stream is registered (and the request resumed) before the head is awaited, so no
/// chunk is missed; chunks the body's reader has not taken yet hold the connection back once they
/// pass the request's buffer limit. The head comes from `onHTTPResponse`; a request that finishes
/// without one (a connection error, a cancel) fails the wait with its error instead.
enum ResponseStream {
    static func start(
        _ request: DataStreamRequest, method: HTTPRequest.Method, queue: DispatchQueue
    ) async throws -> (
        HTTPResponse, HTTPBody?
    ) {
        let head = HeadWaiter()
        // The handler stays with the request: it must not hold it.
        request.onHTTPResponse(on: queue) { [weak request] response in
            let fields = request?.receivedHeaderFields ?? []
            head.arrived(.success(OpenAPIMapping.response(statusCode: response.statusCode, fields: fields)))
        }
        // A request that ends without an HTTP head failed, or got a response that is not HTTP.
        request.onFinish {
            head.arrived(.failure(request.error ?? AFError.sessionTaskFailed(error: URLError(.badServerResponse))))
        }
        let chunks = ChunkSource(request: request)
        // A session that does not start requests on their first handler.
        request.resume()
        let response: HTTPResponse
        do {
            response = try await withTaskCancellationHandler {
                try await head.value()
            } onCancel: {
                request.cancel()
            }
        } catch let error as AFError where error.isExplicitlyCancelledError && Task.isCancelled {
            throw CancellationError()
        }
        guard !OpenAPIMapping.hasNoBody(method: method, status: response.status) else {
            // The request ends on its own; it is not cancelled by the stream's end.
            try? await chunks.drain()
            return (response, nil)
        }
        let body = HTTPBody(ResponseChunks(source: chunks), length: OpenAPIMapping.bodyLength(of: response), iterationBehavior: .single)
        return (response, body)
    }
}

/// The response head, handed over once: to the caller waiting for it, or kept for it.
private final class HeadWaiter: Sendable {
    private struct State {
        var result: Result<HTTPResponse, any Error>?
        var waiter: CheckedContinuation<HTTPResponse, any Error>?
    }

    private let state = Mutex(State())

    /// The head arrived, or the request finished without one; anything after the first is ignored.
    func arrived(_ result: Result<HTTPResponse, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> HTTPResponse {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}

/// The request's body chunks, read by one consumer at a time: the `HTTPBody` is `.single`, so it
/// makes one iterator, and an iterator is used by one task at a time.
private final class ChunkSource: @unchecked Sendable {
    private var iterator: DataStreamTask.Stream<Data, Never>.Iterator
    private var ended = false

    /// Registers the request's stream: from here on, every chunk is kept for ``next()``.
    init(request: DataStreamRequest) {
        iterator = request.streamTask().streamingData(automaticallyCancelling: true).makeAsyncIterator()
    }

    /// The next chunk; nil at the end of the body. Throws the request's error if it failed, and
    /// `CancellationError` if the reading task was cancelled (which cancels the request).
    func next() async throws -> ArraySlice<UInt8>? {
        while !ended {
            guard let stream = await iterator.next() else {
                ended = true
                throw CancellationError()
            }
            switch stream.event {
            case .stream(let result):
                if case .success(let data) = result, !data.isEmpty { return ArraySlice(data) }
            case .complete(let completion):
                ended = true
                if let error = completion.error { throw error }
            }
        }
        return nil
    }

    /// Reads to the end, for a response that has no body to hand on.
    func drain() async throws {
        while try await next() != nil {}
    }
}

/// The response body as an async sequence for `HTTPBody`.
private struct ResponseChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let source: ChunkSource

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: ChunkSource

        mutating func next() async throws -> ArraySlice<UInt8>? {
            try await source.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: source)
    }
}
#endif
