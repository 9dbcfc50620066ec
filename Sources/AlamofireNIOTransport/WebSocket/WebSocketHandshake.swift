import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket

extension HTTPTransport {
    /// Opens a WebSocket (RFC 6455): a connection of its own (never pooled; HTTP/1.1, through the
    /// proxy by a tunnel, with TLS and the server trust evaluator for `https`), then the upgrade
    /// request. A `101` with the right `Sec-WebSocket-Accept` opens the WebSocket; any other
    /// response comes back whole, for the caller to follow a redirect or answer a challenge.
    /// - Parameters:
    ///   - request: the handshake: an `http` or `https` URL (the caller maps `ws` and `wss`) and the
    ///     header fields to send; its method and body are ignored (a `GET` without body is sent).
    ///     Its connect timeout bounds connecting, its idle timeout the wait for the answer.
    ///   - options: the subprotocols offered and the limits of the open WebSocket.
    /// - Throws: ``TransportError``: `.badServerResponse` for a `101` that does not complete the
    ///   handshake (a wrong accept key, a subprotocol or an extension not offered).
    public func openWebSocket(
        _ request: TransportRequest, options: TransportWebSocketOptions = .init()
    ) async throws
        -> TransportWebSocketHandshake
    {
        var origin: Origin
        var head: HTTPRequestHead
        do {
            try checkNotShutDown()
            origin = try Origin(
                url: request.url, clientIdentity: request.clientIdentity, proxy: configuration.proxies.proxy(for: request.url))
            origin.isWebSocket = true
            var handshakeRequest = request
            handshakeRequest.method = .GET
            handshakeRequest.body = .none
            head = try Self.head(for: handshakeRequest, origin: origin, bodyLength: 0)
            if !options.subprotocols.isEmpty {
                // RFC 6455 §4.1: each a token, so that none can split the list or the head.
                for subprotocol in options.subprotocols where !RequestHeadValidation.isToken(subprotocol) {
                    throw TransportError(.badURL, "the WebSocket subprotocol \(subprotocol.debugDescription) is not an HTTP token")
                }
                head.headers.replaceOrAdd(name: "Sec-WebSocket-Protocol", value: options.subprotocols.joined(separator: ", "))
            }
            if options.offersCompression {
                head.headers.replaceOrAdd(name: "Sec-WebSocket-Extensions", value: PerMessageDeflateParameters.offer)
            }
        } catch {
            throw Self.transportError(error)
        }
        let handshakeHead = head
        let start = clock.now
        let connectDeadline = request.timeouts.connectDeadline(from: start, within: request.timeouts.total.map { start + $0 })
        let opened = try await openChannelCancellably(to: origin, deadline: connectDeadline)
        let channel = opened.channel
        do {
            // A shutdown while it connected: the WebSocket is not opened.
            try checkNotShutDown()
            try Task.checkCancellation()
            // The answer is awaited for the idle timeout, and no longer than the total limit leaves.
            let answerTimeout = [request.timeouts.idle, request.timeouts.total.map { start + $0 - clock.now }].compactMap { $0 }.min()
            let handshake = try await channel.eventLoop.submit {
                try WebSocketHandshakeHandler.install(
                    on: channel, head: handshakeHead, options: options, metrics: opened.metrics, timeout: answerTimeout)
            }.get()
            return try await withTaskCancellationHandler {
                try await handshake.outcome.get()
            } onCancel: {
                channel.eventLoop.execute { handshake.handler.value.fail(.cancelled) }
            }
        } catch is CancellationError {
            channel.close(promise: nil)
            throw TransportError.cancelled
        } catch {
            throw factory.setUpFailure(error, of: opened)
        }
    }
}

extension HTTPTransport {
    /// Opens the channel, returning at once when the calling task is cancelled (with `.cancelled`):
    /// connecting, a proxy tunnel and a TLS handshake end only at their deadline otherwise. A
    /// channel that opens after the cancel is closed.
    private func openChannelCancellably(
        to origin: Origin, deadline: NIODeadline?
    ) async throws -> ConnectionFactory.OpenedChannel {
        let race = FirstResult<ConnectionFactory.OpenedChannel>()
        let factory = self.factory
        let opening = Task {
            do {
                let opened = try await factory.openChannel(to: origin, deadline: deadline)
                if !race.deliver(.success(opened)) { opened.channel.close(promise: nil) }
            } catch {
                race.deliver(.failure(error))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { race.wait(with: $0) }
        } onCancel: {
            opening.cancel()
            race.deliver(.failure(TransportError.cancelled))
        }
    }
}

/// The first of several results racing to one waiter (which may start waiting before or after it).
final class FirstResult<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, any Error>)
        case ready(Result<Value, any Error>)
        case delivered
    }

    private let state = NIOLockedValueBox(State.idle)

    /// Hands `result` to the waiter (now, or when it starts waiting) unless a result came first;
    /// returns whether it will be the one delivered.
    @discardableResult
    func deliver(_ result: Result<Value, any Error>) -> Bool {
        let (waiter, accepted) = state.withLockedValue { state -> (CheckedContinuation<Value, any Error>?, Bool) in
            switch state {
            case .idle:
                state = .ready(result)
                return (nil, true)
            case .waiting(let waiter):
                state = .delivered
                return (waiter, true)
            case .ready, .delivered:
                return (nil, false)
            }
        }
        waiter?.resume(with: result)
        return accepted
    }

    /// Starts waiting (once).
    func wait(with continuation: CheckedContinuation<Value, any Error>) {
        let ready = state.withLockedValue { state -> Result<Value, any Error>? in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .ready(let result):
                state = .delivered
                return result
            case .waiting, .delivered:
                return .failure(TransportError(.unknown, "a result was waited for twice"))
            }
        }
        if let ready { continuation.resume(with: ready) }
    }
}

/// Sends the upgrade request on a new connection and reads the answer. A `101` that completes the
/// handshake (NIO's client upgrader checks the accept key; this handler the subprotocol and
/// extensions) is upgraded at once, while its `.end` is read: the frame codec and the
/// ``WebSocketConnectionHandler`` go in right behind the HTTP decoder, whose removal hands them the
/// bytes that followed the `101`, so a server that sends its frames and closes at once loses none.
/// Any other response is collected (bounded) and the connection closed. Touched only on its event loop.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// The most body a refusing response may have.
    static let maximumRefusalBody = 1 << 20

    private var head: HTTPRequestHead
    private let options: TransportWebSocketOptions
    private var promise: EventLoopPromise<TransportWebSocketHandshake>?
    private var metrics: ExchangeMetrics
    private let timeout: TimeAmount?
    /// Adds the key and version fields and checks the accept key.
    private let upgrader: NIOWebSocketClientUpgrader
    private let encoder: HTTPRequestEncoder
    private let decoder: ByteToMessageHandler<HTTPResponseDecoder>
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var response: HTTPResponseHead?
    private var body: ByteBuffer?
    /// What the server's `101` accepted of permessage-deflate.
    private var compression: PerMessageDeflateParameters?

    private init(
        head: HTTPRequestHead, options: TransportWebSocketOptions, promise: EventLoopPromise<TransportWebSocketHandshake>,
        metrics: ExchangeMetrics, timeout: TimeAmount?, encoder: HTTPRequestEncoder, decoder: ByteToMessageHandler<HTTPResponseDecoder>
    ) {
        self.options = options
        self.promise = promise
        self.metrics = metrics
        self.timeout = timeout
        self.encoder = encoder
        self.decoder = decoder
        // Only its key and its check are used: the upgrade itself is this handler's.
        self.upgrader = NIOWebSocketClientUpgrader { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
        self.head = head
        self.head.headers.replaceOrAdd(name: "Upgrade", value: "websocket")
        self.head.headers.replaceOrAdd(name: "Connection", value: "Upgrade")
        upgrader.addCustom(upgradeRequestHeaders: &self.head.headers)
    }

    /// Sets up HTTP/1.1 on `channel` and sends the upgrade request; must run on the channel's event loop.
    static func install(
        on channel: any Channel, head: HTTPRequestHead, options: TransportWebSocketOptions, metrics: ExchangeMetrics,
        timeout: TimeAmount?
    ) throws -> (outcome: EventLoopFuture<TransportWebSocketHandshake>, handler: NIOLoopBound<WebSocketHandshakeHandler>) {
        guard channel.isActive else {
            throw TransportError.connectionLost("the server closed the connection before the WebSocket handshake")
        }
        let promise = channel.eventLoop.makePromise(of: TransportWebSocketHandshake.self)
        let pipeline = channel.pipeline.syncOperations
        var metrics = metrics
        if let tls = try? pipeline.handler(type: NIOSSLClientHandler.self) { metrics.negotiatedTLSVersion = tls.tlsVersion }
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let handler = WebSocketHandshakeHandler(
            head: head, options: options, promise: promise, metrics: metrics, timeout: timeout, encoder: encoder, decoder: decoder)
        try pipeline.addHandler(encoder)
        try pipeline.addHandler(decoder)
        try pipeline.addHandler(handler)
        if let observer = try? pipeline.handler(type: TLSHandshakeObserver.self) { pipeline.removeHandler(observer, promise: nil) }
        return (promise.futureResult, NIOLoopBound(handler, eventLoop: channel.eventLoop))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        metrics.requestStart = context.eventLoop.now
        metrics.requestHeaderBytesSent = ActiveExchange.headByteCount(head)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        metrics.requestEnd = context.eventLoop.now
        if let timeout {
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                fail(.timedOut("waiting for the answer to the WebSocket handshake"))
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After a failure, what is still read is dropped.
        guard promise != nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            metrics.responseStart = context.eventLoop.now
            metrics.responseHeaderBytesReceived = ActiveExchange.headByteCount(head)
            response = head
            if head.status == .switchingProtocols, let refusal = refusal(of: head) { fail(.badResponse(refusal)) }
        case .body(var chunk):
            let size = (body?.readableBytes ?? 0) + chunk.readableBytes
            guard size <= Self.maximumRefusalBody else {
                return fail(TransportError(.dataLengthExceedsMaximum, "the refusal of the WebSocket handshake has a body over 1 MiB"))
            }
            metrics.responseBodyBytesReceived = Int64(size)
            metrics.responseBodyBytesAfterDecoding = Int64(size)
            if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
        case .end(let trailers):
            guard let response else { return fail(.badResponse("the server answered the WebSocket handshake without a head")) }
            metrics.responseEnd = context.eventLoop.now
            if response.status == .switchingProtocols { return upgrade(response, context) }
            let collected = CollectedTransportResponse(
                head: response, body: body ?? ByteBuffer(), completion: ExchangeCompletion(trailers: trailers, metrics: metrics))
            complete(.success(.refused(collected)))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(.badResponse("the answer to the WebSocket handshake is not valid HTTP", error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionLost("the server closed the connection before answering the WebSocket handshake"))
        context.fireChannelInactive()
    }

    /// Why a `101` does not complete the handshake, if it does not.
    private func refusal(of response: HTTPResponseHead) -> String? {
        guard response.headers[canonicalForm: "Upgrade"].contains(where: { $0.lowercased() == "websocket" }),
            response.headers[canonicalForm: "Connection"].contains(where: { $0.lowercased() == "upgrade" })
        else { return "the server's 101 does not switch to WebSocket" }
        guard upgrader.shouldAllowUpgrade(upgradeResponse: response) else {
            return "the server's Sec-WebSocket-Accept does not answer the key sent"
        }
        let chosen = response.headers[canonicalForm: "Sec-WebSocket-Protocol"].map(String.init)
        guard chosen.count <= 1, chosen.allSatisfy(options.subprotocols.contains) else {
            return "the server chose the WebSocket subprotocol \(chosen), which was not offered"
        }
        let extensions = response.headers["Sec-WebSocket-Extensions"]
        guard options.offersCompression || extensions.isEmpty else {
            return "the server chose WebSocket extensions, and none was offered"
        }
        switch PerMessageDeflateParameters.negotiated(by: extensions) {
        case .success(let parameters): compression = parameters
        case .failure(let failure): return "the server's WebSocket extensions are not acceptable: \(failure.description)"
        }
        return nil
    }

    /// Replaces HTTP with the WebSocket's handlers and hands the WebSocket over.
    private func upgrade(_ response: HTTPResponseHead, _ context: ChannelHandlerContext) {
        let eventLoop = context.eventLoop
        let box = NIOLoopBoundBox<WebSocketConnectionHandler?>(nil, eventLoop: eventLoop)
        // The reader's buffer counts messages: as many as fit in 4 MiB at the largest size allowed
        // (2 to 16), so that a few large messages cannot pile up where many small ones may.
        let highWatermark = max(2, min(16, (4 << 20) / max(1, options.maximumMessageSize)))
        let sequence = WebSocketConnectionHandler.Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: highWatermark / 2, highWatermark: highWatermark), finishOnDeinit: false,
            delegate: WebSocketDemand(
                onDemand: { eventLoop.execute { box.value?.readerDemanded() } },
                onTermination: { eventLoop.execute { box.value?.readerTerminated() } }))
        var deflate: PerMessageDeflate?
        if let compression {
            guard let codec = PerMessageDeflate.make(compression) else {
                return fail(.badResponse("zlib could not be set up for permessage-deflate"))
            }
            deflate = codec
        }
        let connection = WebSocketConnectionHandler(
            maximumMessageSize: options.maximumMessageSize, source: sequence.source, closeTimeout: options.closeTimeout, deflate: deflate)
        box.value = connection
        do {
            let pipeline = context.pipeline.syncOperations
            let frameEncoder = WebSocketFrameEncoder()
            let frameDecoder = ByteToMessageHandler(
                WebSocketFrameDecoder(maxFrameSize: min(max(options.maximumMessageSize, 125), Int(UInt32.max))))
            try pipeline.addHandler(frameEncoder, position: .after(decoder))
            try pipeline.addHandler(frameDecoder, position: .after(frameEncoder))
            try pipeline.addHandler(connection, position: .after(frameDecoder))
            // The HTTP decoder leaves on a later tick, forwarding what followed the 101 as it goes.
            // Until it has left, nothing may reach the WebSocket: its writes (a pong, a close) would
            // pass the decoder, which also sees writes. So what the decoder forwards is held behind
            // it, and what arrives meanwhile (more frames, the end of the connection, which would
            // make the decoder drop its bytes) in front of it; both are handed on, in that order,
            // once it is gone.
            let forwarded = InboundHoldingHandler()
            let arriving = InboundHoldingHandler()
            try pipeline.addHandler(forwarded, position: .after(decoder))
            try pipeline.addHandler(arriving, position: .before(decoder))
            pipeline.removeHandler(encoder, promise: nil)
            let decoderRemoved = eventLoop.makePromise(of: Void.self)
            decoderRemoved.futureResult.assumeIsolated().whenComplete { _ in
                pipeline.removeHandler(forwarded, promise: nil)
                pipeline.removeHandler(arriving, promise: nil)
            }
            pipeline.removeHandler(decoder, promise: decoderRemoved)
            pipeline.removeHandler(context: context, promise: nil)
        } catch {
            return fail(.connectionLost("the WebSocket could not be set up", error))
        }
        let socket = TransportWebSocket(
            response: response, subprotocol: response.headers[canonicalForm: "Sec-WebSocket-Protocol"].first.map(String.init),
            isCompressed: deflate != nil, metrics: metrics, events: TransportWebSocketEvents(producer: sequence.sequence),
            handler: NIOLoopBound(connection, eventLoop: eventLoop), eventLoop: eventLoop)
        complete(.success(.upgraded(socket)))
    }

    /// Fails the handshake (once) and closes the connection.
    func fail(_ error: TransportError) {
        guard promise != nil else { return }
        complete(.failure(error))
        context?.close(promise: nil)
    }

    private func complete(_ result: Result<TransportWebSocketHandshake, any Error>) {
        guard let promise else { return }
        self.promise = nil
        timer?.cancel()
        timer = nil
        promise.completeWith(result)
    }
}

/// Holds back what arrives (reads, errors and the end of the connection) until it is removed,
/// then hands it on in order.
final class InboundHoldingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private enum Held {
        case read(NIOAny)
        case error(any Error)
    }

    private var held: [Held] = []
    private var sawInactive = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        held.append(.read(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        held.append(.error(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        sawInactive = true
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        let held = self.held
        self.held = []
        for item in held {
            switch item {
            case .read(let data): context.fireChannelRead(data)
            case .error(let error): context.fireErrorCaught(error)
            }
        }
        if !held.isEmpty { context.fireChannelReadComplete() }
        if sawInactive { context.fireChannelInactive() }
    }
}
