import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// The connection handler in memory: parts in, parts out, no sockets.
@Suite struct ExchangeHandlerTests {
    final class RecordingDelegate: ExchangeHandlerDelegate, @unchecked Sendable {
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

    /// Holds back every file region written (its write neither done nor failed) until the channel
    /// closes, and tells how many it holds.
    final class FileRegionHolder: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart
        private var held: [EventLoopPromise<Void>?] = []
        let regionsHeld = AsyncStream.makeStream(of: Int.self)

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard case .body(.fileRegion) = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
            held.append(promise)
            regionsHeld.continuation.yield(held.count)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            for promise in held { promise?.fail(ChannelError.ioOnClosedChannel) }
            held = []
            context.close(mode: mode, promise: promise)
        }
    }

    /// The handler is not Sendable; the testing loop runs everything it does inside the test's own calls.
    struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }

    struct Fixture {
        let channel: NIOAsyncTestingChannel
        let box: Unchecked<ExchangeHandler>
        var handler: ExchangeHandler { box.value }
        let delegate = RecordingDelegate()
        let reads = ReadCounter()

        /// - Parameter fileRegions: where file bodies go by `sendfile`, a handler that holds each
        ///   file region's write unfinished (as a socket would while its slice is under way).
        init(fileRegions: FileRegionHolder? = nil) async throws {
            channel = NIOAsyncTestingChannel()
            let handler = ExchangeHandler(
                connectionID: 7, byteCounter: ByteCountingHandler(), connectionMetrics: ExchangeMetrics(fetchStart: .now()),
                sendsFileRegions: fileRegions != nil)
            handler.delegate = delegate
            box = Unchecked(value: handler)
            try await channel.pipeline.addHandler(reads)
            if let fileRegions { try await channel.pipeline.addHandler(fileRegions) }
            let channel = self.channel
            let box = self.box
            try await channel.testingEventLoop.executeInContext { try channel.pipeline.syncOperations.addHandler(box.value) }
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80))
        }

        /// An exchange under way and the future of its response head (or whole response, collected).
        struct Started {
            let exchange: ActiveExchange
            let response: EventLoopFuture<TransportResponse>?
            let collected: EventLoopFuture<CollectedTransportResponse>?
            var head: HTTPRequestHead { exchange.head }
        }

        func start(
            _ request: TransportRequest = TransportRequest(url: URL(string: "http://127.0.0.1/x")!), collectingUpTo limit: Int? = nil,
            tracker: ExchangeTracker? = nil, requestBodyLength: Int64? = 0, deadline: NIODeadline? = nil
        ) async throws -> Started {
            let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: "/x", headers: ["Host": "127.0.0.1"])
            let started: Started
            if let limit {
                let collected = channel.eventLoop.makePromise(of: CollectedTransportResponse.self)
                let delivery = ActiveExchange.Delivery.collecting(on: channel.eventLoop, limit: limit) { collected.completeWith($0) }
                let exchange = ActiveExchange(
                    request: request, head: head, requestBodyLength: nil, delivery: delivery, metrics: ExchangeMetrics(fetchStart: .now()),
                    deadline: deadline, tracker: tracker)
                started = Started(exchange: exchange, response: nil, collected: collected.futureResult)
            } else {
                let (delivery, response) = ActiveExchange.Delivery.streaming(on: channel.eventLoop)
                let exchange = ActiveExchange(
                    request: request, head: head, requestBodyLength: requestBodyLength, delivery: delivery,
                    metrics: ExchangeMetrics(fetchStart: .now()), deadline: deadline,
                    tracker: tracker)
                started = Started(exchange: exchange, response: response, collected: nil)
            }
            let box = self.box
            let exchange = started.exchange
            try await channel.testingEventLoop.executeInContext { box.value.startExchange(exchange) }
            return started
        }

        /// The error `future` fails with; nil when it succeeds, a ``TimedOut`` when it has not
        /// completed within 10 s (so that a test waiting for a failure that never comes fails).
        func failure<Value: Sendable>(of future: EventLoopFuture<Value>) async -> (any Error)? {
            do {
                _ = try await withTimeout(seconds: 10) { try await future.get() }
                return nil
            } catch {
                return error
            }
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
        let response = try await exchange.response!.get()
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
        let response = try await exchange.response!.get()
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
        #expect(await fixture.failure(of: exchange.response!) is TransportError)
        #expect(!fixture.channel.isActive)
        #expect(fixture.delegate.finished == [false])
    }

    /// Each byte that arrives moves the idle limit on, by the loop's clock.
    @Test func activityPostponesTheIdleTimeout() async throws {
        let fixture = try await Fixture()
        let loop = fixture.channel.testingEventLoop
        var request = TransportRequest(url: URL(string: "http://127.0.0.1/x")!)
        request.timeouts.idle = .seconds(1)
        let exchange = try await fixture.start(request, collectingUpTo: 1 << 20)
        await loop.advanceTime(by: .milliseconds(900))
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        // The timer set for 1 s finds activity at 0.9 s and waits until 1.9 s.
        await loop.advanceTime(by: .milliseconds(1_000) - .nanoseconds(1))
        #expect(fixture.channel.isActive)
        await loop.advanceTime(by: .nanoseconds(1))
        let error = await fixture.failure(of: exchange.collected!) as? TransportError
        #expect(error?.code == .timedOut)
        #expect(error?.message == "timed out waiting for the server (no data for the idle interval)")
        #expect(!fixture.channel.isActive)
    }

    /// The request's total time limit ends an exchange whose server keeps sending, at its instant.
    @Test func theTotalTimeLimitEndsAnExchangeWhoseServerKeepsSending() async throws {
        let fixture = try await Fixture()
        let loop = fixture.channel.testingEventLoop
        var request = TransportRequest(url: URL(string: "http://127.0.0.1/x")!)
        request.timeouts.idle = .seconds(10)
        let exchange = try await fixture.start(request, collectingUpTo: 1 << 20, deadline: loop.now + .seconds(3))
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        for _ in 0..<2 {
            await loop.advanceTime(by: .seconds(1))
            try await fixture.respond(.body(ByteBuffer(string: "x")))
        }
        await loop.advanceTime(by: .seconds(1) - .nanoseconds(1))
        #expect(fixture.channel.isActive)
        await loop.advanceTime(by: .nanoseconds(1))
        let error = await fixture.failure(of: exchange.collected!) as? TransportError
        #expect(error?.code == .timedOut)
        #expect(error?.message == "timed out after the request's total time limit")
        #expect(!fixture.channel.isActive)
    }

    @Test func closeBeforeTheResponseIsRetryableOnlyOnAReusedConnection() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.start()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .noContent)), .end(nil))
        _ = try await first.response!.get()
        let second = try await fixture.start()
        try await fixture.channel.close()
        let stale = await #expect(throws: RetryableExchangeError.self) { try await second.response!.get() }
        #expect(stale?.onFreshConnection == true)

        let fresh = try await Fixture()
        let only = try await fresh.start()
        try await fresh.channel.close()
        let error = await transportError { try await only.response!.get() }
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
        let response = try await exchange.response!.get()
        let box = fixture.box
        try await fixture.channel.testingEventLoop.executeInContext { box.value.cancel(exchange.exchange, error: .timedOut("test")) }
        let error = await transportError { try await response.body.collect() }
        #expect(error?.code == .timedOut)
        #expect(!fixture.channel.isActive)
    }

    @Test func collectedExchangeSettlesItsOnlyPromise() async throws {
        let fixture = try await Fixture()
        let tracker = ExchangeTracker()
        var started: Fixture.Started? = try await fixture.start(collectingUpTo: 16, tracker: tracker)
        try await fixture.respond(
            .head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "2"])), .body(ByteBuffer(string: "ok")),
            .end(nil))
        let collected = try await started!.collected!.get()
        #expect(collected.head.status == .ok)
        #expect(String(buffer: collected.body) == "ok")
        #expect(tracker.liveExchanges == 1)
        started = nil
        #expect(tracker.liveExchanges == 0)
        #expect(tracker.unsettledExchanges == 0)
    }

    @Test func collectedBodyOverItsLimitFailsTheExchange() async throws {
        let fixture = try await Fixture()
        let started = try await fixture.start(collectingUpTo: 3)
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok)), .body(ByteBuffer(string: "four")))
        let error = await transportError { try await started.collected!.get() }
        #expect(error?.code == .dataLengthExceedsMaximum)
        #expect(!fixture.channel.isActive)
    }

    /// A server may answer before reading the whole body; a writer waiting for the channel to drain
    /// must then be released, not left holding its file or stream forever.
    @Test func answerBeforeTheBodyReleasesAWaitingWriter() async throws {
        let fixture = try await Fixture()
        let writerEnded = AsyncStream.makeStream(of: String.self)
        var request = TransportRequest(url: URL(string: "http://127.0.0.1/x")!)
        request.method = .POST
        request.body = .stream(length: nil) { writer in
            do {
                while true { try await writer.write(ByteBuffer(repeating: 0x61, count: 1024)) }
            } catch {
                writerEnded.continuation.yield("\(error)")
                throw error
            }
        }
        fixture.channel.isWritable = false
        let started = try await fixture.start(request, requestBodyLength: nil)
        // The writer's first chunk leaves it waiting for writability, which never returns.
        try await Self.waitFor {
            if case .body = try await fixture.channel.readOutbound(as: HTTPClientRequestPart.self) { return true }
            return false
        }
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0"])), .end(nil))
        let response = try await started.response!.get()
        #expect(response.head.status == .ok)
        let ended = try await Self.first(of: writerEnded.stream, within: .seconds(5))
        #expect(ended != nil)
    }

    /// A POST on a reused connection that dies while its first `sendfile` slice is still being
    /// written is not sent again: that slice may have partly reached the server.
    @Test func aPostWhoseFileSliceWasHandedOnIsNotRetried() async throws {
        let holder = FileRegionHolder()
        let fixture = try await Fixture(fileRegions: holder)
        let first = try await fixture.start()
        try await fixture.respond(.head(HTTPResponseHead(version: .http1_1, status: .noContent)), .end(nil))
        _ = try await first.response!.get()

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        try Data(count: 1 << 20).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let post = try await fixture.start(
            TransportRequest(method: .POST, url: URL(string: "http://127.0.0.1/x")!, body: .file(file)), requestBodyLength: 1 << 20)
        #expect(try await Self.first(of: holder.regionsHeld.stream, within: .seconds(5)) == 1)
        try await fixture.channel.close()
        let error = await fixture.failure(of: post.response!) as? TransportError
        #expect(error?.code == .networkConnectionLost)
    }

    /// Polls a condition that another task makes true (no event to await), for at most five seconds.
    static func waitFor(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<1000 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("condition never held")
    }

    /// The first element of `stream`, or nil when none arrives within `limit`.
    static func first<Element: Sendable>(of stream: AsyncStream<Element>, within limit: Duration) async throws -> Element? {
        try await withThrowingTaskGroup(of: Element?.self) { group in
            group.addTask { await stream.first { _ in true } }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
