import AFSynchronization
import AlamofireNIOTransport
package import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// A WebSocket task's exchanges, as URLSession's `URLSessionWebSocketTask` runs them: the handshake
/// goes through the session's policies like any request (cookies, redirects, challenges), a `101`
/// opens the WebSocket, and the task then hands its messages over until the server closes it (the
/// task succeeds), the connection fails (it fails) or it is cancelled. Anything but a `101` at the
/// end fails the task with `.badServerResponse`, after the response has been delivered.
extension LoadingTask {
    /// The handshake, on a connection of its own; `ws` and `wss` go as `http` and `https`.
    func openWebSocket(
        _ request: URLRequest, options: TransportWebSocketOptions, authorization: String?, resourceTimeRemaining: TimeAmount?,
        withholdingOriginBoundFields: Bool, generation: Int
    ) {
        guard let url = request.url, let wireURL = Self.httpURL(forWebSocket: url) else {
            return exchangeFailed(URLError(.unsupportedURL, userInfo: request.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:]))
        }
        // The policies see the request as the HTTP request it is on the wire (cookies are kept by
        // `http` and `https` URLs), and so do the redirects and challenges that follow.
        var wireRequest = request
        wireRequest.url = wireURL
        let policyRequest = wireRequest
        var sent = policyRequest
        prepareForWire(&sent, authorization: authorization)
        var transportRequest = session.transportRequest(
            for: sent, url: wireURL, body: nil, resourceTimeRemaining: resourceTimeRemaining,
            withholdingOriginBoundFields: withholdingOriginBoundFields)
        transportRequest.logger = logger
        transportRequest.clientIdentity = clientIdentity
        state.withLock { $0.cache.headersSent(transportRequest.headers) }
        let work = Task {
            do {
                let handshake = try await session.transport.openWebSocket(transportRequest, options: options)
                let (head, metrics, socket): (HTTPResponseHead, ExchangeMetrics, TransportWebSocket?) =
                    switch handshake {
                    case .upgraded(let socket): (socket.response, socket.metrics, socket)
                    case .refused(let collected): (collected.head, collected.completion.metrics, nil)
                    }
                let wire = ReceivedResponse(head: head, url: url)
                let transaction = TransactionMetrics(metrics, request: request, response: wire, clock: wallClock)
                let outcome = await withStorageWrites(for: head, response: wire, request: policyRequest) {
                    self.outcome(of: head, wire: wire, request: policyRequest)
                }
                decide(outcome.response, outcome.verdict) { state in
                    state.webSocket = socket
                    state.log.record(transaction)
                }
            } catch {
                exchangeFailed(LoadingSession.urlError(error, url: url))
            }
        }
        setCancelWork({ work.cancel() }, generation: generation)
    }

    /// The final response was delivered: reads the WebSocket's messages, or fails the task when the
    /// server did not switch protocols.
    func readWebSocket() {
        let (socket, url, generation) = state.withLock { state in
            let generation = state.work.start()
            return (state.webSocket, state.request.current.url ?? originalRequest.url, generation)
        }
        guard let socket else {
            return exchangeFailed(URLError(.badServerResponse, userInfo: url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:]))
        }
        delegate.loadingTask(self, didOpenWebSocketWithProtocol: socket.subprotocol)
        // On the connection's event loop, where the messages are produced, when the delegate takes
        // them there (as a streamed body's chunks): each reaches its consumers with one thread crossing.
        let executor = delegate.loadingTaskTakesStreamedBodyOnEventLoop(self) ? EventLoopTaskExecutor(socket.eventLoop) : nil
        let work = Task(executorPreference: executor) { [self] in
            do {
                for try await event in socket.events {
                    switch event {
                    case .message(let message):
                        delegate.loadingTask(self, didReceive: Self.foundationMessage(message))
                        await delegate.loadingTaskAwaitsBodyDemand(self)
                    case .closed(let code, let reason):
                        let closeCode = code.map { URLSessionWebSocketTask.CloseCode(rawValue: Int($0)) ?? .invalid } ?? .noStatusReceived
                        delegate.loadingTask(self, didCloseWith: closeCode, reason: reason.readableBytes > 0 ? reason.readableData : nil)
                    }
                }
                perform(state.withLock { $0.machine.bodyReceived() })
            } catch {
                exchangeFailed(LoadingSession.urlError(error, url: url ?? URL(fileURLWithPath: "/")))
            }
        }
        setCancelWork(
            {
                socket.cancel()
                work.cancel()
            }, generation: generation)
    }

    // MARK: The WebSocket's controls

    /// The WebSocket once the delegate has allowed its response (its messages are read from then on),
    /// until the task completes.
    private var openSocket: TransportWebSocket? {
        state.withLock { state in
            guard case .receivingBody = state.machine.state else { return nil }
            return state.webSocket
        }
    }

    /// Sends a message, then calls `completion` with nil or the `URLError` (`.networkConnectionLost`
    /// when the WebSocket is not open). Messages go in the order of the calls.
    package func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable (URLError?) -> Void) {
        guard let socket = openSocket else { return completion(notOpen) }
        let wireMessage: TransportWebSocketMessage
        switch message {
        case .data(let data): wireMessage = .binary(ByteBuffer(bytes: data))
        case .string(let string): wireMessage = .text(string)
        @unknown default: return completion(URLError(.unsupportedURL))
        }
        let url = originalRequest.url ?? URL(fileURLWithPath: "/")
        socket.send(wireMessage) { error in completion(error.map { LoadingSession.urlError($0, url: url) }) }
    }

    /// Sends a ping, then calls `completion` when the pong arrives (nil) or the WebSocket closes first.
    package func sendPing(completion: @escaping @Sendable (URLError?) -> Void) {
        guard let socket = openSocket else { return completion(notOpen) }
        let url = originalRequest.url ?? URL(fileURLWithPath: "/")
        socket.ping { error in completion(error.map { LoadingSession.urlError($0, url: url) }) }
    }

    /// Abandons the WebSocket, failing the task with `error` (a missed pong).
    package func abandonWebSocket(failingWith error: URLError) {
        let socket = state.withLock { state -> TransportWebSocket? in
            state.machine.recordError(error)
            return state.webSocket
        }
        socket?.cancel()
    }

    /// Starts the close handshake with `code` and `reason`: the task completes once the server
    /// answers (or does not, in time). Before the WebSocket is open, the task is cancelled.
    package func close(with code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        guard let socket = openSocket else { return cancel() }
        socket.close(code: UInt16(clamping: code.rawValue), reason: reason.map { ByteBuffer(bytes: $0) })
    }

    private var notOpen: URLError {
        URLError(.networkConnectionLost, userInfo: originalRequest.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
    }

    /// `ws` and `wss` as `http` and `https`; other schemes as they are, when HTTP.
    static func httpURL(forWebSocket url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        switch components.scheme?.lowercased() {
        case "ws": components.scheme = "http"
        case "wss": components.scheme = "https"
        case "http", "https": break
        default: return nil
        }
        return components.url
    }

    static func foundationMessage(_ message: TransportWebSocketMessage) -> URLSessionWebSocketTask.Message {
        switch message {
        case .text(let text): .string(text)
        case .binary(let bytes): .data(bytes.readableData)
        }
    }
}
