import HTTPTypes
import Hummingbird

/// `/redirect/:n`, `/relative-redirect/:n`, `/absolute-redirect/:n` (302 chains ending at `/get`)
/// and `/redirect-to?url=&status_code=&body=`.
enum Redirects {
    static func redirect(_ ex: Exchange, _ rest: [String]) throws -> Response {
        ex.queryValue("absolute")?.lowercased() == "true" ? try absolute(ex, rest) : try relative(ex, rest)
    }

    static func relative(_ ex: Exchange, _ rest: [String]) throws -> Response {
        let remaining = try count(ex, rest)
        return found(remaining == 1 ? "/get" : "/relative-redirect/\(remaining - 1)")
    }

    static func absolute(_ ex: Exchange, _ rest: [String]) throws -> Response {
        let remaining = try count(ex, rest)
        return found(ex.absoluteURL(remaining == 1 ? "/get" : "/absolute-redirect/\(remaining - 1)"))
    }

    /// Any method; `status_code` must be a 3xx code, anything else gives 302; `body` is the
    /// response's body (`text/plain`), none by default.
    static func redirectTo(_ ex: Exchange) throws -> Response {
        guard let target = ex.queryValue("url") else { throw HTTPBinError(.badRequest, "missing url parameter") }
        var status = HTTPResponse.Status.found
        if let code = ex.queryValue("status_code").flatMap(Int.init), (300..<400).contains(code) {
            status = HTTPResponse.Status(code: code)
        }
        guard let body = ex.queryValue("body") else { return Response(status: status, headers: [.location: target]) }
        return Response(
            status: status, headers: [.location: target, .contentType: "text/plain"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func count(_ ex: Exchange, _ rest: [String]) throws -> Int {
        try ex.require(.get)
        guard rest.count == 1, let n = Int(rest[0]), n > 0 else { throw HTTPBinError(.notFound) }
        return n
    }

    private static func found(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }
}
