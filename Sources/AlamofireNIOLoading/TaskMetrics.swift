import AlamofireNIOTransport
public import Foundation
import NIOCore
import NIOSSL

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What happened while a request ran: the fields of `URLSessionTaskMetrics`, as a value.
///
/// URLSession on Linux never gathers metrics and its metrics classes cannot be created, so
/// AlamofireNIO reports its own.
public struct TaskMetrics: Sendable, Hashable {
    /// One entry per exchange (an attempt, or a redirect), in order.
    public var transactionMetrics: [TransactionMetrics]
    /// From the task's creation to its end.
    public var taskInterval: DateInterval
    /// Redirects followed.
    public var redirectCount: Int

    #if canImport(FoundationNetworking)
    /// How a transaction's resource was obtained: FoundationNetworking's
    /// `URLSessionTaskMetrics.ResourceFetchType`, so that it is spelled as in Alamofire.
    public typealias ResourceFetchType = FoundationNetworking.URLSessionTaskMetrics.ResourceFetchType
    #endif
}

/// One HTTP exchange: the fields of `URLSessionTaskTransactionMetrics`.
public struct TransactionMetrics: Sendable, Hashable {
    /// The request sent in this exchange.
    public var request: URLRequest
    /// The response, if one arrived: an `HTTPURLResponse` for HTTP, a plain `URLResponse` for
    /// `file:` and `data:` URLs.
    public var response: URLResponse? {
        get { receivedResponse?.urlResponse }
        set { receivedResponse = newValue.map(ReceivedResponse.init) }
    }
    /// The response as it arrived, made into Foundation's type when ``response`` is first read.
    var receivedResponse: ReceivedResponse?
    /// How the resource was obtained: `.networkLoad` for an exchange, `.localCache` for a cached
    /// response, `.unknown` for `file:` and `data:` URLs.
    public var resourceFetchType: URLSessionTaskMetrics.ResourceFetchType
    /// When the exchange began: the moment the resource started to be fetched.
    public var fetchStartDate: Date?
    /// When the DNS lookup began; `nil` when the exchange reused a connection or did no lookup.
    public var domainLookupStartDate: Date?
    /// When the DNS lookup ended; `nil` when the exchange reused a connection or did no lookup.
    public var domainLookupEndDate: Date?
    /// When the connection to the server began to open; `nil` when the exchange reused one.
    public var connectStartDate: Date?
    /// When the TLS handshake began; `nil` without TLS or when the exchange reused a connection.
    public var secureConnectionStartDate: Date?
    /// When the TLS handshake ended; `nil` without TLS or when the exchange reused a connection.
    public var secureConnectionEndDate: Date?
    /// When the connection was established; `nil` when the exchange reused one.
    public var connectEndDate: Date?
    /// When sending the request began.
    public var requestStartDate: Date?
    /// When the request had been sent in full.
    public var requestEndDate: Date?
    /// When the first byte of the response arrived.
    public var responseStartDate: Date?
    /// When the last byte of the response arrived.
    public var responseEndDate: Date?
    /// `h2` or `http/1.1`, as ALPN chose.
    public var networkProtocolName: String?
    /// Whether an earlier exchange's connection was reused.
    public var isReusedConnection: Bool
    /// Whether the connection went through a proxy; ``remoteAddress`` is then the proxy's.
    public var isProxyConnection: Bool
    /// The negotiated TLS version's name, e.g. `TLSv1.3`.
    public var negotiatedTLSProtocolVersion: String?
    /// The bytes of the request head, as sent.
    public var countOfRequestHeaderBytesSent: Int64
    /// The bytes of the request body, as sent (before any chunked framing).
    public var countOfRequestBodyBytesSent: Int64
    /// The bytes of the response head, as received.
    public var countOfResponseHeaderBytesReceived: Int64
    /// The bytes of the response body as received on the wire: compressed, with any chunked framing.
    public var countOfResponseBodyBytesReceived: Int64
    /// The bytes of the response body after decoding (decompression).
    public var countOfResponseBodyBytesAfterDecoding: Int64
    /// The local IP address of the connection.
    public var localAddress: String?
    /// The local port of the connection.
    public var localPort: Int?
    /// The remote IP address of the connection: the server's, or the proxy's when `isProxyConnection` is `true`.
    public var remoteAddress: String?
    /// The remote port of the connection: the server's, or the proxy's when `isProxyConnection` is `true`.
    public var remotePort: Int?

    /// The transport's metrics, with its monotonic times turned into dates.
    init(_ metrics: ExchangeMetrics, request: URLRequest, response: ReceivedResponse?, clock: WallClockAnchor) {
        self.request = request
        receivedResponse = response
        resourceFetchType = .networkLoad
        fetchStartDate = clock.date(metrics.fetchStart)
        domainLookupStartDate = metrics.domainLookupStart.map(clock.date)
        domainLookupEndDate = metrics.domainLookupEnd.map(clock.date)
        connectStartDate = metrics.connectStart.map(clock.date)
        secureConnectionStartDate = metrics.secureConnectionStart.map(clock.date)
        secureConnectionEndDate = metrics.secureConnectionEnd.map(clock.date)
        connectEndDate = metrics.connectEnd.map(clock.date)
        requestStartDate = metrics.requestStart.map(clock.date)
        requestEndDate = metrics.requestEnd.map(clock.date)
        responseStartDate = metrics.responseStart.map(clock.date)
        responseEndDate = metrics.responseEnd.map(clock.date)
        networkProtocolName = metrics.networkProtocolName
        isReusedConnection = metrics.isReusedConnection
        isProxyConnection = metrics.isProxyConnection
        negotiatedTLSProtocolVersion = metrics.negotiatedTLSVersion.map(Self.name)
        countOfRequestHeaderBytesSent = metrics.requestHeaderBytesSent
        countOfRequestBodyBytesSent = metrics.requestBodyBytesSent
        countOfResponseHeaderBytesReceived = metrics.responseHeaderBytesReceived
        countOfResponseBodyBytesReceived = metrics.responseBodyBytesReceived
        countOfResponseBodyBytesAfterDecoding = metrics.responseBodyBytesAfterDecoding
        localAddress = metrics.localAddress
        localPort = metrics.localPort
        remoteAddress = metrics.remoteAddress
        remotePort = metrics.remotePort
    }

    /// A transaction with no exchange behind it: one that failed before a response (it has only
    /// its start, as URLSession reports a refused connection), or a local resource (`file:`, `data:`).
    init(request: URLRequest, response: ReceivedResponse?, fetchStart: Date, end: Date?, fetchType: URLSessionTaskMetrics.ResourceFetchType)
    {
        self.request = request
        receivedResponse = response
        resourceFetchType = fetchType
        fetchStartDate = fetchStart
        requestStartDate = response == nil ? nil : fetchStart
        responseStartDate = response == nil ? nil : end
        responseEndDate = end
        isReusedConnection = false
        isProxyConnection = false
        countOfRequestHeaderBytesSent = 0
        countOfRequestBodyBytesSent = 0
        countOfResponseHeaderBytesReceived = 0
        countOfResponseBodyBytesReceived = 0
        countOfResponseBodyBytesAfterDecoding = 0
    }
}

/// Converts monotonic deadlines to dates, from one reading of both clocks.
struct WallClockAnchor: Sendable {
    let date = Date()
    let uptime = DispatchTime.now().uptimeNanoseconds

    func date(_ deadline: NIODeadline) -> Date {
        date.addingTimeInterval(TimeInterval(Int64(bitPattern: deadline.uptimeNanoseconds &- uptime)) / 1e9)
    }
}

extension TransactionMetrics {
    /// A TLS version as Security's `tls_protocol_version_t` names it, with the dot.
    static func name(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1.0"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }
}
