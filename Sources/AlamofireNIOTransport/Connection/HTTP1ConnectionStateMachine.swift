import NIOCore
import NIOHTTP1

/// The life of one HTTP/1.1 connection, one exchange at a time.
///
/// A connection is `idle` in the pool (a read stays pending so a close by the server is noticed at
/// once), runs one exchange (`active`: the request streams out while the response streams in), and
/// goes back to `idle` when both sides are done and both peers allow keep-alive. Anything unexpected
/// — a close, an error, a timeout, a cancellation, bytes while idle — ends in `closed`, failing the
/// exchange if one runs. The handler feeds events in and performs the returned actions; no I/O
/// happens here, so every transition is tested as a plain value.
struct HTTP1ConnectionStateMachine {
    enum RequestPhase: Equatable {
        /// Head sent; the body is still being written.
        case sendingBody
        case finished
    }

    enum ResponsePhase: Equatable {
        case waitingForHead
        /// Head received; `demand` says whether the consumer wants more body now.
        case receivingBody(demand: Bool)
        case finished
    }

    struct Exchange: Equatable {
        var request: RequestPhase
        var response: ResponsePhase
        var keepAlive: Bool
    }

    enum State: Equatable {
        case idle
        case active(Exchange)
        case closed
    }

    /// What the handler must do after an event.
    enum Action: Equatable {
        case none
        /// Write the request head (and, for in-memory bodies, the body and end).
        case sendRequest
        /// Hand the response head to the exchange's caller.
        case forwardHead(HTTPResponseHead)
        /// Hand body bytes to the consumer.
        case forwardBody(ByteBuffer)
        /// The response ended; if `reusable`, return the connection to the pool, else close it.
        case completeExchange(trailers: HTTPHeaders?, reusable: Bool)
        /// The response ended before the request body was fully sent: deliver it, stop sending, close.
        case completeExchangeAndClose(trailers: HTTPHeaders?)
        /// Fail the running exchange and close the connection.
        case failExchange(TransportErrorKind, close: Bool)
        /// The connection is gone while idle: tell the pool.
        case closeIdleConnection
    }

    /// Failure causes, kept abstract so the machine stays free of error values.
    enum TransportErrorKind: Equatable {
        /// Closed before any byte of the response: safe to retry on a fresh connection.
        case closedBeforeResponse
        /// Closed in the middle of the response.
        case closedDuringResponse
        /// An error before any byte of the response (a write to a connection the server had closed):
        /// retryable like `closedBeforeResponse` when it came from the connection itself.
        case errorBeforeResponse
        case timedOut
        case cancelled
        case error
    }

    private(set) var state: State = .idle
    /// Whether the exchange has seen any byte of a response, for the retry decision.
    private(set) var receivedResponseBytes = false

    /// Whether the handler should have a read pending now.
    var wantsRead: Bool {
        switch state {
        case .idle: true
        case .active(let exchange):
            switch exchange.response {
            case .waitingForHead: true
            case .receivingBody(let demand): demand
            case .finished: false
            }
        case .closed: false
        }
    }

    var isIdle: Bool { state == .idle }

    // MARK: Events from the pool and the consumer

    mutating func startExchange(keepAlive: Bool, hasStreamedBody: Bool) -> Action {
        switch state {
        case .idle:
            break
        case .closed:
            // The server closed it while it sat in the pool, before we noticed: not the request's fault.
            return .failExchange(.closedBeforeResponse, close: false)
        case .active:
            return .failExchange(.error, close: false)
        }
        state = .active(Exchange(request: hasStreamedBody ? .sendingBody : .finished, response: .waitingForHead, keepAlive: keepAlive))
        receivedResponseBytes = false
        return .sendRequest
    }

    mutating func requestBodyFinished() -> Action {
        guard case .active(var exchange) = state, exchange.request == .sendingBody else { return .none }
        exchange.request = .finished
        if exchange.response == .finished {
            state = exchange.keepAlive ? .idle : .closed
            return .completeExchange(trailers: nil, reusable: exchange.keepAlive)
        }
        state = .active(exchange)
        return .none
    }

    /// The consumer wants (or, with false, does not want) more body now.
    mutating func consumerDemand(_ demand: Bool) {
        guard case .active(var exchange) = state, case .receivingBody = exchange.response else { return }
        exchange.response = .receivingBody(demand: demand)
        state = .active(exchange)
    }

    mutating func cancel() -> Action { fail(.cancelled) }
    mutating func idleTimeoutFired() -> Action { fail(.timedOut) }

    // MARK: Events from the channel

    mutating func responseHead(_ head: HTTPResponseHead) -> Action {
        switch state {
        case .active(var exchange) where exchange.response == .waitingForHead:
            receivedResponseBytes = true
            exchange.response = .receivingBody(demand: true)
            exchange.keepAlive = exchange.keepAlive && head.isKeepAlive
            state = .active(exchange)
            return .forwardHead(head)
        default:
            return unexpectedResponse()
        }
    }

    mutating func responseBody(_ buffer: ByteBuffer) -> Action {
        guard case .active(let exchange) = state, case .receivingBody = exchange.response else { return unexpectedResponse() }
        return .forwardBody(buffer)
    }

    mutating func responseEnd(_ trailers: HTTPHeaders?) -> Action {
        guard case .active(var exchange) = state, case .receivingBody = exchange.response else { return unexpectedResponse() }
        exchange.response = .finished
        if exchange.request == .sendingBody {
            state = .closed
            return .completeExchangeAndClose(trailers: trailers)
        }
        state = exchange.keepAlive ? .idle : .closed
        return .completeExchange(trailers: trailers, reusable: exchange.keepAlive)
    }

    mutating func channelInactive() -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeIdleConnection
        case .active:
            return fail(receivedResponseBytes ? .closedDuringResponse : .closedBeforeResponse, close: false)
        case .closed:
            return .none
        }
    }

    mutating func errorCaught() -> Action {
        fail(receivedResponseBytes ? .error : .errorBeforeResponse)
    }

    /// A response part out of order, or one nobody asked for: the connection can no longer be trusted.
    private mutating func unexpectedResponse() -> Action {
        fail(receivedResponseBytes ? .error : .errorBeforeResponse)
    }

    /// Fails the running exchange; while idle, closes the connection; once closed, does nothing.
    private mutating func fail(_ kind: TransportErrorKind, close: Bool = true) -> Action {
        guard case .active = state else {
            if case .idle = state {
                state = .closed
                return .closeIdleConnection
            }
            return .none
        }
        state = .closed
        return .failExchange(kind, close: close)
    }
}
