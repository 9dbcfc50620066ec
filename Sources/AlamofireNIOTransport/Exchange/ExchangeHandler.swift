import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix

/// What an HTTP/2 stream's handler asks of its connection. On the connection's event loop.
protocol HTTP2StreamConnection: AnyObject {
    /// The error that ended the connection, if any.
    var connectionError: (any Error)? { get }
    /// Whether a stream ended with its response, or the server's GOAWAY promised to process one.
    var hasAnswered: Bool { get }
    /// Whether the server's GOAWAY left `stream` unprocessed.
    func wasRefusedByGoAway(_ stream: any Channel) -> Bool
    /// A stream's exchange completed with its whole response.
    func streamAnswered()
}

/// Told of what happens to a channel carrying exchanges, on its event loop.
protocol ExchangeHandlerDelegate: AnyObject, Sendable {
    /// The exchange is done; the channel is idle again if `reusable`, else it is closing.
    func exchangeFinished(connectionID: Int, reusable: Bool)
    /// The channel closed while it was idle.
    func idleConnectionClosed(connectionID: Int)
}

/// Runs exchanges on a channel that speaks `HTTPClientRequestPart`s and `HTTPClientResponsePart`s:
/// a whole HTTP/1.1 connection, one exchange after another, or one HTTP/2 stream behind NIOHTTP2's
/// HTTP/1 translation, for exactly one exchange. It performs the actions of
/// ``ExchangeChannelStateMachine``.
///
/// Back-pressure on reading follows NIO's usual pattern: the channel's `read()` requests pass through
/// this handler, which holds one back while the body consumer wants no more and issues it when demand
/// returns. While waiting for a head and while idle (to see the server close) reads flow freely. On
/// an HTTP/2 stream a held-back read also holds back the stream's flow-control window, so a slow
/// consumer slows its own stream only. Writing a streamed body waits whenever the channel is not
/// writable (on a stream, whenever the peer's window is spent), so neither direction buffers more
/// than a few chunks.
final class ExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private var stateMachine = ExchangeChannelStateMachine()
    private var exchange: ActiveExchange?
    private var context: ChannelHandlerContext?
    /// A read the channel asked for while the consumer wanted no more body.
    private var deferredRead = false
    /// The error behind a failure the state machine reports as `.error`.
    private var lastError: (any Error)?
    /// The server's alert refusing the client's certificate, kept though later errors follow it.
    private var certificateAlert: TransportError?
    private let byteCounter: any ReceivedByteCounter
    let connectionID: Int
    /// Connection-level metrics (lookup, connect, TLS, addresses, protocol), copied into each exchange's.
    let connectionMetrics: ExchangeMetrics
    /// Whether the channel is an HTTP/2 stream: one exchange, never kept alive.
    let carriesOneExchange: Bool
    /// Whether a file body goes to the socket as `FileRegion`s (`sendfile`, no copy through user
    /// space): on a plain HTTP/1.1 connection, where nothing between here and the socket transforms
    /// the bytes.
    let sendsFileRegions: Bool
    weak var delegate: (any ExchangeHandlerDelegate)?
    /// On an HTTP/2 stream, its connection.
    weak var streamConnection: (any HTTP2StreamConnection)?
    /// Exchanges completed on the connection before this one's, counting other streams on HTTP/2.
    private(set) var completedExchanges: Int

    /// - Parameters:
    ///   - connectionID: the pool's id for the connection.
    ///   - byteCounter: counts what the channel receives, for the byte metrics.
    ///   - connectionMetrics: the connection's setup metrics.
    ///   - carriesOneExchange: true on an HTTP/2 stream.
    ///   - previousExchanges: exchanges the connection served before (other streams), so that
    ///     `isReusedConnection` is true for every stream after the first.
    ///   - sendsFileRegions: true on a plain HTTP/1.1 connection, whose file bodies go by `sendfile`.
    init(
        connectionID: Int, byteCounter: any ReceivedByteCounter, connectionMetrics: ExchangeMetrics, carriesOneExchange: Bool = false,
        previousExchanges: Int = 0, sendsFileRegions: Bool = false
    ) {
        self.sendsFileRegions = sendsFileRegions
        self.connectionID = connectionID
        self.byteCounter = byteCounter
        self.connectionMetrics = connectionMetrics
        self.carriesOneExchange = carriesOneExchange
        self.completedExchanges = previousExchanges
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        exchange?.lastActivity = context.eventLoop.now
        switch unwrapInboundIn(data) {
        case .head(let head): perform(stateMachine.responseHead(head), context)
        case .body(let buffer): perform(stateMachine.responseBody(buffer), context)
        case .end(let trailers): perform(stateMachine.responseEnd(trailers), context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A stream closes with its connection: the connection's error (a malformed frame, a GOAWAY
        // with an error code) says why.
        if let error = streamConnection?.connectionError {
            if certificateAlert == nil { certificateAlert = ClientCertificateAlert.transportError(for: error) }
            if lastError == nil || lastError is NIOHTTP2Errors.StreamClosed { lastError = error }
        }
        perform(stateMachine.channelInactive(), context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        lastError = error
        if certificateAlert == nil { certificateAlert = ClientCertificateAlert.transportError(for: error) }
        perform(stateMachine.errorCaught(), context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let promise = exchange?.writabilityPromise {
            exchange?.writabilityPromise = nil
            promise.succeed()
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if stateMachine.wantsRead {
            context.read()
        } else {
            deferredRead = true
        }
    }

    // MARK: Exchanges

    /// Starts an exchange; it reports through the promises in `exchange`. Must run on the event loop.
    func startExchange(_ newExchange: ActiveExchange) {
        guard let context else {
            let closed = TransportError.connectionLost("the connection closed before the request was sent")
            if let certificateAlert { return newExchange.fail(certificateAlert) }
            newExchange.fail(completedExchanges > 0 ? RetryableExchangeError(closed, onFreshConnection: !carriesOneExchange) : closed)
            return
        }
        let isReused = completedExchanges > 0
        var metrics = connectionMetrics
        metrics.fetchStart = newExchange.metrics.fetchStart
        metrics.isReusedConnection = isReused
        if isReused {
            // Like URLSession: only the exchange that opened the connection reports its setup.
            metrics.domainLookupStart = nil
            metrics.domainLookupEnd = nil
            metrics.connectStart = nil
            metrics.connectEnd = nil
            metrics.secureConnectionStart = nil
            metrics.secureConnectionEnd = nil
        }
        newExchange.metrics = metrics
        newExchange.mayRetryOnFreshConnection = isReused
        newExchange.wireBytesAtStart = byteCounter.received

        let keepAlive = !carriesOneExchange && newExchange.head.isKeepAlive
        let streamed: Bool
        switch newExchange.request.body {
        case .none, .bytes: streamed = false
        case .file, .stream, .replayableStream: streamed = true
        }
        exchange = newExchange
        newExchange.handler = self
        lastError = nil
        perform(stateMachine.startExchange(keepAlive: keepAlive, hasStreamedBody: streamed), context)
        // A cancellation decided while the exchange was on its way here (an HTTP/2 stream being
        // opened) takes effect now; one decided later reaches this handler through the event loop.
        if let pending = newExchange.controller?.cancellation, exchange === newExchange {
            cancel(newExchange, error: pending)
        }
    }

    /// Cancels the running exchange, if it is `target`.
    func cancel(_ target: ActiveExchange, error: TransportError) {
        guard exchange === target, let context else { return }
        lastError = error
        perform(stateMachine.cancel(), context)
    }

    // MARK: Performing actions

    private func perform(_ action: ExchangeChannelStateMachine.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .sendRequest:
            sendRequest(context)
        case .forwardHead(let head):
            forwardHead(head, context)
        case .forwardBody(let buffer):
            forwardBody(buffer)
        case .completeExchange(let trailers, let reusable):
            // An HTTP/2 stream whose both sides have ended closes by itself; closing it here as well
            // sent a RST_STREAM per request (which a server guarding against rapid resets may
            // count against us) and left NIOHTTP2 about 220 bytes per stream for good.
            if !reusable && !carriesOneExchange { context.close(promise: nil) }
            // The pool learns first, so that a request the caller makes from its completion finds
            // this connection idle instead of opening another.
            delegate?.exchangeFinished(connectionID: connectionID, reusable: reusable)
            complete(trailers: trailers)
        case .completeExchangeAndClose(let trailers):
            complete(trailers: trailers)
            context.close(promise: nil)
            delegate?.exchangeFinished(connectionID: connectionID, reusable: false)
        case .failExchange(let kind, let close):
            failExchange(kind)
            if close { context.close(promise: nil) }
            delegate?.exchangeFinished(connectionID: connectionID, reusable: false)
        case .closeIdleConnection:
            context.close(promise: nil)
            delegate?.idleConnectionClosed(connectionID: connectionID)
        }
        readIfWanted(context)
    }

    /// Issues the read held back while there was no demand, once there is.
    private func readIfWanted(_ context: ChannelHandlerContext) {
        guard deferredRead, stateMachine.wantsRead else { return }
        deferredRead = false
        context.read()
    }

    private func sendRequest(_ context: ChannelHandlerContext) {
        guard let exchange else { return }
        // Times come from the event loop's clock, so tests can drive them.
        let now = context.eventLoop.now
        exchange.metrics.requestStart = now
        exchange.metrics.requestHeaderBytesSent = exchange.headByteCount
        exchange.lastActivity = now
        scheduleIdleTimeout(exchange, context)
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        switch exchange.request.body {
        case .none:
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            exchange.metrics.requestEnd = now
        case .bytes(let buffer):
            // Counted before the write: a write that fails closes the channel before it returns.
            exchange.requestBodyHandedOn = buffer.readableBytes > 0
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            exchange.requestBodyBytesSent = Int64(buffer.readableBytes)
            exchange.metrics.requestEnd = now
            exchange.request.onUploadProgress?(exchange.requestBodyBytesSent, exchange.requestBodyLength)
        case .file(let url):
            context.flush()
            let length = exchange.requestBodyLength
            startBodyTask(exchange, context, sendsFileRegions: sendsFileRegions) { writer in
                try await FileBody.send(url, announcedLength: length, through: writer)
            }
        case .stream(_, let produce), .replayableStream(_, let produce):
            context.flush()
            startBodyTask(exchange, context, sendsFileRegions: false, produce)
        }
    }

    /// Runs the body's producer off the event loop; its writer offers `sendfile` only where the
    /// connection can take file regions.
    private func startBodyTask(
        _ exchange: ActiveExchange, _ context: ChannelHandlerContext, sendsFileRegions: Bool,
        _ produce: @escaping @Sendable (TransportBodyWriter) async throws -> Void
    ) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let target = NIOLoopBound(exchange, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let writeRegion: (@Sendable (FileRegion) async throws -> Void)?
        if sendsFileRegions {
            writeRegion = { region in
                try await eventLoop.flatSubmit { handler.value.writeFileRegion(region, for: target.value, on: eventLoop) }.get()
            }
        } else {
            writeRegion = nil
        }
        let writer = TransportBodyWriter(
            writeChunk: { chunk in
                try await eventLoop.flatSubmit { handler.value.writeBodyChunk(chunk, for: target.value, on: eventLoop) }.get()
            },
            writeRegion: writeRegion)
        exchange.bodyProducerStarted = true
        exchange.bodyTask = Task {
            do {
                try await produce(writer)
                eventLoop.execute { handler.value.finishRequestBody(for: target.value) }
            } catch {
                eventLoop.execute { handler.value.requestBodyFailed(error, for: target.value) }
            }
        }
    }

    /// Writes one chunk; the future completes when the writer may send the next one.
    private func writeBodyChunk(_ chunk: ByteBuffer, for target: ActiveExchange, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard let context, exchange === target, stateMachine.exchange?.isSendingBody == true else {
            return eventLoop.makeFailedFuture(TransportError.cancelled)
        }
        // A byte past the announced length would reach the server as the start of another request.
        // The exchange fails too, so a producer that catches the error cannot go on to a wrong body.
        if let expected = target.requestBodyLength, target.requestBodyBytesSent + Int64(chunk.readableBytes) > expected {
            let error = TransportError(.cannotDecodeRawData, "the request body had more than the \(expected) bytes announced")
            lastError = error
            perform(stateMachine.errorCaught(), context)
            return eventLoop.makeFailedFuture(error)
        }
        target.requestBodyHandedOn = true
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
        target.lastActivity = context.eventLoop.now
        target.requestBodyBytesSent += Int64(chunk.readableBytes)
        target.request.onUploadProgress?(target.requestBodyBytesSent, target.requestBodyLength)
        if context.channel.isWritable { return context.eventLoop.makeSucceededVoidFuture() }
        let promise = context.eventLoop.makePromise(of: Void.self)
        target.writabilityPromise = promise
        return promise.futureResult
    }

    /// Writes one slice of a file body by `sendfile`; the future completes once it is all written
    /// (the slice's file stays open until then).
    private func writeFileRegion(_ region: FileRegion, for target: ActiveExchange, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard let context, exchange === target, stateMachine.exchange?.isSendingBody == true else {
            return eventLoop.makeFailedFuture(TransportError.cancelled)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        target.requestBodyHandedOn = true
        context.writeAndFlush(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
        target.lastActivity = context.eventLoop.now
        let bound = NIOLoopBound(target, eventLoop: context.eventLoop)
        return written.futureResult.map {
            let target = bound.value
            target.lastActivity = eventLoop.now
            target.requestBodyBytesSent += Int64(region.readableBytes)
            target.request.onUploadProgress?(target.requestBodyBytesSent, target.requestBodyLength)
        }
    }

    private func finishRequestBody(for target: ActiveExchange) {
        guard let context, exchange === target, stateMachine.exchange?.isSendingBody == true else { return }
        if let expected = target.requestBodyLength, expected != target.requestBodyBytesSent {
            lastError = TransportError(
                .cannotDecodeRawData, "the request body had \(target.requestBodyBytesSent) bytes, not the \(expected) announced")
            perform(stateMachine.errorCaught(), context)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        target.metrics.requestEnd = context.eventLoop.now
        perform(stateMachine.requestBodyFinished(), context)
    }

    private func requestBodyFailed(_ error: any Error, for target: ActiveExchange) {
        guard let context, exchange === target else { return }
        lastError = error
        perform(stateMachine.errorCaught(), context)
    }

    private func forwardHead(_ head: HTTPResponseHead, _ context: ChannelHandlerContext) {
        guard let exchange else { return }
        exchange.metrics.responseStart = context.eventLoop.now
        exchange.metrics.responseHeaderBytesReceived = ActiveExchange.headByteCount(head)
        let isCompressed = head.headers["Content-Encoding"].contains { $0.lowercased() != "identity" }
        // A response that has no body (to HEAD, 1xx, 204, 304) expects none, whatever its `Content-Length` says.
        let hasBody = exchange.head.method != .HEAD && head.status.code >= 200 && head.status != .noContent && head.status != .notModified
        exchange.expectedResponseLength =
            isCompressed || !hasBody ? nil : head.headers.first(name: "Content-Length").flatMap(Int64.init)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let target = NIOLoopBound(exchange, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        exchange.receivedHead(
            head,
            demand: ResponseBodyDemand(
                onDemand: { eventLoop.execute { handler.value.consumerDemand(true, for: target.value) } },
                onTermination: { eventLoop.execute { handler.value.consumerTerminated(target.value) } }))
    }

    private func forwardBody(_ buffer: ByteBuffer) {
        guard let exchange else { return }
        exchange.responseBodyBytes += Int64(buffer.readableBytes)
        exchange.request.onDownloadProgress?(exchange.responseBodyBytes, exchange.expectedResponseLength)
        switch exchange.receivedBody(buffer) {
        case .accepted:
            break
        case .stopProducing:
            stateMachine.consumerDemand(false)
        case .overLimit(let limit):
            lastError = TransportError.bodyTooLarge(limit: limit)
            if let context { perform(stateMachine.errorCaught(), context) }
        }
    }

    private func consumerDemand(_ wanted: Bool, for target: ActiveExchange) {
        guard exchange === target, let context else { return }
        stateMachine.consumerDemand(wanted)
        readIfWanted(context)
    }

    /// The consumer stopped iterating (or dropped the body) before its end: the rest of the response
    /// would have to be read and thrown away, so the connection is closed instead.
    private func consumerTerminated(_ target: ActiveExchange) {
        guard exchange === target, let context, stateMachine.exchange?.isReceivingResponse == true else { return }
        lastError = TransportError.cancelled
        perform(stateMachine.cancel(), context)
    }

    private func complete(trailers: HTTPHeaders?) {
        guard let exchange else { return }
        self.exchange = nil
        completedExchanges += 1
        streamConnection?.streamAnswered()
        exchange.metrics.responseEnd = context?.eventLoop.now ?? .now()
        exchange.metrics.requestBodyBytesSent = exchange.requestBodyBytesSent
        exchange.metrics.responseBodyBytesAfterDecoding = exchange.responseBodyBytes
        let wire = byteCounter.received - exchange.wireBytesAtStart
        let headBytes = byteCounter.countsHeads ? exchange.metrics.responseHeaderBytesReceived : 0
        exchange.metrics.responseBodyBytesReceived = max(0, wire - headBytes)
        exchange.succeed(ExchangeCompletion(trailers: trailers, metrics: exchange.metrics))
    }

    private func failExchange(_ kind: ExchangeStateMachine.FailureKind) {
        guard let exchange else { return }
        self.exchange = nil
        let error: TransportError
        switch kind {
        case .cancelled:
            error = (lastError as? TransportError) ?? .cancelled
        case .timedOut:
            error = .timedOut("waiting for the server (no data for the idle interval)")
        case .closedBeforeResponse, .errorBeforeResponse:
            let refused = (lastError as? NIOHTTP2Errors.StreamClosed).flatMap(refusal)
            let (cause, failureError) = Self.earlyFailureCause(
                kind, lastError: lastError, refusal: refused, certificateAlert: certificateAlert)
            let failure = EarlyExchangeFailure(
                cause: cause, bodyIsReplayable: exchange.bodyIsReplayable, onReusedConnection: exchange.mayRetryOnFreshConnection,
                methodIsIdempotent: exchange.head.method.isIdempotent, bodyHandedOn: exchange.requestBodyHandedOn,
                carriesOneExchange: carriesOneExchange)
            switch failure.verdict {
            case .fail: exchange.fail(failureError)
            case .retry(let reason, let onFreshConnection):
                exchange.fail(RetryableExchangeError(failureError, onFreshConnection: onFreshConnection, reason: reason))
            }
            return
        case .closedDuringResponse:
            error = Self.map(lastError) ?? .connectionLost("the server closed the connection during the response")
        case .error:
            error = Self.map(lastError) ?? .connectionLost("the connection failed")
        }
        exchange.fail(error)
    }

    /// What ended an exchange before any response byte, most telling first, and the error it gets:
    /// the server's refusal of the stream (`refusal`, given when `lastError` is the stream's close
    /// that says so), its TLS alert refusing the client's certificate, its broken HTTP/2, the
    /// carrier's close, the transport's own verdict, any other error.
    static func earlyFailureCause(
        _ kind: ExchangeStateMachine.FailureKind, lastError: (any Error)?, refusal: RetryableExchangeError.Reason?,
        certificateAlert: TransportError?
    ) -> (EarlyExchangeFailure.Cause, TransportError) {
        if let refusal { return (.refusedStream(refusal), .connectionLost("the server refused the stream", lastError)) }
        if let certificateAlert { return (.certificateRefused, certificateAlert) }
        if let violation = Self.protocolViolation(lastError) { return (.protocolViolation, violation) }
        if kind == .closedBeforeResponse {
            return (.closed, .connectionLost("the server closed the connection before responding", lastError))
        }
        if let error = lastError as? TransportError { return (.transportVerdict, error) }
        return (.carrierError, Self.map(lastError) ?? .connectionLost("the connection failed before the response"))
    }

    /// Arms the exchange's timer for whichever comes first: the idle limit after the last activity,
    /// or the total deadline. One timer runs per exchange, not per read: activity only moves
    /// `lastActivity`, and the timer, when it fires early, re-arms itself for the rest.
    private func scheduleIdleTimeout(_ exchange: ActiveExchange, _ context: ChannelHandlerContext) {
        let idleDeadline = exchange.request.timeouts.idle.map { exchange.lastActivity + $0 }
        guard let fireAt = idleDeadline.map({ min($0, exchange.deadline ?? $0) }) ?? exchange.deadline else { return }
        // A callback, unlike `scheduleTask`, allocates no promise, future or closure on NIO's event
        // loops. It fails only on a loop that is shutting down, whose channels are closing anyway.
        exchange.idleTimeoutTask = try? context.eventLoop.scheduleCallback(
            at: fireAt, handler: ExchangeTimeoutCheck(handler: self, exchange: exchange))
    }

    /// Fires the total or idle timeout, or re-arms the timer when there was activity since it was set.
    fileprivate func timeoutCheck(_ target: ActiveExchange) {
        guard exchange === target, let context else { return }
        let now = context.eventLoop.now
        if let deadline = target.deadline, now >= deadline {
            lastError = TransportError.timedOut("after the request's total time limit")
            perform(stateMachine.cancel(), context)
            return
        }
        if let idle = target.request.timeouts.idle, now - target.lastActivity >= idle {
            perform(stateMachine.idleTimeoutFired(), context)
            return
        }
        scheduleIdleTimeout(target, context)
    }

    /// Why a stream the server closed was not processed, or nil when it may have been: above a
    /// GOAWAY's last stream id (however the stream was closed), or refused with REFUSED_STREAM.
    private func refusal(_ closed: NIOHTTP2Errors.StreamClosed) -> RetryableExchangeError.Reason? {
        if closed.errorCode == .refusedStream || closed.errorCode == .cancel,
            context.flatMap({ streamConnection?.wasRefusedByGoAway($0.channel) }) == true
        {
            return .unprocessed(connectionAnswered: streamConnection?.hasAnswered ?? false)
        }
        return closed.errorCode == .refusedStream ? .refusedStream : nil
    }

    /// The error for a server that broke HTTP/2 (a bad frame, an undecodable header block), if that
    /// is what `error` says.
    static func protocolViolation(_ error: (any Error)?) -> TransportError? {
        switch error {
        case is NIOHTTP2Errors.StreamClosed: nil
        case is any NIOHTTP2Error, is any NIOHPACKError: map(error)
        default: nil
        }
    }

    /// Translates errors from NIO's layers into the codes URLSession uses.
    static func map(_ error: (any Error)?) -> TransportError? {
        switch error {
        case nil: return nil
        case let error as TransportError: return error
        case let error as HTTPParserError:
            if error == .invalidEOFState { return .connectionLost("the connection closed before the response ended", error) }
            return .badResponse("the server's response is not valid HTTP", error)
        case let error as NIOHTTPDecompression.DecompressionError:
            if case .limit = error {
                return TransportError(.dataLengthExceedsMaximum, "the decompressed body exceeds the allowed size", underlyingError: error)
            }
            return TransportError(.cannotDecodeContentData, "the compressed body could not be decoded", underlyingError: error)
        case let error as NIOHTTPDecompression.ExtraDecompressionError:
            return TransportError(.cannotDecodeContentData, "the compressed body could not be decoded", underlyingError: error)
        case let error as ContentDecodingError where error == .limitExceeded:
            return TransportError(.dataLengthExceedsMaximum, "the decompressed body exceeds the allowed size", underlyingError: error)
        case let error as ContentDecodingError:
            return TransportError(.cannotDecodeContentData, "the compressed body could not be decoded", underlyingError: error)
        case let error as NIOHTTP2Errors.StreamClosed where error.errorCode == .protocolError:
            return .badResponse("the stream broke the HTTP/2 protocol", error)
        case let error as NIOHTTP2Errors.StreamClosed:
            return .connectionLost("the server reset the stream (\(error.errorCode))", error)
        case let error as any NIOHTTP2Error:
            return .badResponse("the server broke the HTTP/2 protocol", error)
        case let error as any NIOHPACKError:
            return .badResponse("the server sent a header block that cannot be decoded", error)
        case let error?:
            return .connectionLost("the connection failed", error)
        }
    }
}

extension HTTPMethod {
    /// RFC 9110 §9.2.2.
    var isIdempotent: Bool {
        switch self {
        case .GET, .HEAD, .PUT, .DELETE, .OPTIONS, .TRACE: true
        default: false
        }
    }
}

/// The exchange's timer: runs ``ExchangeHandler``'s timeout check on the handler's event loop.
///
/// `@unchecked Sendable`: NIO runs a scheduled callback on the loop it was scheduled on, which is the
/// handler's, and the handler and exchange are only touched there. It holds its two references
/// directly (not in `NIOLoopBound`s, each three words) so that it fits inline in NIO's task record.
private struct ExchangeTimeoutCheck: NIOScheduledCallbackHandler, @unchecked Sendable {
    let handler: ExchangeHandler
    let exchange: ActiveExchange

    func handleScheduledCallback(eventLoop: some EventLoop) {
        eventLoop.assertInEventLoop()
        handler.timeoutCheck(exchange)
    }
}
