import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import AlamofireNIOTransport

/// The connection handler in memory: parts in, parts out, no sockets.
@Suite struct HTTP1ConnectionHandlerTests {
    final class RecordingDelegate: HTTP1ConnectionDelegate, @unchecked Sendable {
        private let lock = NIOLock()
        private var _finished: [Bool] = []
        private var _idleClosed = 0
        var finished: [Bool] { lock.withLock { _finished } }
        var idleClosed: Int { lock.withLock { _idleClosed } }
        func exchangeFinished(connectionID: Int, reusable: Bool) { lock.withLock { _finished.append(reusable) } }
        func idleConnectionClosed(connectionID: Int) { lock.withLock { _idleClosed += 1 } }
    }

    /// Counts the `read` requests that get past the handler under test.
    final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = NIOAny
        private let lock = NIOLock()
        private var _reads = 0
        var reads: Int { lock.withLock { _reads } }
        func read(context: ChannelHandlerContext) {
            lock.withLock { _reads += 1 }
            context.read()
        }
    }

    /// The handler is not Sendable; the testing loop runs everything it does inside the test's own calls.
    struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }

    struct Fixture {
        let channel: NIOAsyncTestingChannel
        let box: Unchecked<HTTP1ConnectionHandler>
        var handler: HTTP1ConnectionHandler { box.value }
        let delegate = RecordingDelegate()
        let reads = ReadCounter()

        init() async throws {
            channel = NIOAsyncTestingChannel()
            let handler = HTTP1ConnectionHandler(
                connectionID: 7, byteCounter: ByteCountingHandler(), connectionMetrics: ExchangeMetrics(fetchStart: .now()))
            handler.delegate = delegate
            box = Unchecked(value: handler)
            try await channel.pipeline.addHandler(reads)
            let channel = self.channel
            let box = self.box
            try await channel.testingEventLoop.executeInContext { try channel.pipeline.syncOperations.addHandler(box.value) }
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80))
        }

        func start(_ request: TransportRequest = TransportRequest(url: URL(string: "http://127.0.0.1/x")!)) async throws -> ActiveExchange {
            let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: "/x", headers: ["Host": "127.0.0.1"])
            let exchange = ActiveExchange(
                request: request, head: head, requestBodyLength: 0, headPromise: channel.eventLoop.makePromise(),
                completionPromise: channel.eventLoop.makePromise(), metrics: ExchangeMetrics(fetchStart: .now()))
            let box = self.box
            try await channel.testingEventLoop.executeInContext { box.value.startExchange(exchange) }
            return exchange
        }

        func respond(_ parts: HTTPClientResponsePart...) async throws {
            for part in parts { try await channel.writeInbound(part) }
        }
    }

    @Test func exchangeWritesTheRequestAndDeliversTheResponse() async throws {
        let fixture = try await Fixture()
        let exchange = try await fixture.start()
        #expect(try await fixture.channel.readOutbound(as: HTTPClientRequestPart.self) == .head(exchange.head))
        #expect(try await fixture.channel.readOutbound(as: HTTPClientRequestPart.self) == .end(nil))
        try await fixture.respond(
            .head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "2"])), .body(ByteBuffer(string: "ok")),
            .end(nil))
        let response = try await exchange.headPromise.futureResult.get()
        #expect(response.head.status == .ok)
        #expect(String(buffer: try await response.body.collect()) == "ok")
        let completion = try await response.finished()
        #expect(completion.metrics.responseBodyBytesAfterDecoding == 2)
        #expect(fixture.delegate.finished == [true])
        #expect(fixture.channel.isActive)
    }

    @Test func readsAreHeldBackWhileTheConsumerIsFull() async throws {
        let fixture = try await Fixture()
        let exchange = try await fixture.start()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        let response = try await exchange.headPromise.futureResult.get()
        // Eight unread buffers reach the high watermark: the next read request is held back.
        for index in 0..<8 { try await fixture.respond(.body(ByteBuffer(string: "\(index)"))) }
        let before = fixture.reads.reads
        fixture.channel.read()
        #expect(fixture.reads.reads == before)
        // Consuming below the low watermark lets the held read through.
        var iterator = response.body.makeAsyncIterator()
        for _ in 0..<7 { _ = try await iterator.next() }
        try await fixture.channel.testingEventLoop.executeInContext {}
        #expect(fixture.reads.reads == before + 1)
    }

    @Test func idleTimeoutFailsTheExchangeAndCloses() async throws {
        let fixture = try await Fixture()
        var request = TransportRequest(url: URL(string: "http://127.0.0.1/x")!)
        request.timeouts.idle = .seconds(1)
        let exchange = try await fixture.start(request)
        await fixture.channel.testingEventLoop.advanceTime(by: .milliseconds(999))
        #expect(fixture.channel.isActive)
        await fixture.channel.testingEventLoop.advanceTime(by: .milliseconds(2))
        await #expect(throws: TransportError.self) { try await exchange.headPromise.futureResult.get() }
        #expect(!fixture.channel.isActive)
        #expect(fixture.delegate.finished == [false])
    }

    @Test func closeBeforeTheResponseIsRetryableOnlyOnAReusedConnection() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.start()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .noContent)), .end(nil))
        _ = try await first.headPromise.futureResult.get()
        let second = try await fixture.start()
        try await fixture.channel.close()
        await #expect(throws: StaleConnectionError.self) { try await second.headPromise.futureResult.get() }

        let fresh = try await Fixture()
        let only = try await fresh.start()
        try await fresh.channel.close()
        let error = await transportError { try await only.headPromise.futureResult.get() }
        #expect(error?.code == .networkConnectionLost)
    }

    @Test func responseWhileIdleClosesTheConnection() async throws {
        let fixture = try await Fixture()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        #expect(!fixture.channel.isActive)
        #expect(fixture.delegate.idleClosed == 1)
    }

    @Test func cancelDuringTheBodyFailsTheConsumer() async throws {
        let fixture = try await Fixture()
        let exchange = try await fixture.start()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)), .body(ByteBuffer(string: "a")))
        let response = try await exchange.headPromise.futureResult.get()
        let box = fixture.box
        try await fixture.channel.testingEventLoop.executeInContext { box.value.cancel(exchange, error: .timedOut("test")) }
        let error = await transportError { try await response.body.collect() }
        #expect(error?.code == .timedOut)
        #expect(!fixture.channel.isActive)
    }
}
