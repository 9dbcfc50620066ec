import Foundation
public import NIOCore
public import NIOHTTP1

/// A response head, with its body still to be read.
///
/// Read ``body`` to the end (or drop it: the connection is then closed rather than reused); then
/// ``finished()`` gives the trailers and the exchange's metrics.
public struct TransportResponse: Sendable {
    /// The status line and header fields.
    public let head: HTTPResponseHead
    /// The body, pulled by the consumer: the connection reads only as fast as the body is consumed.
    public let body: TransportResponseBody
    let completion: EventLoopFuture<ExchangeCompletion>

    /// The event loop of the connection the response arrives on: where the body's chunks are
    /// produced, so a consumer running there takes them without a thread crossing.
    public var eventLoop: any EventLoop { completion.eventLoop }

    /// Waits for the end of the body and returns what came with it.
    public func finished() async throws -> ExchangeCompletion {
        try await completion.get()
    }
}

/// A response read to its end on the event loop, for callers that want the whole body anyway:
/// one hand-over instead of one per chunk.
public struct CollectedTransportResponse: Sendable {
    /// The status line and header fields.
    public let head: HTTPResponseHead
    /// The whole body.
    public let body: ByteBuffer
    /// Trailers and metrics.
    public let completion: ExchangeCompletion
}

/// What an exchange ends with.
public struct ExchangeCompletion: Sendable {
    /// Trailer fields of a chunked response, if it sent any.
    public var trailers: HTTPHeaders?
    /// Timings, addresses and byte counts.
    public var metrics: ExchangeMetrics
}

/// The body of a ``TransportResponse``: an `AsyncSequence` of buffers with back-pressure.
public struct TransportResponseBody: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, ResponseBodyDemand
    >

    let producer: Producer

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Producer.AsyncIterator

        public mutating func next() async throws -> ByteBuffer? {
            let next: ByteBuffer?
            do {
                next = try await base.next()
            } catch is CancellationError {
                throw TransportError.cancelled
            }
            // A cancelled consumer must not mistake the cut-off for the end of the body.
            if next == nil, Task.isCancelled { throw TransportError.cancelled }
            return next
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: producer.makeAsyncIterator())
    }

    /// Reads the whole body into one buffer.
    /// - Parameter maximumBytes: the most the body may hold; more throws `.dataLengthExceedsMaximum`.
    public func collect(upTo maximumBytes: Int = .max) async throws -> ByteBuffer {
        var iterator = makeAsyncIterator()
        guard var collected = try await iterator.next() else { return ByteBuffer() }
        while var next = try await iterator.next() {
            guard collected.readableBytes + next.readableBytes <= maximumBytes else {
                throw TransportError.bodyTooLarge(limit: maximumBytes)
            }
            collected.writeBuffer(&next)
        }
        guard collected.readableBytes <= maximumBytes else {
            throw TransportError.bodyTooLarge(limit: maximumBytes)
        }
        return collected
    }
}

/// Tells the connection when the consumer wants more body or has gone away.
struct ResponseBodyDemand: NIOAsyncSequenceProducerDelegate {
    let onDemand: @Sendable () -> Void
    let onTermination: @Sendable () -> Void

    func produceMore() { onDemand() }
    func didTerminate() { onTermination() }
}
