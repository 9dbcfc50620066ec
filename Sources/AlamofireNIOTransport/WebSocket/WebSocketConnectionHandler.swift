import Foundation
public import NIOCore
import NIOWebSocket

/// What an open WebSocket hands its reader: a message, or the server's close (the last element).
public enum TransportWebSocketEvent: Sendable, Hashable {
    case message(TransportWebSocketMessage)
    /// The server's close frame: its code (nil when it carried none) and reason.
    case closed(code: UInt16?, reason: ByteBuffer)
}

/// Runs an upgraded connection's WebSocket on its event loop: frames the client's messages (masked),
/// answers pings, matches pongs to the pings sent, hands the server's messages to a back-pressured
/// sequence and performs the close handshake, all as its ``WebSocketConnectionStateMachine`` decides.
/// While the reader takes no more events, the handler holds back socket reads.
final class WebSocketConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        TransportWebSocketEvent, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, WebSocketDemand
    >

    private var machine: WebSocketConnectionStateMachine
    private let source: Producer.Source
    private var context: ChannelHandlerContext?
    private var wantsEvents = true
    private var heldRead = false
    private var pendingPings: [UInt64: EventLoopPromise<Void>] = [:]
    private var nextPing: UInt64 = 0
    private var closeTimer: Scheduled<Void>?
    /// How long the server has to answer the client's close before the connection is dropped.
    let closeTimeout: TimeAmount

    /// permessage-deflate's codec, when the server accepted it.
    private let deflate: PerMessageDeflate?

    init(maximumMessageSize: Int, source: Producer.Source, closeTimeout: TimeAmount, deflate: PerMessageDeflate? = nil) {
        self.deflate = deflate
        self.machine = WebSocketConnectionStateMachine(maximumMessageSize: maximumMessageSize, inflater: deflate)
        self.source = source
        self.closeTimeout = closeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(machine.received(unwrapInboundIn(data)), context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketError || error is ByteToMessageDecoderError {
            perform(machine.decodingFailed(error), context)
        } else {
            end(machine.connectionEnded(error: error), context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(machine.connectionEnded(), context)
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if wantsEvents || !machine.mayHoldReads {
            context.read()
        } else {
            heldRead = true
        }
    }

    private func perform(_ action: WebSocketConnectionStateMachine.InboundAction, _ context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .deliver(let message):
            yield(.message(message))
        case .answerPing(let payload):
            context.writeAndFlush(wrapOutboundOut(Self.frame(.pong, payload)), promise: nil)
        case .pong(var payload):
            if payload.readableBytes == 8, let id = payload.readInteger(as: UInt64.self) { pendingPings.removeValue(forKey: id)?.succeed() }
        case .peerClosed(let code, let reason, let echo):
            if echo {
                var payload = context.channel.allocator.buffer(capacity: 2)
                if let code { payload.writeInteger(code) }
                context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, payload)), promise: nil)
            }
            yield(.closed(code: code, reason: reason))
            finish(nil, context)
        case .violation(let code, let error):
            var payload = context.channel.allocator.buffer(capacity: 2)
            payload.write(webSocketErrorCode: code)
            context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, payload)), promise: nil)
            finish(error, context)
        }
    }

    private func end(_ action: WebSocketConnectionStateMachine.EndAction?, _ context: ChannelHandlerContext) {
        switch action {
        case nil: return
        case .finish: finish(nil, context)
        case .fail(let error): finish(error, context)
        }
    }

    /// Ends the reader's sequence (with `error`, if any), fails the pings still waiting and closes the connection.
    private func finish(_ error: TransportError?, _ context: ChannelHandlerContext) {
        closeTimer?.cancel()
        closeTimer = nil
        if let error { source.finish(error) } else { source.finish() }
        let pings = pendingPings.values
        pendingPings.removeAll()
        let lost = error ?? TransportError.connectionLost("the WebSocket closed before the pong arrived")
        pings.forEach { $0.fail(lost) }
        context.close(promise: nil)
    }

    private func yield(_ event: TransportWebSocketEvent) {
        if case .stopProducing = source.yield(event) { wantsEvents = false }
    }

    /// The reader wants more events: a held-back read is issued.
    func readerDemanded() {
        wantsEvents = true
        guard heldRead, let context else { return }
        heldRead = false
        context.read()
    }

    /// The reader went away: the connection is abandoned.
    func readerTerminated() {
        cancel()
    }

    // MARK: Outbound, on the event loop

    func send(_ message: TransportWebSocketMessage, promise: EventLoopPromise<Void>) {
        guard machine.canSend, let context else { return promise.fail(Self.notOpen) }
        let (opcode, payload): (WebSocketOpcode, ByteBuffer) =
            switch message {
            case .text(let text): (.text, context.channel.allocator.buffer(string: text))
            case .binary(let bytes): (.binary, bytes)
            }
        let frame =
            deflate.map { Self.frame(opcode, $0.compress(payload, allocator: context.channel.allocator), compressed: true) }
            ?? Self.frame(opcode, payload)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
    }

    func ping(promise: EventLoopPromise<Void>) {
        guard machine.canSend, let context else { return promise.fail(Self.notOpen) }
        let id = nextPing
        nextPing &+= 1
        pendingPings[id] = promise
        var payload = context.channel.allocator.buffer(capacity: 8)
        payload.writeInteger(id)
        context.writeAndFlush(wrapOutboundOut(Self.frame(.ping, payload)), promise: nil)
    }

    func close(code: UInt16, reason: ByteBuffer?) {
        guard let context, machine.closeRequested() else { return }
        var payload = context.channel.allocator.buffer(capacity: 2 + (reason?.readableBytes ?? 0))
        payload.writeInteger(code)
        if var reason { payload.writeBuffer(&reason) }
        context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, payload)), promise: nil)
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: closeTimeout) { [self] in
            guard let context = self.context else { return }
            end(machine.closeTimedOut(), context)
        }
        // The server's answer is read whatever the reader's pace.
        if heldRead {
            heldRead = false
            context.read()
        }
    }

    func cancel() {
        guard let context else { return }
        switch machine.cancelled() {
        case .closed:
            return
        case .open:
            var payload = context.channel.allocator.buffer(capacity: 2)
            payload.write(webSocketErrorCode: .goingAway)
            context.writeAndFlush(wrapOutboundOut(Self.frame(.connectionClose, payload)), promise: nil)
        case .closeSent:
            break
        }
        finish(.cancelled, context)
    }

    static let notOpen = TransportError(.networkConnectionLost, "the WebSocket is not open")

    /// A client frame: whole, masked with a fresh key; RSV1 marks a compressed message.
    static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer, compressed: Bool = false) -> WebSocketFrame {
        WebSocketFrame(fin: true, rsv1: compressed, opcode: opcode, maskKey: .random(), data: data)
    }
}

/// Tells the connection handler when its reader wants more events or has gone away.
struct WebSocketDemand: NIOAsyncSequenceProducerDelegate {
    let onDemand: @Sendable () -> Void
    let onTermination: @Sendable () -> Void

    func produceMore() { onDemand() }
    func didTerminate() { onTermination() }
}
