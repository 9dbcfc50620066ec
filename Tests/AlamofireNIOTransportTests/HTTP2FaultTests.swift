import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Testing

/// A small HTTP/2 server on NIOHTTP2 that misbehaves on purpose: each connection answers its
/// streams as `behaviour` says, frame by frame.
final class MisbehavingHTTP2Server: Sendable {
    enum Behaviour: Sendable {
        /// RST_STREAM REFUSED_STREAM on the connection's first stream, answers after.
        case refuseFirstStream
        /// GOAWAY (last stream id 0) on the first connection's first request, answers after.
        case goAwayOnFirstConnection
        /// Garbage where the next frame should be, on every request.
        case malformedFrame
        /// RST_STREAM INTERNAL_ERROR on every stream.
        case resetStream
        /// GOAWAY PROTOCOL_ERROR on every request.
        case goAwayWithError
        /// Each connection answers its first `streams` streams: at the last of them it sends GOAWAY
        /// (NO_ERROR, last stream id that stream), answers it and closes, as nginx's
        /// `keepalive_requests` and Envoy's `max_requests_per_connection` rotate connections.
        case rotateEvery(streams: Int)
        /// GOAWAY (last stream id 0) on every connection's first request: a server answering nothing.
        case goAwayAlways
        /// RST_STREAM REFUSED_STREAM on every stream: a server answering nothing.
        case refuseEveryStream
        /// Answers each connection's first stream, then RST_STREAM REFUSED_STREAM on every other: a
        /// server that answered once and sheds load for ever after.
        case answerFirstThenRefuseEveryStream
    }

    let port: Int
    let certificates: TestCertificates
    private let channel: any Channel
    private let state: NIOLockedValueBox<(connections: Int, streams: Int)>

    var connections: Int { state.withLockedValue { $0.connections } }
    var streams: Int { state.withLockedValue { $0.streams } }

    init(_ behaviour: Behaviour) async throws {
        let certificates = try TestCertificates.generate()
        let leaf = certificates.leaf(for: .valid)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: leaf.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let state = NIOLockedValueBox((connections: 0, streams: 0))
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connection = state.withLockedValue { state in
                        state.connections += 1
                        return state.connections
                    }
                    let raw = RawWriter()
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(raw)
                    try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server))
                    try channel.pipeline.syncOperations.addHandler(
                        Responder(behaviour: behaviour, connection: connection, raw: raw, state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.port = channel.localAddress!.port!
        self.certificates = certificates
        self.state = state
    }

    func url(_ path: String) -> URL { URL(string: "https://localhost:\(port)\(path)")! }

    func close() async throws { try await channel.close() }

    /// Lets the responder write bytes below NIOHTTP2.
    final class RawWriter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = ByteBuffer
    }

    final class Responder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame
        let behaviour: Behaviour
        let connection: Int
        let raw: RawWriter
        let state: NIOLockedValueBox<(connections: Int, streams: Int)>
        var streamsHere = 0

        init(behaviour: Behaviour, connection: Int, raw: RawWriter, state: NIOLockedValueBox<(connections: Int, streams: Int)>) {
            self.behaviour = behaviour
            self.connection = connection
            self.raw = raw
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard case .headers(let headers) = frame.payload, headers.endStream else { return }
            streamsHere += 1
            state.withLockedValue { $0.streams += 1 }
            let stream = frame.streamID
            switch behaviour {
            case .refuseFirstStream where streamsHere == 1:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.refusedStream))), promise: nil)
            case .goAwayOnFirstConnection where connection == 1:
                context.writeAndFlush(
                    wrapOutboundOut(
                        HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 0, errorCode: .noError, opaqueData: nil))),
                    promise: nil)
            case .malformedFrame:
                // A DATA frame header on stream 0, which RFC 9113 §6.1 makes a connection error.
                let garbage = ByteBuffer(bytes: [0, 0, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
                let rawContext = try? context.pipeline.syncOperations.context(handler: raw)
                rawContext?.writeAndFlush(NIOAny(garbage), promise: nil)
            case .rotateEvery(let streams) where streamsHere == streams:
                let goAway = HTTP2Frame.FramePayload.goAway(lastStreamID: stream, errorCode: .noError, opaqueData: nil)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: goAway)), promise: nil)
                let channel = context.channel
                answer(stream, context).whenComplete { _ in channel.close(promise: nil) }
            case .rotateEvery(let streams) where streamsHere > streams:
                break
            case .goAwayAlways:
                let goAway = HTTP2Frame.FramePayload.goAway(lastStreamID: 0, errorCode: .noError, opaqueData: nil)
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: goAway)), promise: nil)
            case .refuseEveryStream:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.refusedStream))), promise: nil)
            case .answerFirstThenRefuseEveryStream where streamsHere > 1:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.refusedStream))), promise: nil)
            case .resetStream:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.internalError))), promise: nil)
            case .goAwayWithError:
                context.writeAndFlush(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: .rootStream, payload: .goAway(lastStreamID: stream, errorCode: .protocolError, opaqueData: nil))),
                    promise: nil)
                context.close(promise: nil)
            default:
                answer(stream, context)
            }
        }

        /// Answers `stream` with a 200 and `ok`; the future completes once it is written.
        @discardableResult
        private func answer(_ stream: HTTP2StreamID, _ context: ChannelHandlerContext) -> EventLoopFuture<Void> {
            let head = HPACKHeaders([(":status", "200"), ("content-length", "2")])
            context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: head)))), promise: nil)
            let body = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: "ok")), endStream: true))
            return context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: body)))
        }
    }
}

@Suite struct HTTP2FaultTests {
    static func withServer(
        _ behaviour: MisbehavingHTTP2Server.Behaviour, _ body: (MisbehavingHTTP2Server, HTTPTransport) async throws -> Void
    )
        async throws
    {
        let server = try await MisbehavingHTTP2Server(behaviour)
        let transport = makeTransport { configuration in
            configuration.tls.trustsSystemRoots = false
            configuration.tls.additionalTrustRoots = [server.certificates.certificateAuthority.certificateDER]
        }
        do {
            try await body(server, transport)
        } catch {
            transport.shutdown()
            try await server.close()
            throw error
        }
        transport.shutdown()
        try await server.close()
    }

    @Test func aRefusedStreamIsRetriedOnceOnANewStream() async throws {
        try await Self.withServer(.refuseFirstStream) { server, transport in
            let fetched = try await transport.fetch(server.url("/"), .POST)
            #expect(fetched.status == 200)
            #expect(fetched.text == "ok")
            #expect(server.streams == 2)
            #expect(server.connections == 1)
        }
    }

    /// A connection that answered once and then refuses every stream is not asked in a loop: the
    /// refused request goes again three times on it, then fails with -1005.
    @Test func aConnectionThatAnsweredAndThenRefusesEveryStreamIsAskedFourTimes() async throws {
        try await Self.withServer(.answerFirstThenRefuseEveryStream) { server, transport in
            let first = try await transport.fetch(server.url("/"))
            #expect(first.status == 200)
            let error = await transportError {
                try await transport.fetch(server.url("/"), timeouts: TransportTimeouts(total: .seconds(30)))
            }
            #expect(error?.code == .networkConnectionLost)
            #expect(server.streams == 5)
            #expect(server.connections == 1)
        }
    }

    @Test func streamsAGoAwayLeftUnprocessedGoAgainOnANewConnection() async throws {
        try await Self.withServer(.goAwayOnFirstConnection) { server, transport in
            let fetched = try await transport.fetch(server.url("/"))
            #expect(fetched.status == 200)
            #expect(server.connections == 2)
        }
    }

    @Test(arguments: [
        (MisbehavingHTTP2Server.Behaviour.malformedFrame, URLError.Code.badServerResponse),
        (.resetStream, .networkConnectionLost),
        (.goAwayWithError, .networkConnectionLost),
    ])
    func aMisbehavingServerFailsTheRequestWithURLSessionsCode(behaviour: MisbehavingHTTP2Server.Behaviour, code: URLError.Code) async throws
    {
        try await Self.withServer(behaviour) { server, transport in
            let error = await transportError { try await transport.fetch(server.url("/"), timeouts: TransportTimeouts(idle: .seconds(10))) }
            #expect(error?.code == code)
        }
    }

    /// A server that rotates connections every 10 streams, under 200 concurrent requests: the
    /// streams above each GOAWAY's last stream id were not processed (RFC 9113 §6.8) and go again
    /// on new connections for as long as connections answer, so every request succeeds.
    @Test func aServerRotatingConnectionsFailsNoRequest() async throws {
        try await Self.withServer(.rotateEvery(streams: 10)) { server, transport in
            let results = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<200 {
                    group.addTask { try? await transport.fetch(server.url("/"), timeouts: TransportTimeouts(total: .seconds(60))).status }
                }
                return await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(results.count == 200)
            #expect(results.filter { $0 != 200 }.isEmpty, "\(results.filter { $0 != 200 }.count) of 200 failed")
            // Ten answered per connection: at least 20 connections, and every answer its own stream.
            #expect(server.connections >= 20)
        }
    }

    /// A server that answers nothing (a GOAWAY before any stream, or every stream refused) is not
    /// asked for ever: after a few refusals with no answer the request fails with -1005.
    @Test(arguments: [MisbehavingHTTP2Server.Behaviour.goAwayAlways, .refuseEveryStream])
    func aServerAnsweringNothingFailsTheRequestAfterAFewTries(behaviour: MisbehavingHTTP2Server.Behaviour) async throws {
        try await Self.withServer(behaviour) { server, transport in
            let error = await transportError {
                try await transport.fetch(server.url("/"), timeouts: TransportTimeouts(total: .seconds(30)))
            }
            #expect(error?.code == .networkConnectionLost)
            #expect(server.streams == 4)
        }
    }
}
