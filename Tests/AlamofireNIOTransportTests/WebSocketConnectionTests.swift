import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// The WebSocket's rules as values (the frame reader, the close state machine) and its channel
/// handler on an `EmbeddedChannel`.
@Suite struct WebSocketConnectionTests {
    static func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, data: ByteBuffer(bytes: bytes))
    }

    static func closePayload(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    // MARK: The handshake

    /// The answer to the upgrade request is awaited for the handshake's timeout, on the channel's
    /// clock, to the instant: then the handshake fails as `.timedOut` and the connection closes.
    @Test func aHandshakeNeverAnsweredFailsExactlyAtItsTimeout() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/socket", headers: ["Host": "example.test"])
        let (outcome, _) = try WebSocketHandshakeHandler.install(
            on: channel, head: head, options: TransportWebSocketOptions(), metrics: ExchangeMetrics(fetchStart: .now()),
            timeout: .seconds(5))
        let request = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(request.getString(at: request.readerIndex, length: 19) == "GET /socket HTTP/1.")
        let failure = NIOLockedValueBox<(any Error)?>(nil)
        outcome.whenFailure { error in failure.withLockedValue { $0 = error } }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        #expect(failure.withLockedValue { $0 } == nil)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect((failure.withLockedValue { $0 } as? TransportError)?.code == .timedOut)
        #expect(!channel.isActive)
    }

    // MARK: The frame reader

    @Test func fragmentsAreReassembledAndControlFramesPassBetweenThem() {
        var reader = WebSocketFrameReader(maximumMessageSize: 100)
        #expect(reader.read(Self.frame(.text, Array("hel".utf8), fin: false)) == .none)
        #expect(reader.read(Self.frame(.ping, [1])) == .ping(ByteBuffer(bytes: [1])))
        #expect(reader.read(Self.frame(.continuation, Array("lo".utf8))) == .message(.text("hello")))
        #expect(reader.read(Self.frame(.binary, [1, 2])) == .message(.binary(ByteBuffer(bytes: [1, 2]))))
    }

    @Test func everyBrokenRuleBecomesItsCloseCode() {
        func violation(_ frames: [WebSocketFrame], maximum: Int = 4) -> WebSocketErrorCode? {
            var reader = WebSocketFrameReader(maximumMessageSize: maximum)
            for frame in frames {
                if case .violation(let code, _) = reader.read(frame) { return code }
            }
            return nil
        }
        #expect(violation([Self.frame(.text, [0x68, 0xFF])]) == .dataInconsistentWithMessage)
        #expect(violation([Self.frame(.binary, [1, 2, 3, 4, 5])]) == .messageTooLarge)
        #expect(violation([Self.frame(.binary, [1, 2, 3], fin: false), Self.frame(.continuation, [4, 5])]) == .messageTooLarge)
        #expect(violation([Self.frame(.continuation, [1])]) == .protocolError)
        #expect(violation([Self.frame(.text, [1], fin: false), Self.frame(.text, [2])]) == .protocolError)
        #expect(violation([Self.frame(WebSocketOpcode(encodedWebSocketOpcode: 0x3)!, [1])]) == .protocolError)
        #expect(violation([WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(bytes: [1]))]) == .protocolError)
        #expect(violation([WebSocketFrame(fin: true, rsv1: true, opcode: .text, data: ByteBuffer(bytes: [1]))]) == .protocolError)
        #expect(violation([Self.frame(.connectionClose, [3])]) == .protocolError)
        #expect(violation([Self.frame(.connectionClose, Self.closePayload(1005))]) == .protocolError)
        #expect(violation([Self.frame(.connectionClose, Self.closePayload(1000) + [0xFF])]) == .dataInconsistentWithMessage)
        #expect(violation([Self.frame(.text, Array("ok".utf8))]) == nil)
    }

    @Test func withPermessageDeflateRSV1MarksACompressedMessageOnItsFirstFrameOnly() throws {
        let inflater = try #require(PerMessageDeflate.make(PerMessageDeflateParameters()))
        var reader = WebSocketFrameReader(maximumMessageSize: 100, inflater: inflater)
        // RFC 7692 §7.2.3.1's "Hello", in two fragments.
        #expect(reader.read(WebSocketFrame(fin: false, rsv1: true, opcode: .text, data: ByteBuffer(bytes: [0xF2, 0x48, 0xCD]))) == .none)
        #expect(reader.read(Self.frame(.continuation, [0xC9, 0xC9, 0x07, 0x00])) == .message(.text("Hello")))
        #expect(reader.read(Self.frame(.text, Array("plain".utf8))) == .message(.text("plain")))
        func violation(_ frame: WebSocketFrame) -> WebSocketErrorCode? {
            var reader = WebSocketFrameReader(maximumMessageSize: 4, inflater: PerMessageDeflate.make(PerMessageDeflateParameters()))
            if case .violation(let code, _) = reader.read(frame) { return code }
            return nil
        }
        #expect(violation(WebSocketFrame(fin: true, rsv1: true, opcode: .ping, data: ByteBuffer())) == .protocolError)
        #expect(violation(WebSocketFrame(fin: true, rsv1: true, opcode: .continuation, data: ByteBuffer())) == .protocolError)
        // Inflates past the limit, or does not inflate at all.
        #expect(
            violation(
                WebSocketFrame(fin: true, rsv1: true, opcode: .text, data: ByteBuffer(bytes: [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])))
                == .messageTooLarge)
        #expect(
            violation(WebSocketFrame(fin: true, rsv1: true, opcode: .binary, data: ByteBuffer(bytes: [0xFF])))
                == .dataInconsistentWithMessage)
        // Without the extension, RSV1 is a reserved bit.
        var plain = WebSocketFrameReader(maximumMessageSize: 100)
        guard case .violation(.protocolError, _) = plain.read(WebSocketFrame(fin: true, rsv1: true, opcode: .text, data: ByteBuffer()))
        else {
            Issue.record("RSV1 accepted without permessage-deflate")
            return
        }
    }

    @Test func closeFramesCarryTheirCodeAndReason() {
        var reader = WebSocketFrameReader(maximumMessageSize: 10)
        #expect(reader.read(Self.frame(.connectionClose, [])) == .close(code: nil, reason: ByteBuffer()))
        #expect(
            reader.read(Self.frame(.connectionClose, Self.closePayload(4000, "bye")))
                == .close(code: 4000, reason: ByteBuffer(string: "bye")))
    }

    // MARK: The close state machine

    @Test func theServersCloseIsEchoedWhenOpenAndNotAfterTheClientsClose() {
        var open = WebSocketConnectionStateMachine(maximumMessageSize: 10)
        guard case .peerClosed(1000, _, echo: true) = open.received(Self.frame(.connectionClose, Self.closePayload(1000))) else {
            Issue.record("expected an echoed close")
            return
        }
        #expect(open.state == .closed)
        #expect(!open.canSend)

        var closing = WebSocketConnectionStateMachine(maximumMessageSize: 10)
        let firstClose = closing.closeRequested()
        let secondClose = closing.closeRequested()
        #expect(firstClose)
        #expect(!secondClose)
        #expect(!closing.canSend)
        // A ping after the client's close is not answered; the server's close ends it without an echo.
        guard case .none = closing.received(Self.frame(.ping, [])),
            case .peerClosed(1001, _, echo: false) = closing.received(Self.frame(.connectionClose, Self.closePayload(1001)))
        else {
            Issue.record("expected no pong and an unechoed close")
            return
        }
        guard case .none = closing.received(Self.frame(.text, Array("late".utf8))) else {
            Issue.record("a frame after the close was read")
            return
        }
    }

    @Test func theEndOfTheConnectionFailsAnOpenWebSocketAndFinishesAClosingOne() {
        var open = WebSocketConnectionStateMachine(maximumMessageSize: 10)
        guard case .fail(let error) = open.connectionEnded() else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .networkConnectionLost)
        #expect(open.connectionEnded() == nil)

        var closing = WebSocketConnectionStateMachine(maximumMessageSize: 10)
        _ = closing.closeRequested()
        guard case .finish = closing.closeTimedOut() else {
            Issue.record("expected the timeout to finish")
            return
        }
        #expect(closing.closeTimedOut() == nil)
        #expect(closing.connectionEnded() == nil)
    }

    @Test func aFrameTooLargeForTheDecoderIsMessageTooBig() {
        var machine = WebSocketConnectionStateMachine(maximumMessageSize: 10)
        guard case .violation(.messageTooLarge, let error) = machine.decodingFailed(NIOWebSocketError.invalidFrameLength) else {
            Issue.record("expected 1009")
            return
        }
        #expect(error.code == .dataLengthExceedsMaximum)
        guard case .none = machine.decodingFailed(NIOWebSocketError.invalidFrameLength) else {
            Issue.record("a second failure was acted on")
            return
        }
    }

    // MARK: The handler

    final class Harness {
        let channel = EmbeddedChannel()
        let handler: WebSocketConnectionHandler
        let sequence: WebSocketConnectionHandler.Producer.NewSequence
        let demanded = NIOLockedValueBox(0)

        init(closeTimeout: TimeAmount = .seconds(5)) throws {
            let demanded = self.demanded
            sequence = WebSocketConnectionHandler.Producer.makeSequence(
                backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2), finishOnDeinit: false,
                delegate: WebSocketDemand(onDemand: { demanded.withLockedValue { count in count += 1 } }, onTermination: {}))
            handler = WebSocketConnectionHandler(maximumMessageSize: 100, source: sequence.source, closeTimeout: closeTimeout)
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        }

        /// Every event the reader would get, and the error that ended them, if any.
        func drain() async -> (events: [TransportWebSocketEvent], error: (any Error)?) {
            var events: [TransportWebSocketEvent] = []
            do {
                for try await event in sequence.sequence { events.append(event) }
                return (events, nil)
            } catch {
                return (events, error)
            }
        }

        func written() throws -> [WebSocketFrame] {
            var frames: [WebSocketFrame] = []
            while let frame = try channel.readOutbound(as: WebSocketFrame.self) { frames.append(frame) }
            return frames
        }
    }

    @Test func pingsAreAnsweredAndEveryClientFrameIsMasked() throws {
        let harness = try Harness()
        let promise = harness.channel.eventLoop.makePromise(of: Void.self)
        harness.handler.send(.text("hi"), promise: promise)
        try harness.channel.writeInbound(Self.frame(.ping, [7, 8]))
        let frames = try harness.written()
        #expect(frames.map(\.opcode) == [.text, .pong])
        #expect(frames.allSatisfy { $0.maskKey != nil })
        #expect(frames.last?.data == ByteBuffer(bytes: [7, 8]))
        #expect(throws: Never.self) { try promise.futureResult.wait() }
    }

    @Test func aPingCompletesWithItsPongAndFailsWhenTheConnectionEnds() throws {
        let harness = try Harness()
        let answered = harness.channel.eventLoop.makePromise(of: Void.self)
        let lost = harness.channel.eventLoop.makePromise(of: Void.self)
        harness.handler.ping(promise: answered)
        harness.handler.ping(promise: lost)
        let pings = try harness.written()
        #expect(pings.map(\.opcode) == [.ping, .ping])
        try harness.channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, data: pings[0].data))
        try answered.futureResult.wait()
        harness.channel.pipeline.fireChannelInactive()
        #expect(throws: TransportError.self) { try lost.futureResult.wait() }
    }

    @Test func theClientsCloseWaitsForTheServersThenEndsTheEvents() async throws {
        let harness = try Harness()
        harness.handler.close(code: 1000, reason: ByteBuffer(string: "done"))
        let sent = try harness.written()
        #expect(sent.map(\.opcode) == [.connectionClose])
        #expect(sent.first?.data == ByteBuffer(bytes: Self.closePayload(1000, "done")))
        // Sending after the close is refused.
        let refused = harness.channel.eventLoop.makePromise(of: Void.self)
        harness.handler.send(.text("late"), promise: refused)
        #expect(throws: TransportError.self) { try refused.futureResult.wait() }
        try harness.channel.writeInbound(Self.frame(.connectionClose, Self.closePayload(1000)))
        #expect(try harness.written().isEmpty)
        #expect(!harness.channel.isActive)
        let drained = await harness.drain()
        #expect(drained.events == [.closed(code: 1000, reason: ByteBuffer())])
        #expect(drained.error == nil)
    }

    @Test func aServerThatNeverAnswersTheCloseIsDroppedAfterTheTimeout() async throws {
        let harness = try Harness(closeTimeout: .seconds(5))
        harness.handler.close(code: 1000, reason: nil)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(harness.channel.isActive)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!harness.channel.isActive)
        let drained = await harness.drain()
        #expect(drained.events.isEmpty)
        #expect(drained.error == nil)
    }

    @Test func readsStopWhileTheReaderLagsAndResumeOnDemand() async throws {
        let harness = try Harness()
        let reads = ReadCounter()
        try harness.channel.pipeline.syncOperations.addHandler(reads, position: .first)
        try harness.channel.writeInbound(Self.frame(.text, Array("1".utf8)))
        harness.channel.read()
        #expect(reads.count == 1)
        // At the high watermark the next read is held back until the reader asks for more.
        try harness.channel.writeInbound(Self.frame(.text, Array("2".utf8)))
        harness.channel.read()
        #expect(reads.count == 1)
        let events = harness.sequence.sequence.makeAsyncIterator()
        let first = try await events.next()
        let second = try await events.next()
        #expect(first == .message(.text("1")))
        #expect(second == .message(.text("2")))
        #expect(harness.demanded.withLockedValue { $0 } >= 1)
        harness.handler.readerDemanded()
        #expect(reads.count == 2)
    }

    @Test func aViolationSendsItsCloseCodeAndFailsTheEvents() async throws {
        let harness = try Harness()
        try harness.channel.writeInbound(Self.frame(.text, [0xC3, 0x28]))
        let sent = try harness.written()
        #expect(sent.map(\.opcode) == [.connectionClose])
        #expect(sent.first?.data == ByteBuffer(bytes: Self.closePayload(1007)))
        #expect(!harness.channel.isActive)
        let drained = await harness.drain()
        #expect(drained.events.isEmpty)
        #expect((drained.error as? TransportError)?.code == .badServerResponse)
    }
}

/// permessage-deflate (RFC 7692): the negotiation's parsing and the codec, against the RFC's examples.
@Suite struct PerMessageDeflateTests {
    let allocator = ByteBufferAllocator()

    @Test func theServersAnswerIsParsedAndCheckedAgainstTheOffer() {
        typealias Parameters = PerMessageDeflateParameters
        #expect(Parameters.negotiated(by: []) == .success(nil))
        #expect(Parameters.negotiated(by: ["permessage-deflate"]) == .success(Parameters()))
        var bounded = Parameters()
        bounded.serverNoContextTakeover = true
        bounded.clientMaxWindowBits = 10
        #expect(
            Parameters.negotiated(by: ["permessage-deflate; server_no_context_takeover; client_max_window_bits=\"10\""])
                == .success(bounded))
        for refused in [
            "x-webkit-deflate-frame", "permessage-deflate, permessage-deflate", "permessage-deflate; client_max_window_bits=8",
            "permessage-deflate; server_max_window_bits=16", "permessage-deflate; server_max_window_bits", "permessage-deflate; unknown",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover", ";", "permessage-deflate; ;",
            "permessage-deflate; =", "permessage-deflate; =15",
        ] {
            guard case .failure = Parameters.negotiated(by: [refused]) else {
                Issue.record("accepted \(refused)")
                continue
            }
        }
    }

    @Test func theRFCsExamplesInflate() throws {
        let codec = try #require(PerMessageDeflate.make(PerMessageDeflateParameters()))
        // §7.2.3.1, then §7.2.3.2: the second "Hello" uses the first's window.
        #expect(
            try codec.decompress(ByteBuffer(bytes: [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]), limit: 100, allocator: allocator)
                == ByteBuffer(string: "Hello"))
        #expect(
            try codec.decompress(ByteBuffer(bytes: [0xF2, 0x00, 0x11, 0x00, 0x00]), limit: 100, allocator: allocator)
                == ByteBuffer(string: "Hello"))
        // §7.2.3.3: a message ending with a final block; the next starts afresh.
        let final = ByteBuffer(bytes: [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00])
        #expect(try codec.decompress(final, limit: 100, allocator: allocator) == ByteBuffer(string: "Hello"))
        #expect(try codec.decompress(final, limit: 100, allocator: allocator) == ByteBuffer(string: "Hello"))
        // A final block without the RFC's trailing empty block: the next message still starts afresh.
        let bare = ByteBuffer(bytes: [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(try codec.decompress(bare, limit: 100, allocator: allocator) == ByteBuffer(string: "Hello"))
        #expect(try codec.decompress(final, limit: 100, allocator: allocator) == ByteBuffer(string: "Hello"))
    }

    @Test func inflatingStopsAtTheLimitAndRefusesGarbage() throws {
        let sender = try #require(PerMessageDeflate.make(PerMessageDeflateParameters()))
        let receiver = try #require(PerMessageDeflate.make(PerMessageDeflateParameters()))
        let large = sender.compress(ByteBuffer(repeating: 0x61, count: 1 << 20), allocator: allocator)
        #expect(large.readableBytes < 4096)
        #expect(throws: PerMessageDeflate.InflateFailure.overLimit) { try receiver.decompress(large, limit: 1 << 19, allocator: allocator) }
        let fresh = try #require(PerMessageDeflate.make(PerMessageDeflateParameters()))
        #expect(throws: PerMessageDeflate.InflateFailure.invalid) {
            try fresh.decompress(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF]), limit: 100, allocator: allocator)
        }
    }

    @Test func compressedMessagesRoundTripWithAndWithoutContextTakeover() throws {
        for takeover in [true, false] {
            var parameters = PerMessageDeflateParameters()
            parameters.clientNoContextTakeover = !takeover
            parameters.serverNoContextTakeover = !takeover
            let sender = try #require(PerMessageDeflate.make(parameters))
            let receiver = try #require(PerMessageDeflate.make(parameters))
            for (index, text) in ["Hello", "", "", String(repeating: "WebSocket ", count: 5000), "Hello", "x"].enumerated() {
                let compressed = sender.compress(ByteBuffer(string: text), allocator: allocator)
                do {
                    #expect(try receiver.decompress(compressed, limit: 1 << 20, allocator: allocator) == ByteBuffer(string: text))
                } catch {
                    Issue.record(
                        "\(error): message \(index), takeover \(takeover), \(text.count) characters as \(Array(compressed.readableBytesView.prefix(16)))"
                    )
                }
            }
        }
        // Without context takeover "Hello" compresses as the RFC's example does.
        var fresh = PerMessageDeflateParameters()
        fresh.clientNoContextTakeover = true
        let codec = try #require(PerMessageDeflate.make(fresh))
        #expect(
            codec.compress(ByteBuffer(string: "Hello"), allocator: allocator)
                == ByteBuffer(bytes: [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]))
    }
}

/// Counts the reads that reach the head of the pipeline.
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Never
    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}
