import NIOCore
import NIOHTTP1

/// The life of a channel that carries exchanges: an HTTP/1.1 connection (one exchange at a time,
/// reused while both peers allow keep-alive) or an HTTP/2 stream (exactly one exchange).
///
/// The channel is `idle` between exchanges (an HTTP/1.1 connection in the pool keeps a read pending
/// so a close by the server is noticed at once), runs one ``ExchangeStateMachine`` while `active`,
/// and goes back to `idle` when the exchange is done and may keep the channel. Anything unexpected —
/// a close, an error, a timeout, a cancellation, bytes while idle — ends in `closed`, failing the
/// exchange if one runs. The handler feeds events in and performs the returned actions; no I/O
/// happens here, so every transition is tested as a plain value.
struct ExchangeChannelStateMachine: Equatable {
    enum State: Equatable {
        case idle
        case active(ExchangeStateMachine)
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
        /// The response ended; if `reusable`, the channel serves again, else it is closed.
        case completeExchange(trailers: HTTPHeaders?, reusable: Bool)
        /// The response ended before the request body was fully sent: deliver it, stop sending, close.
        case completeExchangeAndClose(trailers: HTTPHeaders?)
        /// Fail the running exchange and, if `close`, close the channel.
        case failExchange(ExchangeStateMachine.FailureKind, close: Bool)
        /// The channel is gone while idle: tell the owner.
        case closeIdleConnection
    }

    private(set) var state: State = .idle

    /// Whether the handler should have a read pending now.
    var wantsRead: Bool {
        switch state {
        case .idle: true
        case .active(let exchange): exchange.wantsRead
        case .closed: false
        }
    }

    var isIdle: Bool { state == .idle }

    /// The running exchange's machine, if one runs.
    var exchange: ExchangeStateMachine? {
        if case .active(let exchange) = state { return exchange }
        return nil
    }

    // MARK: Events from the owner and the consumer

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
        state = .active(ExchangeStateMachine(keepAlive: keepAlive, hasStreamedBody: hasStreamedBody))
        return .sendRequest
    }

    mutating func requestBodyFinished() -> Action {
        guard case .active(var exchange) = state else { return .none }
        let outcome = exchange.requestBodyFinished()
        return apply(outcome, to: exchange)
    }

    /// The consumer wants (or, with false, does not want) more body now.
    mutating func consumerDemand(_ demand: Bool) {
        guard case .active(var exchange) = state else { return }
        exchange.consumerDemand(demand)
        state = .active(exchange)
    }

    mutating func cancel() -> Action { fail(.cancelled) }
    mutating func idleTimeoutFired() -> Action { fail(.timedOut) }

    // MARK: Events from the channel

    mutating func responseHead(_ head: HTTPResponseHead) -> Action {
        guard case .active(var exchange) = state else { return unexpectedResponse() }
        return apply(exchange.responseHead(head), to: exchange)
    }

    mutating func responseBody(_ buffer: ByteBuffer) -> Action {
        guard case .active(var exchange) = state else { return unexpectedResponse() }
        return apply(exchange.responseBody(buffer), to: exchange)
    }

    mutating func responseEnd(_ trailers: HTTPHeaders?) -> Action {
        guard case .active(var exchange) = state else { return unexpectedResponse() }
        return apply(exchange.responseEnd(trailers), to: exchange)
    }

    mutating func channelInactive() -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeIdleConnection
        case .active(let exchange):
            return fail(exchange.closedKind, close: false)
        case .closed:
            return .none
        }
    }

    mutating func errorCaught() -> Action {
        fail(exchange?.errorKind ?? .error)
    }

    // MARK: Helpers

    /// Stores the exchange's new state and turns its outcome into the channel's action.
    private mutating func apply(_ outcome: ExchangeStateMachine.Outcome, to exchange: ExchangeStateMachine) -> Action {
        state = .active(exchange)
        switch outcome {
        case .none:
            return .none
        case .forwardHead(let head):
            return .forwardHead(head)
        case .forwardBody(let buffer):
            return .forwardBody(buffer)
        case .complete(let trailers, let keepAlive):
            state = keepAlive ? .idle : .closed
            return .completeExchange(trailers: trailers, reusable: keepAlive)
        case .completeAndStopSending(let trailers):
            state = .closed
            return .completeExchangeAndClose(trailers: trailers)
        case .unexpectedResponse:
            return unexpectedResponse()
        }
    }

    /// A response part out of order, or one nobody asked for: the channel can no longer be trusted.
    private mutating func unexpectedResponse() -> Action {
        fail(exchange?.errorKind ?? .errorBeforeResponse)
    }

    /// Fails the running exchange; while idle, closes the channel; once closed, does nothing.
    private mutating func fail(_ kind: ExchangeStateMachine.FailureKind, close: Bool = true) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failExchange(kind, close: close)
        case .idle:
            state = .closed
            return .closeIdleConnection
        case .closed:
            return .none
        }
    }
}
