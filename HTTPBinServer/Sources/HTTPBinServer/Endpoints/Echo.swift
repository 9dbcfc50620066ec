import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/get /post /put /patch /delete /anything /headers /ip /user-agent`: the request, echoed as JSON.
enum Echo {
    /// `/get`, `/post`, `/put`, `/patch`, `/delete`: only their own method is allowed.
    static func method(_ ex: Exchange) async throws -> Response {
        guard ex.segments.count == 1, let method = HTTPRequest.Method(ex.segments[0].uppercased()) else {
            throw HTTPBinError(.notFound)
        }
        try ex.require(method)
        if method == .get { return try ex.json(requestSummary(ex)) }
        return try ex.json(try await requestDescription(ex))
    }

    /// `/anything` and everything below it, with any method.
    static func anything(_ ex: Exchange) async throws -> Response {
        var description = try await requestDescription(ex)
        description["method"] = ex.method.rawValue
        return try ex.json(description)
    }

    static func headers(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        return try ex.json(["headers": ex.echoedHeaders])
    }

    static func ip(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        return try ex.json(["origin": ex.origin])
    }

    static func userAgent(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        return try ex.json(["user-agent": ex.headers[.userAgent].map { $0 as Any } ?? NSNull()])
    }

    /// What `/get` answers: `args`, `headers`, `origin`, `url`.
    static func requestSummary(_ ex: Exchange) -> [String: Any] {
        ["args": ex.echoedArgs, "headers": ex.echoedHeaders, "origin": ex.origin, "url": ex.url]
    }

    /// The summary plus what the body holds: `data`, `files`, `form` and `json`.
    static func requestDescription(_ ex: Exchange) async throws -> [String: Any] {
        let body = try await decodedBody(ex)
        var description = requestSummary(ex)
        var data = ""
        var form: [(name: String, value: String)] = []
        var files: [(name: String, value: String)] = []
        let contentType = ex.headers[.contentType] ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch mediaType {
        case "application/x-www-form-urlencoded":
            form = FormDecoding.pairs(String(decoding: body, as: UTF8.self))
        case "multipart/form-data":
            guard let boundary = Multipart.boundary(fromContentType: contentType) else {
                throw HTTPBinError(.badRequest, "multipart body without a boundary")
            }
            do {
                for part in try Multipart.parse(body, boundary: boundary) {
                    if part.filename != nil {
                        files.append((part.name, textOrDataURL(part.content, contentType: part.contentType)))
                    } else {
                        form.append((part.name, textOrDataURL(part.content, contentType: part.contentType)))
                    }
                }
            } catch {
                throw HTTPBinError(.badRequest, "malformed multipart body: \(error)")
            }
        default:
            data = textOrDataURL(body, contentType: nil)
        }
        description["data"] = data
        description["form"] = Exchange.group(form)
        description["files"] = Exchange.group(files)
        description["json"] = (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) ?? NSNull()
        return description
    }

    /// The request body, inflated first when it was sent with `Content-Encoding: deflate` (a zlib
    /// stream, as Alamofire's `DeflateRequestCompressor` sends it), so the echo shows what was meant.
    /// A body that does not inflate answers 400.
    static func decodedBody(_ ex: Exchange) async throws -> [UInt8] {
        let body = Array(buffer: try await ex.collectBody())
        guard ex.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased() == "deflate" else { return body }
        do {
            return try Zlib.decompress(body, format: .zlib, limit: Exchange.maximumBufferedBody)
        } catch let error as Zlib.OverLimit {
            throw HTTPBinError(.contentTooLarge, "inflated request body over \(error.limit) bytes")
        } catch {
            throw HTTPBinError(.badRequest, "request body does not inflate as Content-Encoding: deflate")
        }
    }

    /// UTF-8 text as it is; other bytes as a base64 `data:` URL, as httpbin shows binary content.
    static func textOrDataURL(_ bytes: [UInt8], contentType: String?) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return "data:\(contentType ?? "application/octet-stream");base64,\(Data(bytes).base64EncodedString())"
    }
}
