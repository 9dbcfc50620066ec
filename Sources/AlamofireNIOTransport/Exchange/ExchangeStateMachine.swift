import NIOCore
import NIOHTTP1

/// The phases of one HTTP exchange, whatever carries it: an HTTP/1.1 connection or an HTTP/2 stream.
///
/// The request streams out while the response streams in; the exchange is over when the response
/// has ended and the request body is sent (or abandoned, when the server answered early). The
/// machine tracks the consumer's demand for body bytes (a read is held back while there is none),
/// whether the exchange may keep its carrier (keep-alive), and whether any response byte arrived,
/// which decides whether a failure may be retried elsewhere. It is a value: the channel's
/// ``ExchangeChannelStateMachine`` feeds it events and performs what it returns.
struct ExchangeStateMachine: Equatable {
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

    /// Why an exchange failed, kept abstract so the machine stays free of error values.
    enum FailureKind: Equatable {
        /// The carrier closed before any byte of the response: safe to retry on a fresh connection.
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

    /// What the carrier must do after an event.
    enum Outcome: Equatable {
        case none
        case forwardHead(HTTPResponseHead)
        case forwardBody(ByteBuffer)
        /// The response ended and the request was fully sent; `keepAlive` says whether the carrier
        /// may serve another exchange.
        case complete(trailers: HTTPHeaders?, keepAlive: Bool)
        /// The response ended while the request body was still going out: deliver it and stop sending.
        case completeAndStopSending(trailers: HTTPHeaders?)
        /// Response bytes out of order: the carrier can no longer be trusted.
        case unexpectedResponse
    }

    private(set) var request: RequestPhase
    private(set) var response: ResponsePhase = .waitingForHead
    private(set) var keepAlive: Bool
    /// Whether any byte of a response has arrived, for the retry decision.
    private(set) var receivedResponseBytes = false

    /// - Parameters:
    ///   - keepAlive: whether the request allows the carrier to be reused.
    ///   - hasStreamedBody: whether a body is still to be written after the head.
    init(keepAlive: Bool, hasStreamedBody: Bool) {
        self.request = hasStreamedBody ? .sendingBody : .finished
        self.keepAlive = keepAlive
    }

    /// Whether the carrier should read now: always while the head is awaited, while receiving only
    /// when the consumer wants more.
    var wantsRead: Bool {
        switch response {
        case .waitingForHead: true
        case .receivingBody(let demand): demand
        case .finished: false
        }
    }

    var isSendingBody: Bool { request == .sendingBody }
    var isReceivingResponse: Bool { response != .finished }

    /// The kind of failure an error reported now is.
    var errorKind: FailureKind { receivedResponseBytes ? .error : .errorBeforeResponse }
    /// The kind of failure the carrier closing now is.
    var closedKind: FailureKind { receivedResponseBytes ? .closedDuringResponse : .closedBeforeResponse }

    mutating func requestBodyFinished() -> Outcome {
        guard request == .sendingBody else { return .none }
        request = .finished
        return response == .finished ? .complete(trailers: nil, keepAlive: keepAlive) : .none
    }

    /// The consumer wants (or, with false, does not want) more body now.
    mutating func consumerDemand(_ demand: Bool) {
        guard case .receivingBody = response else { return }
        response = .receivingBody(demand: demand)
    }

    mutating func responseHead(_ head: HTTPResponseHead) -> Outcome {
        guard response == .waitingForHead else { return .unexpectedResponse }
        receivedResponseBytes = true
        response = .receivingBody(demand: true)
        keepAlive = keepAlive && head.isKeepAlive
        return .forwardHead(head)
    }

    mutating func responseBody(_ buffer: ByteBuffer) -> Outcome {
        guard case .receivingBody = response else { return .unexpectedResponse }
        return .forwardBody(buffer)
    }

    mutating func responseEnd(_ trailers: HTTPHeaders?) -> Outcome {
        guard case .receivingBody = response else { return .unexpectedResponse }
        response = .finished
        if request == .sendingBody { return .completeAndStopSending(trailers: trailers) }
        return .complete(trailers: trailers, keepAlive: keepAlive)
    }
}
