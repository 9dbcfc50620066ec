import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the channel, to attribute requests to
/// connections and to report the client's address.
struct HTTPBinRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Answers every request like httpbin.org. Paths are matched by their first segment; each endpoint
/// checks its own method and remaining segments.
struct HTTPBinResponder: HTTPResponder {
    typealias Context = HTTPBinRequestContext

    /// `http` or `https`: what the echoed `url` fields say.
    let scheme: String
    let recorder: ConnectionRecorder

    func respond(to request: Request, context: Context) async throws -> Response {
        recorder.requestReceived(on: context.channel)
        let exchange = Exchange(request: request, context: context, scheme: scheme)
        let response: Response
        do {
            response = try await route(exchange)
        } catch let error as HTTPBinError {
            response = error.response
        }
        return request.method == .head ? response.createHeadResponse() : response
    }

    private func route(_ ex: Exchange) async throws -> Response {
        let rest = Array(ex.segments.dropFirst())
        switch ex.segments.first ?? "" {
        case "get", "post", "put", "patch", "delete": return try await Echo.method(ex)
        case "anything": return try await Echo.anything(ex)
        case "headers": return try Echo.headers(ex)
        case "ip": return try Echo.ip(ex)
        case "user-agent": return try Echo.userAgent(ex)
        case "status": return try Statuses.status(ex, rest)
        case "redirect": return try Redirects.redirect(ex, rest)
        case "relative-redirect": return try Redirects.relative(ex, rest)
        case "absolute-redirect": return try Redirects.absolute(ex, rest)
        case "redirect-to": return try Redirects.redirectTo(ex)
        case "basic-auth": return try Authentication.basic(ex, rest, hidden: false)
        case "hidden-basic-auth": return try Authentication.basic(ex, rest, hidden: true)
        case "realmless-basic-auth": return try Authentication.basic(ex, rest, hidden: false, realm: nil)
        case "bearer": return try Authentication.bearer(ex)
        case "digest-auth": return try await Authentication.digest(ex, rest)
        case "bytes": return try Streams.bytes(ex, rest)
        case "stream-bytes": return try Streams.streamBytes(ex, rest)
        case "stream": return try Streams.stream(ex, rest)
        case "drip": return try Streams.drip(ex)
        case "delay": return try await Streams.delay(ex, rest)
        case "range": return try Streams.range(ex, rest, gates: recorder)
        case "hold": return try await Streams.hold(ex, rest, gates: recorder)
        case "upload": return try Streams.upload(ex)
        case "sse": return try Streams.serverSentEvents(ex)
        case "cache": return try Caching.cache(ex, rest)
        case "etag": return try Caching.etag(ex, rest)
        case "response-headers": return try Caching.responseHeaders(ex)
        case "cookies": return try Cookies.route(ex, rest)
        case "gzip", "deflate": return try Content.compressed(ex)
        case "gzip-bomb": return try Content.gzipBomb(ex)
        case "brotli", "zstd": return try Content.coded(ex)
        case "brotli-bomb", "zstd-bomb": return try Content.codedBomb(ex)
        case "coded": return try Content.codedBytes(ex, rest)
        case "json", "xml", "html", "robots.txt", "encoding", "image": return try Content.document(ex)
        case "base64": return try Content.base64(ex, rest)
        case "search": return try await ITunesSearch.search(ex)
        case "artwork": return try ITunesSearch.artwork(ex, rest)
        default: throw HTTPBinError(.notFound)
        }
    }
}

/// A response an endpoint gives up with: a status, an optional plain-text body and extra headers.
struct HTTPBinError: Error {
    let status: HTTPResponse.Status
    let message: String
    let headers: HTTPFields

    init(_ status: HTTPResponse.Status, _ message: String = "", headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    var response: Response {
        var headers = headers
        if !message.isEmpty { headers[.contentType] = "text/plain; charset=utf-8" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message)))
    }
}
