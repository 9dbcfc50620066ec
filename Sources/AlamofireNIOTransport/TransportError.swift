public import Foundation

/// Why an exchange failed, as the `URLError` code URLSession would report for the same failure.
///
/// The transport never crashes on bad input or a misbehaving peer: every failure becomes one of these.
public struct TransportError: Error, CustomStringConvertible {
    /// The `URLError` code URLSession gives for this failure.
    public var code: URLError.Code
    /// What went wrong, for logs and error descriptions.
    public var message: String
    /// The error from the layer below (NIO, NIOSSL, the trust evaluator), when there is one.
    public var underlyingError: (any Error)?

    /// - Parameters:
    ///   - code: the URLError code that describes the failure.
    ///   - message: a human-readable explanation.
    ///   - underlyingError: the error that caused it.
    public init(_ code: URLError.Code, _ message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String {
        var text = "TransportError(\(code.name)): \(message)"
        if let underlyingError { text += " (\(underlyingError))" }
        return text
    }

    /// The same failure as a `URLError`, carrying the URL and this error as its underlying error.
    public func urlError(for url: URL?) -> URLError {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: message, NSUnderlyingErrorKey: self]
        if let url { userInfo[NSURLErrorFailingURLErrorKey] = url }
        return URLError(code, userInfo: userInfo)
    }

    /// A request its caller cancelled.
    package static let cancelled = TransportError(.cancelled, "the request was cancelled")
    /// A request made after ``HTTPTransport/shutdown()``, or waiting for a connection when it came.
    static let shutDown = TransportError(.cancelled, "the transport was shut down")
    static func timedOut(_ what: String) -> TransportError { TransportError(.timedOut, "timed out \(what)") }
    /// A response body past the most a client keeps of it.
    package static func bodyTooLarge(limit: Int) -> TransportError {
        TransportError(.dataLengthExceedsMaximum, "the response body is larger than \(limit) bytes")
    }
    static func connectionLost(_ message: String, _ error: (any Error)? = nil) -> TransportError {
        TransportError(.networkConnectionLost, message, underlyingError: error)
    }
    static func badResponse(_ message: String, _ error: (any Error)? = nil) -> TransportError {
        TransportError(.badServerResponse, message, underlyingError: error)
    }
}

extension URLError.Code {
    /// The code's name as URLError spells it, for descriptions.
    var name: String {
        switch self {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        case .cannotFindHost: "cannotFindHost"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .badServerResponse: "badServerResponse"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        case .serverCertificateHasBadDate: "serverCertificateHasBadDate"
        case .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot"
        case .serverCertificateNotYetValid: "serverCertificateNotYetValid"
        case .clientCertificateRejected: "clientCertificateRejected"
        case .clientCertificateRequired: "clientCertificateRequired"
        case .dataLengthExceedsMaximum: "dataLengthExceedsMaximum"
        case .cannotDecodeContentData: "cannotDecodeContentData"
        case .cannotOpenFile: "cannotOpenFile"
        case .fileDoesNotExist: "fileDoesNotExist"
        case .userAuthenticationRequired: "userAuthenticationRequired"
        case .notConnectedToInternet: "notConnectedToInternet"
        default: "code \(rawValue)"
        }
    }
}
