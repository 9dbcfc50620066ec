#if OpenAPI
public import AlamofireNIO
import AlamofireNIOLoading
import Foundation
public import HTTPTypes
public import OpenAPIRuntime

#if canImport(FoundationEssentials)
public import FoundationEssentials
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A swift-openapi-runtime `ClientTransport` that sends each operation through an Alamofire
/// `Session`, so the session's interceptors, retry policies, server trust, cookies, cache and event
/// monitors apply to the generated client's requests.
///
/// ```swift
/// let session = Session(interceptor: RetryPolicy())
/// let client = Client(serverURL: try Servers.Server1.url(), transport: AlamofireTransport(session: session))
/// let output = try await client.getGreeting(query: .init(name: "Jane"))
/// ```
///
/// Bodies stream both ways without being collected: a request `HTTPBody` is sent chunk by chunk as
/// the connection takes them (with `Content-Length` when its length is known, chunked otherwise),
/// and the response body is handed on as it arrives, holding the connection back while the
/// consumer is behind (``DataStreamRequest/maximumBufferedBytes``). A request body with `.multiple`
/// iteration is iterated again for a new connection, a retry or a 307/308 redirect; one with
/// `.single` iteration is sent once, and an attempt that would need it again fails.
///
/// Cancelling the task that called ``send(_:body:baseURL:operationID:)``, or that iterates the
/// response body, cancels the request; so does dropping the response body unread. Errors are
/// thrown as `AFError`s (the generated client wraps them in its `ClientError`); a cancelled call
/// throws `CancellationError`.
///
/// A retry is made only before a response head has arrived (a connection error, say): once the
/// caller has the response, a second one cannot replace it. Responses are not validated: the
/// generated client decides what each status means.
public struct AlamofireTransport: ClientTransport {
    /// What the transport sends through.
    public struct Configuration: Sendable {
        /// The session every operation is sent through.
        public var session: Session
        /// An interceptor for this transport's requests, applied after the session's own.
        public var interceptor: (any RequestInterceptor)?

        /// - Parameters:
        ///   - session:     The session every operation is sent through. `Session.default` by default.
        ///   - interceptor: An interceptor for this transport's requests. `nil` by default.
        public init(session: Session = .default, interceptor: (any RequestInterceptor)? = nil) {
            self.session = session
            self.interceptor = interceptor
        }
    }

    /// What the transport sends through.
    public var configuration: Configuration

    /// Creates a transport.
    /// - Parameter configuration: What the transport sends through.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Creates a transport that sends through `session`.
    /// - Parameters:
    ///   - session:     The session every operation is sent through. `Session.default` by default.
    ///   - interceptor: An interceptor for this transport's requests. `nil` by default.
    public init(session: Session = .default, interceptor: (any RequestInterceptor)? = nil) {
        self.init(configuration: Configuration(session: session, interceptor: interceptor))
    }

    /// Sends `request` with `body` to `baseURL` and returns the response head as soon as it has
    /// arrived, with the body to be read as it comes.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let urlRequest = try OpenAPIMapping.urlRequest(for: request, baseURL: baseURL)
        let upload = body.map { body in
            ChunkedRequestBody(length: OpenAPIMapping.length(of: body), isReplayable: body.iterationBehavior == .multiple) { send in
                for try await chunk in body { try await send(chunk) }
            }
        }
        let exchange = configuration.session.streamingExchange(urlRequest, body: upload, interceptor: configuration.interceptor)
        return try await ResponseStream.start(exchange, method: request.method, queue: configuration.session.rootQueue)
    }
}

/// The conversions between swift-http-types' values and Foundation's.
enum OpenAPIMapping {
    /// The `URLRequest` for `request` against `baseURL`: the request's path (with its query, both
    /// already percent-encoded) appended to the base URL's path. Repeated header fields are joined
    /// as HTTP allows (`Cookie` with `; `, others with `, `), since a `URLRequest` holds one value
    /// per name. The pseudo-header fields other than the method and path are not used: the base URL
    /// says where the request goes.
    static func urlRequest(for request: HTTPRequest, baseURL: URL) throws -> URLRequest {
        let path = request.path ?? ""
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let requestComponents = URLComponents(string: path)
        else { throw AFError.invalidURL(url: baseURL.absoluteString + path) }
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/") && requestComponents.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + requestComponents.percentEncodedPath
        components.percentEncodedQuery = requestComponents.percentEncodedQuery
        guard let url = components.url else { throw AFError.invalidURL(url: baseURL.absoluteString + path) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        var seen: Set<HTTPField.Name> = []
        for field in request.headerFields where seen.insert(field.name).inserted {
            urlRequest.setValue(request.headerFields[field.name], forHTTPHeaderField: field.name.canonicalName)
        }
        return urlRequest
    }

    /// A body's length in bytes, if known.
    static func length(of body: HTTPBody) -> Int64? {
        if case .known(let length) = body.length { length } else { nil }
    }

    /// The response for a head received as `statusCode` and `fields` (repeated fields apart, as
    /// received); fields whose names HTTP does not allow are left out.
    static func response(statusCode: Int, fields: [(name: String, value: String)]) -> HTTPResponse {
        var headerFields = HTTPFields()
        for (name, value) in fields {
            guard let name = HTTPField.Name(name) else { continue }
            headerFields.append(HTTPField(name: name, value: value))
        }
        return HTTPResponse(status: .init(code: statusCode), headerFields: headerFields)
    }

    /// Whether a response to `method` with `status` has no body to hand on.
    static func hasNoBody(method: HTTPRequest.Method, status: HTTPResponse.Status) -> Bool {
        method == .head || status.kind == .informational || status.code == 204 || status.code == 304
    }

    /// The body's length as the response announces it: unknown when the body was decoded on the way
    /// (its `Content-Length` counts the encoded bytes).
    static func bodyLength(of response: HTTPResponse) -> HTTPBody.Length {
        guard response.headerFields[.contentEncoding] == nil || response.headerFields[.contentEncoding] == "identity",
            let length = response.headerFields[.contentLength].flatMap(Int64.init)
        else { return .unknown }
        return .known(length)
    }
}
#endif
