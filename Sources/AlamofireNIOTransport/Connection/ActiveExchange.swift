import Foundation
import NIOCore
import NIOHTTP1

/// The state of the exchange running on a connection that is not the state machine's business:
/// the caller's promises, the body producer's source, the body-writing task, counters and metrics.
/// Created by the transport, then touched only on the connection's event loop (hence `@unchecked`).
final class ActiveExchange: @unchecked Sendable {
    let request: TransportRequest
    let head: HTTPRequestHead
    /// Total request body bytes, when known up front.
    let requestBodyLength: Int64?
    let headPromise: EventLoopPromise<TransportResponse>
    let completionPromise: EventLoopPromise<ExchangeCompletion>
    var metrics: ExchangeMetrics

    var bodySource: TransportResponseBody.Producer.Source?
    /// Set when the caller wants the body collected: the head and body are kept here and handed
    /// over once, at the end.
    let collectedPromise: EventLoopPromise<CollectedTransportResponse>?
    let collectLimit: Int
    /// When the request's total time runs out, if it has a limit.
    let deadline: NIODeadline?
    var collectedHead: HTTPResponseHead?
    var collectedBody = ByteBuffer()
    var bodyTask: Task<Void, Never>?
    /// Completed when the channel becomes writable again, to resume a body writer.
    var writabilityPromise: EventLoopPromise<Void>?
    var requestBodyBytesSent: Int64 = 0
    var responseBodyBytes: Int64 = 0
    var expectedResponseLength: Int64?
    var wireBytesAtStart: Int64 = 0
    var lastActivity: NIODeadline = .now()
    var idleTimeoutTask: Scheduled<Void>?
    /// Whether the exchange may be retried on a new connection if this one turns out dead.
    var mayRetryOnFreshConnection = false

    init(
        request: TransportRequest, head: HTTPRequestHead, requestBodyLength: Int64?, headPromise: EventLoopPromise<TransportResponse>,
        completionPromise: EventLoopPromise<ExchangeCompletion>, metrics: ExchangeMetrics,
        collectedPromise: EventLoopPromise<CollectedTransportResponse>? = nil, collectLimit: Int = .max, deadline: NIODeadline? = nil
    ) {
        self.deadline = deadline
        self.collectedPromise = collectedPromise
        self.collectLimit = collectLimit
        self.request = request
        self.head = head
        self.requestBodyLength = requestBodyLength
        self.headPromise = headPromise
        self.completionPromise = completionPromise
        self.metrics = metrics
    }

    /// Ends the exchange with an error wherever it is: before the head, the caller gets it; after,
    /// the body consumer and `finished()` do.
    func fail(_ error: any Error) {
        idleTimeoutTask?.cancel()
        bodyTask?.cancel()
        writabilityPromise?.fail(error)
        writabilityPromise = nil
        headPromise.fail(error)
        collectedPromise?.fail(error)
        bodySource?.finish(error)
        bodySource = nil
        completionPromise.fail(error)
    }

    /// The size of the request head on the wire.
    var headByteCount: Int64 {
        var count = head.method.rawValue.utf8.count + head.uri.utf8.count + 12  // " ", " HTTP/1.1\r\n"
        for (name, value) in head.headers { count += name.utf8.count + value.utf8.count + 4 }
        return Int64(count + 2)
    }

    static func headByteCount(_ head: HTTPResponseHead) -> Int64 {
        var count = 15 + head.status.reasonPhrase.utf8.count  // "HTTP/1.1 200 " + reason + "\r\n"
        for (name, value) in head.headers { count += name.utf8.count + value.utf8.count + 4 }
        return Int64(count + 2)
    }
}
