import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The state of the exchange running on a connection that is not the state machine's business:
/// how the response reaches the caller, the body-writing task, counters and metrics.
/// Created by the transport, then touched only on the connection's event loop (hence `@unchecked`).
///
/// Every promise or completion the caller may be waiting on lives in ``delivery``, and the only ways out of it are
/// ``succeed(_:)`` and ``fail(_:)``, which settle all of them. A promise left pending would keep
/// its future, its callbacks and whatever they capture alive for good.
final class ActiveExchange: @unchecked Sendable {
    /// How the response reaches the caller; one case per phase, so no promise can be forgotten.
    enum Delivery {
        /// Streaming: the caller awaits the head; the completion is handed over with it.
        case awaitingHead(EventLoopPromise<TransportResponse>, completion: EventLoopPromise<ExchangeCompletion>)
        /// Streaming: the head was delivered; the body flows through `source` to the caller.
        case streamingBody(TransportResponseBody.Producer.Source, completion: EventLoopPromise<ExchangeCompletion>)
        /// Collecting: head and body are kept here and handed over once, at the end.
        case collecting(CollectedResponseHandler, head: HTTPResponseHead?, body: ByteBuffer, limit: Int)
        /// Every promise has been completed.
        case settled

        /// A streaming delivery on `eventLoop`, and the future of its head.
        static func streaming(on eventLoop: any EventLoop) -> (Delivery, EventLoopFuture<TransportResponse>) {
            let head = eventLoop.makePromise(of: TransportResponse.self)
            return (.awaitingHead(head, completion: eventLoop.makePromise()), head.futureResult)
        }

        /// A collecting delivery keeping at most `limit` bytes, which calls `completion` once, on
        /// `eventLoop`, with the response or the error.
        static func collecting(
            on eventLoop: any EventLoop, limit: Int,
            completion: @escaping @Sendable (Result<CollectedTransportResponse, any Error>) -> Void
        ) -> Delivery {
            .collecting(CollectedResponseHandler(eventLoop: eventLoop, completion: completion), head: nil, body: ByteBuffer(), limit: limit)
        }
    }

    /// Where a collected response goes: a closure called on the connection's event loop, as a
    /// promise's callback would be, without the promise, its future and the callback's wrapper (three
    /// allocations per request).
    struct CollectedResponseHandler: Sendable {
        let eventLoop: any EventLoop
        let completion: @Sendable (Result<CollectedTransportResponse, any Error>) -> Void

        func complete(_ result: Result<CollectedTransportResponse, any Error>) {
            if eventLoop.inEventLoop {
                completion(result)
            } else {
                eventLoop.execute { completion(result) }
            }
        }
    }

    let request: TransportRequest
    let head: HTTPRequestHead
    /// Total request body bytes, when known up front.
    let requestBodyLength: Int64?
    private(set) var delivery: Delivery
    var metrics: ExchangeMetrics
    /// When the request's total time runs out, if it has a limit.
    let deadline: NIODeadline?
    var bodyTask: Task<Void, Never>?
    /// Whether the request body's producer was started (it may have read from its source since).
    var bodyProducerStarted = false
    /// Completed when the channel becomes writable again, to resume a body writer.
    var writabilityPromise: EventLoopPromise<Void>?
    /// Body bytes sent (the metrics' and the upload progress's count): a buffer's once handed to the
    /// channel, a file slice's once written to the socket.
    var requestBodyBytesSent: Int64 = 0
    /// Whether a body byte was handed to the channel, written or not: then some may have reached
    /// the server, so a request that is not idempotent may not go again.
    var requestBodyHandedOn = false
    var responseBodyBytes: Int64 = 0
    var expectedResponseLength: Int64?
    var wireBytesAtStart: Int64 = 0
    var lastActivity: NIODeadline = .now()
    var idleTimeoutTask: NIOScheduledCallback?
    /// Whether the exchange may be retried on a new connection if this one turns out dead.
    var mayRetryOnFreshConnection = false
    /// Whether the request body can be sent again: a stream's producer may have read bytes it never
    /// sent, so only one that never ran can start over.
    var bodyIsReplayable: Bool {
        switch request.body {
        case .none, .bytes, .file, .replayableStream: true
        case .stream: bodyTask == nil && !bodyProducerStarted
        }
    }
    /// The handler running the exchange, once it has started: where a cancellation goes.
    weak var handler: ExchangeHandler?
    /// Where the exchange's cancellation is decided: a cancel that arrives before the exchange has
    /// reached its handler (an HTTP/2 stream still being opened) is found there when it starts.
    /// Let go once the exchange has ended, as the controller holds the exchange it runs.
    private(set) var controller: ExchangeController?
    private let tracker: ExchangeTracker?

    init(
        request: TransportRequest, head: HTTPRequestHead, requestBodyLength: Int64?, delivery: Delivery, metrics: ExchangeMetrics,
        deadline: NIODeadline? = nil, controller: ExchangeController? = nil, tracker: ExchangeTracker? = nil
    ) {
        self.controller = controller
        self.request = request
        self.head = head
        self.requestBodyLength = requestBodyLength
        self.delivery = delivery
        self.metrics = metrics
        self.deadline = deadline
        self.tracker = tracker
        tracker?.exchangeCreated()
    }

    deinit {
        if case .settled = delivery {} else { tracker?.exchangeDroppedUnsettled() }
        tracker?.exchangeDestroyed()
    }

    /// The response head arrived. A streaming exchange hands it over with a body the caller pulls
    /// (`demand` hears when the caller wants more or has gone); a collecting one keeps it.
    func receivedHead(_ responseHead: HTTPResponseHead, demand: @autoclosure () -> ResponseBodyDemand) {
        switch delivery {
        case .awaitingHead(let headPromise, let completion):
            let producer = TransportResponseBody.Producer.makeSequence(
                backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: false, delegate: demand())
            delivery = .streamingBody(producer.source, completion: completion)
            headPromise.succeed(
                TransportResponse(
                    head: responseHead, body: TransportResponseBody(producer: producer.sequence), completion: completion.futureResult))
        case .collecting(let handler, _, var body, let limit):
            // Room for what was announced, up to a small bound: memory follows the bytes that
            // arrive, so a server announcing gigabytes makes nothing large before they come.
            if let length = expectedResponseLength, length > 0, length <= limit {
                body.reserveCapacity(Int(min(length, Self.largestReservation)))
            }
            delivery = .collecting(handler, head: responseHead, body: body, limit: limit)
        case .streamingBody, .settled:
            break
        }
    }

    /// What became of a chunk of the response body.
    enum BodyOutcome {
        case accepted
        /// The consumer wants no more for now.
        case stopProducing
        /// A collected body would grow past its limit.
        case overLimit(Int)
    }

    /// Passes a chunk of the body to the caller, or keeps it when collecting.
    func receivedBody(_ buffer: ByteBuffer) -> BodyOutcome {
        switch delivery {
        case .streamingBody(let source, _):
            if case .stopProducing = source.yield(buffer) { return .stopProducing }
            return .accepted
        case .collecting(let handler, let head, var body, let limit):
            guard body.readableBytes + buffer.readableBytes <= limit else { return .overLimit(limit) }
            // Out of the enum while it grows, so the buffer is not copied.
            delivery = .settled
            var buffer = buffer
            body.writeBuffer(&buffer)
            delivery = .collecting(handler, head: head, body: body, limit: limit)
            return .accepted
        case .awaitingHead, .settled:
            return .accepted
        }
    }

    /// The most a collected body reserves for its announced length before its bytes arrive.
    static let largestReservation: Int64 = 64 * 1024

    /// Ends the exchange successfully: the body ends and every promise is completed.
    func succeed(_ completion: ExchangeCompletion) {
        let delivery = self.delivery
        self.delivery = .settled
        stopWork(writerError: TransportError.cancelled)
        switch delivery {
        case .awaitingHead(let headPromise, let completionPromise):
            // Only the state machine's order of events prevents this; fail rather than leave it pending.
            headPromise.fail(Self.endedWithoutHead)
            completionPromise.fail(Self.endedWithoutHead)
        case .streamingBody(let source, let completionPromise):
            source.finish()
            completionPromise.succeed(completion)
        case .collecting(let handler, let head?, let body, _):
            handler.complete(.success(CollectedTransportResponse(head: head, body: body, completion: completion)))
        case .collecting(let handler, nil, _, _):
            handler.complete(.failure(Self.endedWithoutHead))
        case .settled:
            break
        }
    }

    private static let endedWithoutHead = TransportError.badResponse("the exchange ended without a response head")

    /// Ends the exchange with an error wherever it is: before the head, the caller gets it; after,
    /// the body consumer and `finished()` do.
    func fail(_ error: any Error) {
        let delivery = self.delivery
        self.delivery = .settled
        stopWork(writerError: error)
        switch delivery {
        case .awaitingHead(let headPromise, let completion):
            headPromise.fail(error)
            completion.fail(error)
        case .streamingBody(let source, let completion):
            source.finish(error)
            completion.fail(error)
        case .collecting(let handler, _, _, _):
            handler.complete(.failure(error))
        case .settled:
            break
        }
    }

    /// Stops the timer and the body writer; a writer waiting for the channel to drain is released
    /// with `writerError` (a server may answer before it has read the whole body). The error is made
    /// only for such a writer: boxed as `any Error` it allocates, which a success would do for nothing.
    private func stopWork(writerError: @autoclosure () -> any Error) {
        idleTimeoutTask?.cancel()
        idleTimeoutTask = nil
        bodyTask?.cancel()
        bodyTask = nil
        if let writabilityPromise {
            self.writabilityPromise = nil
            writabilityPromise.fail(writerError())
        }
        controller = nil
    }

    /// The size of the request head on the wire.
    var headByteCount: Int64 { Self.headByteCount(head) }

    static func headByteCount(_ head: HTTPRequestHead) -> Int64 {
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

/// Counts a transport's exchanges that are still alive, and those that were dropped with a promise
/// pending: both must come back to zero once the transport is idle. Two atomic adds per exchange.
final class ExchangeTracker: Sendable {
    private let live = Atomic<Int>(0)
    private let droppedUnsettled = Atomic<Int>(0)

    /// Exchanges not yet deallocated.
    var liveExchanges: Int { live.load(ordering: .relaxed) }
    /// Exchanges deallocated with a caller's promise never completed (a bug if ever non-zero).
    var unsettledExchanges: Int { droppedUnsettled.load(ordering: .relaxed) }

    func exchangeCreated() { live.add(1, ordering: .relaxed) }
    func exchangeDestroyed() { live.subtract(1, ordering: .relaxed) }
    func exchangeDroppedUnsettled() { droppedUnsettled.add(1, ordering: .relaxed) }
}
