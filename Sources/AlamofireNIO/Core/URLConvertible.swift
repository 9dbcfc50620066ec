public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A value that can become a `URL`: `String`, `URL` and `URLComponents` are.
public protocol URLConvertible: Sendable {
    /// The URL, or ``AFError/invalidURL(url:)`` when there is none.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// The URL `URL(string:)` makes of the string; ``AFError/invalidURL(url:)`` when it makes none.
    public func asURL() throws -> URL {
        guard let url = URL(string: self) else { throw AFError.invalidURL(url: self) }
        return url
    }
}

extension URL: URLConvertible {
    /// Returns the URL itself.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// The components' URL; ``AFError/invalidURL(url:)`` when they do not form one.
    public func asURL() throws -> URL {
        guard let url else { throw AFError.invalidURL(url: self) }
        return url
    }
}

/// A value that can become a `URLRequest`, such as a router enum.
public protocol URLRequestConvertible: Sendable {
    /// The request; errors thrown here surface as ``AFError/createURLRequestFailed(error:)``.
    func asURLRequest() throws -> URLRequest
}

extension URLRequestConvertible {
    /// The request, or nil when it cannot be made.
    public var urlRequest: URLRequest? { try? asURLRequest() }
}

extension URLRequest: URLRequestConvertible {
    /// Returns the request itself.
    public func asURLRequest() throws -> URLRequest { self }
}

extension URLRequest {
    /// A request for the URL with the method and header fields.
    /// - Parameters:
    ///   - url: the URL.
    ///   - method: the HTTP method.
    ///   - headers: header fields to set.
    public init(url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders? = nil) throws {
        self.init(url: try url.asURL())
        // A new request's method is GET already; setting it again costs FoundationNetworking a
        // case-insensitive comparison with every method it knows.
        if method != .get { self.method = method }
        if let headers { self.headers = headers }
    }

    /// The request's `httpMethod` as an ``HTTPMethod``.
    public var method: HTTPMethod? {
        get { httpMethod.map(HTTPMethod.init) }
        set { httpMethod = newValue?.rawValue }
    }

    /// Refuses a body on a GET request, as URLSession would.
    public func validate() throws {
        if method == .get, let body = httpBody {
            throw AFError.urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))
        }
    }
}
