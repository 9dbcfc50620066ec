public import NIOCore
public import NIOSSL

/// What happened during one exchange, with the fields of `URLSessionTaskTransactionMetrics`.
///
/// Times are `NIODeadline`s (monotonic). Fields about opening the connection are nil when the
/// exchange reused one.
public struct ExchangeMetrics: Sendable, Hashable {
    public var fetchStart: NIODeadline
    public var domainLookupStart: NIODeadline?
    public var domainLookupEnd: NIODeadline?
    public var connectStart: NIODeadline?
    public var connectEnd: NIODeadline?
    public var secureConnectionStart: NIODeadline?
    public var secureConnectionEnd: NIODeadline?
    public var requestStart: NIODeadline?
    public var requestEnd: NIODeadline?
    public var responseStart: NIODeadline?
    public var responseEnd: NIODeadline?

    /// Whether the exchange ran on a connection that had served an earlier one.
    public var isReusedConnection = false
    /// Whether the connection goes through a proxy (then the remote address is the proxy's).
    public var isProxyConnection = false
    /// The protocol spoken: `h2` or `http/1.1`.
    public var networkProtocolName: String?
    /// The TLS version negotiated, for `https`.
    public var negotiatedTLSVersion: TLSVersion?
    public var localAddress: String?
    public var localPort: Int?
    public var remoteAddress: String?
    public var remotePort: Int?

    /// Bytes of the request head as sent.
    public var requestHeaderBytesSent: Int64 = 0
    /// Bytes of the request body as sent (before chunked framing).
    public var requestBodyBytesSent: Int64 = 0
    /// Bytes of the response head as received.
    public var responseHeaderBytesReceived: Int64 = 0
    /// Bytes of the response body as received on the wire (compressed, with any chunked framing).
    public var responseBodyBytesReceived: Int64 = 0
    /// Bytes of the response body after decoding (decompressed).
    public var responseBodyBytesAfterDecoding: Int64 = 0

    init(fetchStart: NIODeadline) {
        self.fetchStart = fetchStart
    }
}
