import Crypto
import Foundation
import HTTPBinServer
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// A response as the tests see it.
struct TestResponse {
    var status: Int
    var headers: HTTPHeaders
    /// The body, unless the request asked only for its length and digest.
    var body: [UInt8]
    var bodyCount: Int
    var bodySHA256: String

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object (an empty dictionary when it is not one).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    func header(_ name: String) -> String? { headers.first(name: name) }
}

/// What a test sends as a request body.
enum TestBody {
    case none
    case bytes([UInt8])
    /// `count` bytes of `SeededBytes(seed:)`, written in 64 KiB chunks as the channel accepts them.
    case generated(count: Int, seed: UInt64)
}

/// One HTTP/1.1 connection (plain or TLS) to the test server, on which requests run one after another.
struct TestConnection {
    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    let host: String

    /// Opens a connection, runs `body` with it and closes it.
    /// - Parameters:
    ///   - url: the server's URL; `https` URLs need `tls`.
    ///   - tls: the client's TLS configuration.
    static func with<T>(
        _ url: URL, tls: TLSConfiguration? = nil, _ body: (inout TestConnection) async throws -> T
    ) async throws -> T {
        let host = url.host ?? "127.0.0.1"
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let handshake = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let sslContext {
                            let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: host.first!.isNumber ? nil : host)
                            try channel.pipeline.syncOperations.addHandler(handler)
                            try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: handshake))
                        } else {
                            handshake.succeed()
                        }
                        // A connection on which nothing moves either way for 30 s fails the read waiting on
                        // it instead of hanging the suite (a long upload, which reads nothing, is moving).
                        try channel.pipeline.syncOperations.addHandlers(IdleStateHandler(allTimeout: .seconds(30)), ReadStallFailure())
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            handshake.fail(error)
            throw error
        }
        // Writing before the handshake ends would race its failure with the write's.
        do {
            try await handshake.futureResult.get()
        } catch {
            // The channel's writer must be finished before it goes (NIO asserts it in debug builds).
            try? await channel.executeThenClose { _, _ in }
            throw error
        }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = TestConnection(inbound: inbound.makeAsyncIterator(), outbound: outbound, host: "\(host):\(port)")
            return try await body(&connection)
        }
    }

    /// Sends one request and reads its whole response.
    /// - Parameters:
    ///   - keepBody: false to keep only the body's length and digest (for huge bodies).
    ///   - onBodyPart: told the size of each body part as it arrives.
    mutating func send(
        _ method: HTTPMethod = .GET, _ path: String, headers: [(String, String)] = [], body: TestBody = .none,
        keepBody: Bool = true, onBodyPart: (Int) -> Void = { _ in }
    ) async throws -> TestResponse {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: host)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        switch body {
        case .none: break
        case .bytes(let bytes): head.headers.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
        case .generated(let count, _): head.headers.replaceOrAdd(name: "Content-Length", value: String(count))
        }
        try await outbound.write(.head(head))
        switch body {
        case .none: break
        case .bytes(let bytes): try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: bytes))))
        case .generated(let count, let seed):
            var generator = SeededBytes(seed: seed)
            var remaining = count
            while remaining > 0 {
                var chunk = ByteBuffer()
                generator.write(min(remaining, 64 * 1024), into: &chunk)
                remaining -= chunk.readableBytes
                try await outbound.write(.body(.byteBuffer(chunk)))
            }
        }
        try await outbound.write(.end(nil))
        return try await readResponse(keepBody: keepBody, isHead: method == .HEAD, onBodyPart: onBodyPart)
    }

    /// Waits until the server closes the connection; throws if it sends anything instead.
    mutating func waitForServerClose() async throws {
        if let part = try await inbound.next() { throw TestClientError.unexpectedPart("\(part)") }
    }

    private mutating func readResponse(keepBody: Bool, isHead: Bool, onBodyPart: (Int) -> Void) async throws -> TestResponse {
        var response: TestResponse?
        var hasher = SHA256()
        while let part = try await inbound.next() {
            switch part {
            case .head(let head):
                // 1xx responses other than 101 come before the real one.
                if head.status.code < 200 && head.status != .switchingProtocols { continue }
                response = TestResponse(status: Int(head.status.code), headers: head.headers, body: [], bodyCount: 0, bodySHA256: "")
            case .body(let buffer):
                onBodyPart(buffer.readableBytes)
                response?.bodyCount += buffer.readableBytes
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                if keepBody { response?.body += buffer.readableBytesView }
            case .end:
                guard var finished = response else { throw TestClientError.noResponseHead }
                finished.bodySHA256 = hasher.finalize().map { String(format: "%02x", $0) }.joined()
                return finished
            }
        }
        throw TestClientError.connectionClosed
    }
}

/// Completes a promise when the TLS handshake succeeds, fails it when the channel errs or closes first.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { promise.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(TestClientError.connectionClosed)
        context.fireChannelInactive()
    }
}

/// Fails the connection's reads with ``TestClientError/readStalled`` when nothing was read or
/// written for the idle handler's timeout.
final class ReadStallFailure: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case IdleStateHandler.IdleStateEvent.all = event else { return context.fireUserInboundEventTriggered(event) }
        context.fireErrorCaught(TestClientError.readStalled)
        context.close(promise: nil)
    }
}

enum TestClientError: Error {
    /// Nothing was read or written for 30 s.
    case readStalled
    case noResponseHead
    case connectionClosed
    case unexpectedPart(String)
}

/// Convenience for one request on a connection of its own.
func fetch(
    _ url: URL, _ method: HTTPMethod = .GET, headers: [(String, String)] = [], body: TestBody = .none,
    tls: TLSConfiguration? = nil
) async throws -> TestResponse {
    var path = url.path.isEmpty ? "/" : url.path
    if let query = url.query { path += "?" + query }
    return try await TestConnection.with(url, tls: tls) { connection in
        try await connection.send(method, path, headers: headers, body: body)
    }
}
