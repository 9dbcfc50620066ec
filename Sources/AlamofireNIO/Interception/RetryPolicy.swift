public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries failed requests with an exponential backoff: for the methods that may be repeated, when
/// the response has one of the retryable status codes or the request failed with one of the
/// retryable `URLError` codes. Alamofire's defaults: two retries, after 0.5 s and then 1 s.
///
/// ```swift
/// let session = Session(interceptor: .retryPolicy)
/// ```
///
/// The delay is scheduled on the session's root queue; no thread waits for it. Subclass and
/// override ``shouldRetry(request:dueTo:)`` for other rules, as ``ConnectionLostRetryPolicy`` does.
open class RetryPolicy: @unchecked Sendable, RequestInterceptor {
    /// The default retry limit.
    public static let defaultRetryLimit: UInt = 2

    /// The default base of the exponential backoff (at least 2).
    public static let defaultExponentialBackoffBase: UInt = 2

    /// The default scale of the exponential backoff, in seconds.
    public static let defaultExponentialBackoffScale: Double = 0.5

    /// The methods retried by default: those RFC 7231 lets a client repeat (DELETE, GET, HEAD,
    /// OPTIONS, PUT, TRACE).
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.delete, .get, .head, .options, .put, .trace]

    /// The status codes retried by default: 408, 500, 502, 503 and 504.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]

    /// The `URLError` codes retried by default: failures a later attempt may not meet (the network,
    /// DNS, a dropped connection, a time-out, an unclear TLS failure, a certificate not valid yet or
    /// any more), but not those a retry cannot mend (a bad URL, a cancel, file system errors,
    /// too many redirects, an untrusted certificate).
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse, .callIsActive,
        .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed, .dnsLookupFailed,
        .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete, .internationalRoamingOff, .networkConnectionLost,
        .notConnectedToInternet, .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid, .timedOut,
    ]

    /// How many times a request may be retried.
    public let retryLimit: UInt
    /// The base of the exponential backoff.
    public let exponentialBackoffBase: UInt
    /// The scale of the exponential backoff: the first retry waits this long, in seconds.
    public let exponentialBackoffScale: Double
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPMethod>
    /// The status codes that are retried.
    public let retryableHTTPStatusCodes: Set<Int>
    /// The `URLError` codes that are retried.
    public let retryableURLErrorCodes: Set<URLError.Code>

    /// Creates a retry policy.
    ///
    /// - Parameters:
    ///   - retryLimit: how many times a request may be retried (2).
    ///   - exponentialBackoffBase: the backoff's base (2); a value below 2 counts as 2.
    ///   - exponentialBackoffScale: the first delay, in seconds (0.5); retry `n` waits `scale × base^n`.
    ///   - retryableHTTPMethods: the methods that may be retried.
    ///   - retryableHTTPStatusCodes: the status codes that are retried.
    ///   - retryableURLErrorCodes: the `URLError` codes that are retried.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit, exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) {
        self.retryLimit = retryLimit
        // Alamofire traps on a base below 2; a smaller one would not back off, so it counts as 2.
        self.exponentialBackoffBase = max(2, exponentialBackoffBase)
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// Retries with a delay of `scale × base^retryCount` while the limit allows and
    /// ``shouldRetry(request:dueTo:)`` agrees.
    @preconcurrency open func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard request.retryCount < retryLimit, shouldRetry(request: request, dueTo: error) else { return completion(.doNotRetry) }
        completion(.retryWithDelay(pow(Double(exponentialBackoffBase), Double(request.retryCount)) * exponentialBackoffScale))
    }

    /// Whether `request` may be retried after `error`: its method is retryable, and its response's
    /// status code or the error's `URLError` code (itself or under an ``AFError``) is.
    open func shouldRetry(request: Request, dueTo error: any Error) -> Bool {
        guard let method = request.request?.method, retryableHTTPMethods.contains(method) else { return false }
        if let statusCode = request.response?.statusCode, retryableHTTPStatusCodes.contains(statusCode) { return true }
        guard let code = (error as? URLError)?.code ?? (error.asAFError?.underlyingError as? URLError)?.code else { return false }
        return retryableURLErrorCodes.contains(code)
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with Alamofire's defaults.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy``; see ``RetryPolicy/init(retryLimit:exponentialBackoffBase:exponentialBackoffScale:retryableHTTPMethods:retryableHTTPStatusCodes:retryableURLErrorCodes:)``.
    public static func retryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit, exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase, exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods, retryableHTTPStatusCodes: retryableHTTPStatusCodes,
            retryableURLErrorCodes: retryableURLErrorCodes)
    }
}

/// Retries requests that lost their connection (`URLError.networkConnectionLost`), for the methods
/// that may be repeated, with ``RetryPolicy``'s backoff. No status code is retried.
open class ConnectionLostRetryPolicy: RetryPolicy, @unchecked Sendable {
    /// Creates a policy that retries requests whose connection was lost.
    ///
    /// - Parameters:
    ///   - retryLimit: how many times a request may be retried (2).
    ///   - exponentialBackoffBase: the backoff's base (2); a value below 2 counts as 2.
    ///   - exponentialBackoffScale: the first delay, in seconds (0.5).
    ///   - retryableHTTPMethods: the methods that may be retried.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit, exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) {
        super.init(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase, exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods, retryableHTTPStatusCodes: [], retryableURLErrorCodes: [.networkConnectionLost])
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A ``ConnectionLostRetryPolicy`` with Alamofire's defaults.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A ``ConnectionLostRetryPolicy`` with these settings.
    public static func connectionLostRetryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit, exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase, exponentialBackoffScale: exponentialBackoffScale,
            retryableHTTPMethods: retryableHTTPMethods)
    }
}
