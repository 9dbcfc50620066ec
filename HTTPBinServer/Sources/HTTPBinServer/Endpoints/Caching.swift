import Foundation
import HTTPTypes
import Hummingbird

/// `/cache`, `/cache/:n`, `/etag/:etag` and `/response-headers`: endpoints for HTTP caching and
/// conditional requests.
enum Caching {
    static func cache(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        switch rest.count {
        case 0:
            // Any validator means the client has a copy: 304. Otherwise a fresh body with validators.
            if ex.headers[.ifModifiedSince] != nil || ex.headers[.ifNoneMatch] != nil {
                return Response(status: .notModified)
            }
            let headers: HTTPFields = [
                .lastModified: httpDate(Date()), .eTag: "\"\(UUID().uuidString.lowercased())\"",
            ]
            return try ex.json(Echo.requestSummary(ex), headers: headers)
        case 1:
            guard let seconds = Int(rest[0]), seconds >= 0 else { throw HTTPBinError(.notFound) }
            return try ex.json(Echo.requestSummary(ex), headers: [.cacheControl: "public, max-age=\(seconds)"])
        default:
            throw HTTPBinError(.notFound)
        }
    }

    /// 304 when `If-None-Match` matches, 412 when `If-Match` does not, else 200 with the ETag.
    static func etag(_ ex: Exchange, _ rest: [String]) throws -> Response {
        try ex.require(.get)
        guard rest.count == 1 else { throw HTTPBinError(.notFound) }
        let etag = rest[0]
        let quoted = "\"\(etag)\""
        if let ifNoneMatch = ex.headers[.ifNoneMatch], matches(ifNoneMatch, etag) {
            return Response(status: .notModified, headers: [.eTag: quoted])
        }
        if let ifMatch = ex.headers[.ifMatch], !matches(ifMatch, etag) {
            return Response(status: .preconditionFailed)
        }
        return try ex.json(Echo.requestSummary(ex), headers: [.eTag: quoted])
    }

    /// Sets every query pair as a response header and echoes the resulting headers as JSON.
    static func responseHeaders(_ ex: Exchange) throws -> Response {
        try ex.require(.get, .post)
        var headers: HTTPFields = [.contentType: "application/json"]
        var echoed: [(name: String, value: String)] = [("Content-Type", "application/json")]
        for pair in ex.query {
            guard let name = HTTPField.Name(pair.name) else { throw HTTPBinError(.badRequest, "invalid header name") }
            if name == .contentType {
                headers[.contentType] = pair.value
                echoed.removeAll { $0.name == "Content-Type" }
            } else {
                headers.append(HTTPField(name: name, value: pair.value))
            }
            echoed.append(pair)
        }
        let body = try JSONSerialization.data(
            withJSONObject: Exchange.group(echoed), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: .init(bytes: body)))
    }

    /// An IMF-fixdate, as HTTP date headers use (RFC 9110 §5.6.7).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// Whether an `If-None-Match`/`If-Match` list names the tag (quoted, weak or `*`).
    private static func matches(_ list: String, _ etag: String) -> Bool {
        list.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == etag
        }
    }
}
