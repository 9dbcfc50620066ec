import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One incoming request as the endpoints see it: its method, decoded path segments, query, headers,
/// origin and URL, with helpers to read the body and to answer in httpbin's formats.
struct Exchange: Sendable {
    /// Echo endpoints buffer the body; larger bodies get 413. `/upload` streams instead.
    static let maximumBufferedBody = 64 * 1024 * 1024

    let request: Request
    let scheme: String
    /// The path split at `/`, each segment percent-decoded, empty segments dropped.
    let segments: [String]
    /// The query's pairs in order, form-decoded.
    let query: [(name: String, value: String)]
    /// The client's IP address.
    let origin: String
    /// The connection (or HTTP/2 stream) the request came on.
    let channel: any Channel

    init(request: Request, context: HTTPBinRequestContext, scheme: String) {
        self.request = request
        self.scheme = scheme
        self.segments = request.uri.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        self.query = FormDecoding.pairs(request.uri.query ?? "")
        self.origin = context.channel.remoteAddress?.ipAddress ?? "127.0.0.1"
        self.channel = context.channel
    }

    /// Waits `seconds`, or throws as soon as the client's connection closes, so that a slow endpoint
    /// never outlives its client (nor holds up the server's shutdown).
    func pause(_ seconds: Double) async throws {
        try await Exchange.pause(seconds, unlessClosed: channel)
    }

    static func pause(_ seconds: Double, unlessClosed channel: any Channel) async throws {
        guard seconds > 0 else { return }
        let eventLoop = connection(of: channel).eventLoop
        let promise = eventLoop.makePromise(of: Void.self)
        let timer = eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) { promise.succeed() }
        promise.futureResult.whenFailure { _ in timer.cancel() }
        try await wait(for: promise, unlessClosed: channel)
    }

    /// Waits for `promise`, completed elsewhere, or fails it and throws as soon as the client's
    /// connection closes, or its HTTP/2 stream (a promise completes once: whichever comes first decides).
    static func wait(for promise: EventLoopPromise<Void>, unlessClosed channel: any Channel) async throws {
        let connection = connection(of: channel)
        if connection !== channel { channel.closeFuture.whenComplete { _ in promise.fail(ChannelError.ioOnClosedChannel) } }
        connection.eventLoop.execute {
            let departure =
                (try? connection.pipeline.syncOperations.handler(type: ClientDepartureHandler.self).departure) ?? connection.closeFuture
            departure.whenComplete { _ in promise.fail(ChannelError.ioOnClosedChannel) }
        }
        try await promise.futureResult.get()
    }

    /// The connection `channel` belongs to: HTTP/2 streams are children of the connection that
    /// carries the departure handler.
    private static func connection(of channel: any Channel) -> any Channel {
        channel.parent?.parent == nil ? channel : channel.parent ?? channel
    }

    var method: HTTPRequest.Method { request.method }
    var headers: HTTPFields { request.headers }

    /// The host the client addressed, with its port.
    var host: String { request.head.authority ?? "127.0.0.1" }

    /// The full URL of this request, as httpbin echoes it.
    var url: String { "\(scheme)://\(host)\(request.uri.string)" }

    /// The URL of another path on this server.
    func absoluteURL(_ path: String) -> String { "\(scheme)://\(host)\(path)" }

    /// The first value of a query parameter.
    func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Allows the given methods (HEAD wherever GET is allowed) or answers 405.
    func require(_ methods: HTTPRequest.Method...) throws {
        if methods.contains(method) || (method == .head && methods.contains(.get)) { return }
        var allowed = methods.map(\.rawValue)
        if methods.contains(.get) { allowed.append("HEAD") }
        throw HTTPBinError(.methodNotAllowed, headers: [.allow: allowed.joined(separator: ", ")])
    }

    /// Reads the whole body, up to ``maximumBufferedBody``.
    func collectBody() async throws -> ByteBuffer {
        var body = ByteBuffer()
        for try await chunk in request.body {
            guard body.readableBytes + chunk.readableBytes <= Self.maximumBufferedBody else {
                throw HTTPBinError(.contentTooLarge, "request body over \(Self.maximumBufferedBody) bytes")
            }
            var chunk = chunk
            body.writeBuffer(&chunk)
        }
        return body
    }

    /// The request headers as httpbin shows them: names in Title-Case, repeated fields joined by commas.
    var echoedHeaders: [String: String] {
        var result: [String: String] = [:]
        for field in headers {
            let name = field.name.rawName.split(separator: "-", omittingEmptySubsequences: false)
                .map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined(separator: "-")
            if let existing = result[name] {
                result[name] = existing + "," + field.value
            } else {
                result[name] = field.value
            }
        }
        if result["Host"] == nil { result["Host"] = host }
        return result
    }

    /// The query as httpbin shows it: one value as a string, repeated names as arrays.
    var echoedArgs: [String: Any] { Self.group(query) }

    /// Groups name/value pairs: a name seen once maps to its string, a repeated name to an array.
    static func group(_ pairs: [(name: String, value: String)]) -> [String: Any] {
        var grouped: [String: [String]] = [:]
        for pair in pairs { grouped[pair.name, default: []].append(pair.value) }
        return grouped.mapValues { values -> Any in values.count == 1 ? values[0] : values }
    }

    /// A JSON response, pretty-printed with sorted keys like httpbin's.
    func json(_ object: Any, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        var headers = headers
        headers[.contentType] = "application/json"
        var buffer = ByteBuffer(bytes: data)
        buffer.writeString("\n")
        return Response(status: status, headers: headers, body: .init(byteBuffer: buffer))
    }

    /// A response with a fixed body.
    func bytes(
        _ body: some Sequence<UInt8>, contentType: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    )
        -> Response
    {
        var headers = headers
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A response with a text body.
    func text(_ text: String, contentType: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok) -> Response {
        bytes(Array(text.utf8), contentType: contentType, status: status)
    }
}
