import NIOCore
import NIOPosix
import Synchronization

/// A raw TCP listener that misbehaves on purpose, for the fault tests Hummingbird cannot produce.
/// It reads a request head (bodies are not expected) and acts on its path:
///
/// - `/truncated-body`: promises 100 bytes, sends 10, closes.
/// - `/truncated-chunked`: starts a chunked body, closes mid-way.
/// - `/malformed`: answers with bytes that are not HTTP.
/// - `/close` and `/close/…`: closes without answering.
/// - `/close-on-reuse`: answers `ok` with keep-alive; a second request on the connection is closed unanswered.
/// - `/extra-bytes`: says `Content-Length: 2`, sends 5 bytes.
/// - `/lying-length`: announces a 4 GB body, sends 10 bytes, closes (a `HEAD` gets the head alone).
/// - `/hang`: reads and never answers (also what a TLS client meets: a handshake that never ends).
/// - `/fail-once/TOKEN`: closes unanswered the first time a token is asked for, answers `ok` after (a
///   retry's test; tokens are remembered for the process's life, so each test uses a new one).
/// - `/close-mid-body/TOKEN`: the first time, closes as soon as a byte of the request's body arrives
///   (the rest unread, so the client meets a reset; a request without a body is never answered);
///   after that answers `ok` and closes.
/// - anything else: `ok`, with keep-alive.
enum FaultServer {
    /// The `/fail-once/` paths already failed.
    static let failedTokens = Mutex<Set<String>>([])

    static func start(host: String, group: any EventLoopGroup) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FaultHandler()) }
            }
            .bind(host: host, port: 0).get()
    }
}

private final class FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var received: [UInt8] = []
    private var requestsOnConnection = 0
    /// Set when the connection is to close once a request body's first byte arrives.
    private var closesOnBody = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytesView
        while !closesOnBody, let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
            let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
            received.removeSubrange(..<end.upperBound)
            requestsOnConnection += 1
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            respond(to: path, head: head, context: context)
        }
        if closesOnBody && !received.isEmpty { context.close(promise: nil) }
    }

    private func respond(to path: String, head: String, context: ChannelHandlerContext) {
        switch path {
        case "/truncated-body":
            send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", context, thenClose: true)
        case "/truncated-chunked":
            send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", context, thenClose: true)
        case "/malformed":
            send("THIS IS NOT HTTP\r\n\r\n", context, thenClose: true)
        case "/close":
            context.close(promise: nil)
        case _ where path.hasPrefix("/close/"):
            context.close(promise: nil)
        case "/close-on-reuse" where requestsOnConnection > 1:
            context.close(promise: nil)
        case "/lying-length":
            let isHead = head.hasPrefix("HEAD ")
            send("HTTP/1.1 200 OK\r\nContent-Length: 4000000000\r\n\r\n" + (isHead ? "" : "0123456789"), context, thenClose: !isHead)
        case "/extra-bytes":
            send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokxyz", context, thenClose: false)
        case "/hang":
            break
        case let path where path.hasPrefix("/fail-once/"):
            if FaultServer.failedTokens.withLock({ $0.insert(path).inserted }) {
                context.close(promise: nil)
            } else {
                send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", context, thenClose: false)
            }
        case let path where path.hasPrefix("/close-mid-body/"):
            if FaultServer.failedTokens.withLock({ $0.insert(path).inserted }) {
                closesOnBody = true
            } else {
                send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", context, thenClose: true)
            }
        default:
            send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", context, thenClose: false)
        }
    }

    private func send(_ text: String, _ context: ChannelHandlerContext, thenClose: Bool) {
        let channel = context.channel
        let write = context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)))
        if thenClose { write.whenComplete { _ in channel.close(promise: nil) } }
    }
}
