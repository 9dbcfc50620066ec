import Foundation
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import AlamofireNIOTransport

/// Whole HTTP/2 connection runs without a socket or a real clock: an ``HTTP2Connection`` on one
/// `EmbeddedChannel` and a server's `NIOHTTP2Handler` on another, joined in memory, whose frames the
/// test writes (GOAWAY, RST_STREAM, a response) and reads. The keep-alive PING's timer runs on the
/// client's `EmbeddedEventLoop`, whose time only the test advances. The tests are synchronous, so
/// everything runs on the thread that owns both loops.
@Suite struct HTTP2ConnectionSimulationTests {
    /// What the connection tells the pool.
    final class PoolRecorder: ExchangeHandlerDelegate, HTTP2ConnectionDelegate, @unchecked Sendable {
        var events: [String] = []
        func exchangeFinished(connectionID: Int, reusable: Bool) { events.append("exchange finished, reusable \(reusable)") }
        func idleConnectionClosed(connectionID: Int) { events.append("idle closed") }
        func http2Connection(_ connectionID: Int, maximumStreamsChanged maximum: Int) { events.append("maximum streams \(maximum)") }
        func http2ConnectionGoingAway(_ connectionID: Int) { events.append("going away") }
    }

    /// The frames the server's `NIOHTTP2Handler` passes up: every frame the client sent, after the
    /// handler's own checks.
    final class FrameRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        var frames: [HTTP2Frame] = []
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { frames.append(unwrapInboundIn(data)) }

        /// How many PINGs (not acknowledgements) arrived.
        var pings: Int {
            frames.count { if case .ping(_, ack: false) = $0.payload { true } else { false } }
        }

        /// The stream ids the client opened with HEADERS.
        var openedStreams: [HTTP2StreamID] {
            frames.compactMap { if case .headers = $0.payload { $0.streamID } else { nil } }
        }
    }

    /// A client connection and a server, joined by ``deliver(toClient:)``.
    struct Link {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let pool = PoolRecorder()
        let received = FrameRecorder()
        let connection: HTTP2Connection
        let ready: EventLoopFuture<Int>

        init(
            pingInterval: TimeAmount = .seconds(30),
            serverSettings: HTTP2Settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 7)]
        )
            throws
        {
            try server.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server, initialSettings: serverSettings))
            try server.pipeline.syncOperations.addHandler(received)
            (connection, ready) = try HTTP2Connection.start(
                id: 1, channel: client, connectionMetrics: ExchangeMetrics(fetchStart: .now()), decompressionRatio: nil,
                pingInterval: pingInterval, pool: pool)
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
            try client.connect(to: address).wait()
            try server.connect(to: address).wait()
            try deliver()
        }

        /// Moves the bytes each side wrote to the other until both are quiet; with `toClient` false
        /// the server's bytes (its acknowledgements too) are dropped.
        func deliver(toClient: Bool = true) throws {
            var moved = true
            while moved {
                moved = false
                client.embeddedEventLoop.run()
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    try server.writeInbound(bytes)
                    moved = true
                }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                    if toClient, client.isActive { try client.writeInbound(bytes) }
                    moved = moved || toClient
                }
            }
        }

        /// The server sends `frame`, and it is delivered.
        func serverSends(_ frame: HTTP2Frame) throws {
            // Not `writeOutbound`, which would wait for ever on a frame held back by flow control.
            server.writeAndFlush(frame, promise: nil)
            try deliver()
        }

        /// Starts a collected exchange for `/x` on a new stream; its result once it has one. With a
        /// `controller`, the exchange starts through it, and `beforeDelivery` runs before the loop
        /// does (while the stream is still to be opened).
        func startExchange(
            through controller: ExchangeController? = nil, beforeDelivery: () -> Void = {}
        ) throws -> () -> Result<CollectedTransportResponse, any Error>? {
            let request = TransportRequest(url: URL(string: "https://127.0.0.1/x")!)
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/x", headers: ["Host": "127.0.0.1"])
            let result = Box<Result<CollectedTransportResponse, any Error>>()
            let delivery = ActiveExchange.Delivery.collecting(on: client.eventLoop, limit: 1 << 20) { result.value = $0 }
            let exchange = ActiveExchange(
                request: request, head: head, requestBodyLength: 0, delivery: delivery, metrics: ExchangeMetrics(fetchStart: .now()),
                controller: controller, tracker: nil)
            if let controller { try controller.run(exchange, on: connection) } else { connection.start(exchange) }
            beforeDelivery()
            try deliver()
            return { result.value }
        }

        /// The value of a future of the client's loop, which has completed.
        func value<Value>(of future: EventLoopFuture<Value>) -> Result<Value, any Error>? {
            let result = Box<Result<Value, any Error>>()
            future.whenComplete { result.value = $0 }
            client.embeddedEventLoop.run()
            return result.value
        }

        func finish() {
            // Also on a closed channel: its loop's remaining tasks run or are cancelled, so that a
            // timer left scheduled cannot trap in the loop's deinit.
            #expect(throws: Never.self) { _ = try client.finish(acceptAlreadyClosed: true) }
            #expect(throws: Never.self) { _ = try server.finish(acceptAlreadyClosed: true) }
        }
    }

    /// A value set by a callback of the client's loop, which runs on the test's thread.
    final class Box<Value>: @unchecked Sendable {
        var value: Value?
    }

    @Test func theServersFirstSettingsMakeItReadyAndALaterLimitReachesThePool() throws {
        let link = try Link()
        defer { link.finish() }
        #expect(try link.value(of: link.ready)?.get() == 7)
        try link.serverSends(
            HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: 3)]))))
        #expect(link.pool.events == ["maximum streams 3"])
    }

    @Test func anIdleConnectionPingsAtEachTickAndClosesWhenAPingGoesUnanswered() throws {
        let link = try Link(pingInterval: .seconds(30))
        defer { link.finish() }
        link.client.embeddedEventLoop.advanceTime(by: .seconds(30) - .nanoseconds(1))
        try link.deliver()
        #expect(link.received.pings == 0)
        link.client.embeddedEventLoop.advanceTime(by: .nanoseconds(1))
        // The server's handler acknowledges it.
        try link.deliver()
        #expect(link.received.pings == 1)
        link.client.embeddedEventLoop.advanceTime(by: .seconds(30))
        // This time the acknowledgement is lost.
        try link.deliver(toClient: false)
        #expect(link.received.pings == 2)
        #expect(link.client.isActive)
        link.client.embeddedEventLoop.advanceTime(by: .seconds(30) - .nanoseconds(1))
        #expect(link.client.isActive)
        link.client.embeddedEventLoop.advanceTime(by: .nanoseconds(1))
        #expect(!link.client.isActive)
    }

    @Test func aGoAwayWithNoOpenStreamTellsThePoolAndCloses() throws {
        let link = try Link()
        defer { link.finish() }
        try link.serverSends(
            HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil)))
        #expect(link.pool.events == ["going away"])
        #expect(!link.client.isActive)
    }

    @Test func aStreamAboveTheGoAwaysLastIdGoesAgainAndOneBelowItIsAnswered() throws {
        let link = try Link()
        defer { link.finish() }
        let first = try link.startExchange()
        let second = try link.startExchange()
        #expect(link.received.openedStreams == [1, 3])
        try link.serverSends(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)))
        // Stream 3 was not processed: it may go again, and the connection answered (promised) stream 1.
        guard case .failure(let error as RetryableExchangeError) = second() else {
            Issue.record("stream 3 ended with \(String(describing: second()))")
            return
        }
        #expect(error.reason == .unprocessed(connectionAnswered: true))
        #expect(first() == nil)
        #expect(link.client.isActive)
        try link.serverSends(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: [":status": "200"], endStream: true))))
        #expect(try first()?.get().head.status == .ok)
        // The connection closes once its last stream is done.
        #expect(!link.client.isActive)
        #expect(link.pool.events.first == "going away")
    }

    @Test func aRefusedStreamGoesAgainAndTheConnectionStays() throws {
        let link = try Link()
        defer { link.finish() }
        let exchange = try link.startExchange()
        try link.serverSends(HTTP2Frame(streamID: 1, payload: .rstStream(.refusedStream)))
        guard case .failure(let error as RetryableExchangeError) = exchange() else {
            Issue.record("the stream ended with \(String(describing: exchange()))")
            return
        }
        #expect(error.reason == .refusedStream)
        #expect(!error.onFreshConnection)
        #expect(link.client.isActive)
        #expect(link.pool.events == ["exchange finished, reusable true"])
    }

    /// A cancel decided while the exchange's stream is still being opened reaches no handler: the
    /// handler finds it in the exchange's controller when the exchange starts, so nothing is sent,
    /// and the connection carries on.
    @Test func aCancelDecidedWhileTheStreamOpensEndsTheExchangeWhenItStarts() throws {
        let link = try Link()
        defer { link.finish() }
        let controller = ExchangeController()
        let exchange = try link.startExchange(through: controller) { controller.cancel(with: TransportError(.cancelled, "cancelled")) }
        guard case .failure(let error as TransportError) = exchange() else {
            Issue.record("the stream ended with \(String(describing: exchange()))")
            return
        }
        #expect(error.code == .cancelled)
        // Its stream never reached the wire: no HEADERS, nothing to reset.
        #expect(link.received.frames.filter { $0.streamID != .rootStream }.isEmpty)
        #expect(link.client.isActive)
    }
}
