public import Foundation
public import Logging
public import NIOCore
public import NIOHTTP1

/// One HTTP exchange to perform: a head, a body source and the limits that apply to it.
public struct TransportRequest: Sendable {
    /// Where the request body comes from.
    public enum Body: Sendable {
        /// No body.
        case none
        /// Bytes already in memory.
        case bytes(ByteBuffer)
        /// A file, sent from disk as the connection accepts it: by `sendfile` on a plain HTTP/1.1
        /// connection, read in chunks over TLS or HTTP/2.
        case file(URL)
        /// A stream the closure writes into; `length` nil means unknown (sent chunked). It is read
        /// once: an exchange that fails before its response is sent again on a new connection only
        /// if the closure had not started (it may have consumed bytes it could not send).
        case stream(length: Int64?, _ produce: @Sendable (TransportBodyWriter) async throws -> Void)
        /// A stream the closure writes into from its start each time it is called, so an exchange
        /// that fails before its response may be sent again, as with a file.
        case replayableStream(length: Int64?, _ produce: @Sendable (TransportBodyWriter) async throws -> Void)
    }

    /// The HTTP method.
    public var method: HTTPMethod
    /// The absolute `http` or `https` URL.
    public var url: URL
    /// The header fields to send; `Host`, `Content-Length` and `Transfer-Encoding` are set by the transport.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// Limits for this exchange.
    public var timeouts: TransportTimeouts
    /// Called on an event loop as body bytes are written: bytes sent so far and the total, if known.
    public var onUploadProgress: (@Sendable (_ sent: Int64, _ expected: Int64?) -> Void)?
    /// Called on an event loop as response body bytes (decoded) arrive: bytes so far and the
    /// `Content-Length`, if any and if the body is not compressed.
    public var onDownloadProgress: (@Sendable (_ received: Int64, _ expected: Int64?) -> Void)?
    /// The client certificate to present if the server asks for one, in place of the transport's
    /// (``TransportTLSConfiguration/clientIdentity``). Such requests get connections of their own.
    public var clientIdentity: TransportClientIdentity?
    /// Where the transport logs this exchange, in place of its own logger (a request's, with the
    /// request's metadata).
    public var logger: Logger?

    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - url: the absolute URL.
    ///   - headers: header fields to send.
    ///   - body: the body source.
    ///   - timeouts: the limits for this exchange.
    public init(
        method: HTTPMethod = .GET, url: URL, headers: HTTPHeaders = [:], body: Body = .none, timeouts: TransportTimeouts = .init()
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
    }
}

/// The timeouts URLSession has, applied to one exchange.
public struct TransportTimeouts: Sendable, Hashable {
    /// How long opening a connection (TCP and TLS) may take.
    public var connect: TimeAmount?
    /// How long the exchange may go without sending or receiving a byte, like URLSession's
    /// `timeoutIntervalForRequest`.
    public var idle: TimeAmount?
    /// How long the whole exchange may take, waiting for a connection included, like URLSession's
    /// `timeoutIntervalForResource`.
    public var total: TimeAmount?

    /// - Parameters:
    ///   - connect: the connect limit (60 s by default).
    ///   - idle: the inactivity limit (60 s by default, URLSession's default request timeout).
    ///   - total: the overall limit (none by default).
    public init(connect: TimeAmount? = .seconds(60), idle: TimeAmount? = .seconds(60), total: TimeAmount? = nil) {
        self.connect = connect
        self.idle = idle
        self.total = total
    }

    /// When waiting for or opening a connection from `start` must end: the connect limit, within
    /// `totalDeadline` (the total limit's end); nil when neither applies.
    func connectDeadline(from start: NIODeadline, within totalDeadline: NIODeadline?) -> NIODeadline? {
        connect.map { min(start + $0, totalDeadline ?? .distantFuture) } ?? totalDeadline
    }
}

/// Writes a streamed request body; each `write` returns once the connection can take more.
public struct TransportBodyWriter: Sendable {
    let writeChunk: @Sendable (ByteBuffer) async throws -> Void
    /// Sends a slice of an open file by `sendfile`, on a connection that can (see `FileBody.send`).
    var writeRegion: (@Sendable (FileRegion) async throws -> Void)?

    /// Sends a chunk of the body, waiting while the connection's send buffer is full.
    public func write(_ chunk: ByteBuffer) async throws {
        guard chunk.readableBytes > 0 else { return }
        try await writeChunk(chunk)
    }
}
