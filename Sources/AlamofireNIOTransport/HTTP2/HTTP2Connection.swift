import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression

/// Told of what happens to an HTTP/2 connection as a whole, on its event loop.
protocol HTTP2ConnectionDelegate: AnyObject, Sendable {
    /// The server changed how many streams it allows at once.
    func http2Connection(_ connectionID: Int, maximumStreamsChanged maximum: Int)
    /// The server sent GOAWAY: the connection takes no new stream.
    func http2ConnectionGoingAway(_ connectionID: Int)
}

/// One HTTP/2 connection: each exchange runs on a stream of its own, with its own
/// ``ExchangeHandler`` behind NIOHTTP2's HTTP/1 translation, so that timeouts, back-pressure,
/// decompression and metrics work per stream as they do per HTTP/1.1 connection.
///
/// The pipeline is TLS, `NIOHTTP2Handler` with its inline stream multiplexer, and
/// ``HTTP2ConnectionMonitor``, which sees the connection-level frames (SETTINGS, GOAWAY, PING) and
/// feeds ``HTTP2ConnectionStateMachine``. Cancelling an exchange closes its stream (RST_STREAM
/// CANCEL) and leaves the other streams alone. Everything but the `Sendable` façade runs on the
/// channel's event loop (hence `@unchecked`).
final class HTTP2Connection: TransportConnection, ExchangeHandlerDelegate, HTTP2StreamConnection, NIOHTTP2StreamDelegate,
    @unchecked Sendable
{
    let id: Int
    let channel: any Channel
    private let connectionMetrics: ExchangeMetrics
    private let decompressionRatio: Int?
    private let pingInterval: TimeAmount
    private weak var pool: (any ExchangeHandlerDelegate & HTTP2ConnectionDelegate)?
    private var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
    private var machine = HTTP2ConnectionStateMachine()
    private var streamsStarted = 0
    /// Streams that ended with their whole response.
    private var streamsAnswered = 0
    /// Why the connection failed, for the streams it takes down: a protocol error, or GOAWAY with
    /// an error code.
    private(set) var connectionError: (any Error)?
    private var pingTimer: RepeatedTask?
    private let ready: EventLoopPromise<Int>

    /// HTTP/2's defaults with server push refused (RFC 9113 §6.5.2) and a header list limit.
    static let initialSettings: HTTP2Settings = [
        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
        HTTP2Setting(parameter: .maxHeaderListSize, value: 256 * 1024),
        HTTP2Setting(parameter: .enablePush, value: 0),
        HTTP2Setting(parameter: .initialWindowSize, value: streamWindowSize),
    ]
    /// Each stream's receive window: what one stream may buffer while its consumer is slow.
    static let streamWindowSize = 1 << 20

    private init(
        id: Int, channel: any Channel, connectionMetrics: ExchangeMetrics, decompressionRatio: Int?,
        pingInterval: TimeAmount
    ) {
        self.id = id
        self.channel = channel
        self.connectionMetrics = connectionMetrics
        self.decompressionRatio = decompressionRatio
        self.pingInterval = pingInterval
        self.ready = channel.eventLoop.makePromise()
    }

    /// Sets HTTP/2 up on a connected (and TLS-negotiated) channel; the future succeeds with the
    /// server's stream limit once its first SETTINGS frame has arrived. Must run on the event loop.
    static func start(
        id: Int, channel: any Channel, connectionMetrics: ExchangeMetrics, decompressionRatio: Int?,
        pingInterval: TimeAmount, pool: any ExchangeHandlerDelegate & HTTP2ConnectionDelegate
    ) throws -> (HTTP2Connection, EventLoopFuture<Int>) {
        let connection = HTTP2Connection(
            id: id, channel: channel, connectionMetrics: connectionMetrics, decompressionRatio: decompressionRatio,
            pingInterval: pingInterval)
        connection.pool = pool
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = initialSettings
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = streamWindowSize
        let http2 = NIOHTTP2Handler(
            mode: .client, eventLoop: channel.eventLoop, connectionConfiguration: connectionConfiguration,
            streamConfiguration: streamConfiguration, streamDelegate: connection,
            inboundStreamInitializer: { $0.eventLoop.makeFailedFuture(TransportError.badResponse("the server pushed a stream")) })
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(http2)
        try pipeline.addHandler(HTTP2ConnectionMonitor(connection: connection))
        connection.multiplexer = try http2.syncMultiplexer()
        channel.closeFuture.whenComplete { _ in connection.closed() }
        return (connection, connection.ready.futureResult)
    }

    // MARK: TransportConnection

    func start(_ exchange: ActiveExchange) {
        channel.eventLoop.execute { self.openStream(for: exchange) }
    }

    func close() {
        channel.close(promise: nil)
    }

    func release() {
        channel.eventLoop.execute { self.exchangeFinished(connectionID: self.id, reusable: true) }
    }

    private func openStream(for exchange: ActiveExchange) {
        guard machine.isActive, let multiplexer else {
            failUnstarted(exchange, TransportError.connectionLost("the HTTP/2 connection closed before the stream opened", connectionError))
            return
        }
        let previous = streamsStarted
        streamsStarted += 1
        let connection = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let target = NIOLoopBound(exchange, eventLoop: channel.eventLoop)
        let opened = channel.eventLoop.makePromise(of: (any Channel).self)
        multiplexer.createStreamChannel(promise: opened) { stream in
            stream.eventLoop.makeCompletedFuture {
                try connection.value.configure(stream, for: target.value, previousExchanges: previous)
            }
        }
        opened.futureResult.whenFailure { error in
            // Nothing ran on the stream: the exchange has not started.
            guard target.value.handler == nil else { return }
            connection.value.failUnstarted(target.value, .connectionLost("the HTTP/2 stream could not be opened", error))
        }
    }

    /// Fails an exchange whose stream never opened and gives its place back. The server did not see
    /// it, so it goes again on a new stream, unless the connection died of a TLS alert refusing the
    /// client's certificate, which a new connection would meet too.
    private func failUnstarted(_ exchange: ActiveExchange, _ error: TransportError) {
        if let refused = ClientCertificateAlert.transportError(for: connectionError) {
            exchange.fail(refused)
        } else {
            exchange.fail(RetryableExchangeError(error, onFreshConnection: false, reason: .unprocessed(connectionAnswered: hasAnswered)))
        }
        pool?.exchangeFinished(connectionID: id, reusable: machine.isActive)
    }

    private func configure(_ stream: any Channel, for exchange: ActiveExchange, previousExchanges: Int) throws {
        let counter = StreamByteCountingHandler()
        let handler = ExchangeHandler(
            connectionID: id, byteCounter: counter, connectionMetrics: connectionMetrics, carriesOneExchange: true,
            previousExchanges: previousExchanges)
        handler.delegate = self
        handler.streamConnection = self
        let pipeline = stream.pipeline.syncOperations
        try pipeline.addHandler(counter)
        try pipeline.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
        if let decompressionRatio { try pipeline.addResponseDecoders(ratio: decompressionRatio) }
        try pipeline.addHandler(handler)
        handler.startExchange(exchange)
    }

    func streamAnswered() {
        streamsAnswered += 1
    }

    /// Whether a stream ended with its response, or the server's GOAWAY promised to process one: the
    /// progress that lets refused streams go again (``ExchangeRetryBudget``).
    var hasAnswered: Bool {
        streamsAnswered > 0 || machine.lastStreamID.map { $0 != .rootStream } == true
    }

    /// Whether the stream was one the server's GOAWAY said it would not process.
    func wasRefusedByGoAway(_ stream: any Channel) -> Bool {
        guard let lastStreamID = machine.lastStreamID,
            let streamID = try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        else { return false }
        return streamID > lastStreamID
    }

    // MARK: ExchangeHandlerDelegate (for the streams)

    func exchangeFinished(connectionID: Int, reusable: Bool) {
        // A stream's end says nothing about the connection, which stays usable while it is active
        // (the monitor reports GOAWAY and closes on its own).
        pool?.exchangeFinished(connectionID: id, reusable: machine.isActive)
    }

    func idleConnectionClosed(connectionID: Int) {}

    // MARK: NIOHTTP2StreamDelegate

    func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
        machine.streamOpened()
    }

    func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
        perform(machine.streamClosed())
    }

    // MARK: Events from the monitor

    func settingsReceived(_ settings: HTTP2Settings) {
        perform(machine.settingsReceived(settings))
    }

    func goAwayReceived(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode) {
        if errorCode != .noError, connectionError == nil {
            connectionError = TransportError.connectionLost("the server ended the HTTP/2 connection (\(errorCode))")
        }
        perform(machine.goAwayReceived(lastStreamID: lastStreamID))
    }

    func pingAcknowledged() {
        machine.pingAcknowledged()
    }

    func errorCaught(_ error: any Error) {
        if connectionError == nil { connectionError = error }
    }

    private func closed() {
        machine.channelInactive()
        pingTimer?.cancel()
        pingTimer = nil
        ready.fail(connectionError ?? TransportError.connectionLost("the server closed the HTTP/2 connection before its settings"))
    }

    private func perform(_ action: HTTP2ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .ready(let maximumStreams):
            if pingInterval > .zero {
                let connection = NIOLoopBound(self, eventLoop: channel.eventLoop)
                pingTimer = channel.eventLoop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { _ in
                    connection.value.perform(connection.value.machine.pingTimerFired())
                }
            }
            ready.succeed(maximumStreams)
        case .maximumStreamsChanged(let maximum):
            pool?.http2Connection(id, maximumStreamsChanged: maximum)
        case .goingAway(let close):
            pool?.http2ConnectionGoingAway(id)
            if close { channel.close(promise: nil) }
        case .failStart:
            ready.fail(TransportError.connectionLost("the server sent GOAWAY before its settings"))
            channel.close(promise: nil)
        case .sendPing:
            let frame = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: UInt64(streamsStarted)), ack: false))
            channel.writeAndFlush(frame, promise: nil)
        case .close:
            channel.close(promise: nil)
        }
    }
}

/// Watches the frames of the connection itself (stream 0), below the multiplexer's streams, for
/// the ``HTTP2Connection``.
final class HTTP2ConnectionMonitor: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    private let connection: HTTP2Connection

    init(connection: HTTP2Connection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)): connection.settingsReceived(settings)
        case .goAway(let lastStreamID, let errorCode, _): connection.goAwayReceived(lastStreamID: lastStreamID, errorCode: errorCode)
        case .ping(_, ack: true): connection.pingAcknowledged()
        default: break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 reports a stream's protocol error here too, after resetting that stream alone;
        // any other error (a bad frame, a header block it cannot decode, TLS, the socket) ends the
        // connection, for which NIOHTTP2 has sent GOAWAY.
        guard !Self.isStreamScoped(error) else { return }
        connection.errorCaught(error)
        context.close(promise: nil)
    }

    /// Whether NIOHTTP2 treats the error as one stream's (RFC 9113 §5.4.2), not the connection's.
    static func isStreamScoped(_ error: any Error) -> Bool {
        switch error {
        case is NIOHTTP2Errors.StreamClosed, is NIOHTTP2Errors.BadStreamStateTransition,
            is NIOHTTP2Errors.CreatedStreamAfterGoaway, is NIOHTTP2Errors.TrailersWithoutEndStream,
            is NIOHTTP2Errors.InvalidWindowIncrementSize, is NIOHTTP2Errors.MissingPseudoHeader,
            is NIOHTTP2Errors.DuplicatePseudoHeader, is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader,
            is NIOHTTP2Errors.UnknownPseudoHeader, is NIOHTTP2Errors.UnsupportedPseudoHeader, is NIOHTTP2Errors.InvalidPseudoHeaders,
            is NIOHTTP2Errors.InvalidStatusValue, is NIOHTTP2Errors.ForbiddenHeaderField, is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName,
            is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue, is NIOHTTP2Errors.InvalidPseudoHeaderValue,
            is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue:
            true
        default:
            false
        }
    }
}
