package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Where an interrupted download left off, so a new task can continue it: the partial file, how
/// many bytes it holds, the validator the server gave for them, and the request to repeat. It is
/// what URLSession keeps in its resume data; ``encoded()`` and ``init(decoding:temporaryDirectory:)``
/// turn it into and back from the resume data handed to users.
///
/// A continued task sends `Range: bytes=<offset>-` with `If-Range: <validator>`. A `206` whose
/// `Content-Range` starts at the offset (and whose validator, if it states one, is the same) is
/// appended; a `416`, or a `206` for another range or entity, is dropped and the request sent again
/// without a range; any other response starts the file over.
///
/// The resume data is JSON (keys sorted), format version 1:
///
/// | key | value |
/// |---|---|
/// | `format` | `"AlamofireNIO.ResumeData"` |
/// | `version` | `1` |
/// | `url` | the absolute `http`/`https` URL to continue from (after redirects) |
/// | `method` | `"GET"` (only GET downloads produce resume data) |
/// | `headers` | the request's header fields, as `[name, value]` pairs |
/// | `temporaryFileName` | the partial file's name in the session's temporary directory |
/// | `bytesReceived` | how many bytes of the body the partial file holds |
/// | `entityTag` | the response's strong `ETag`, if any |
/// | `lastModified` | the response's `Last-Modified`, if any (one of the two is always present) |
/// | `expectedTotalBytes` | the whole body's length, when the server stated it |
package struct DownloadResumption: Sendable, Equatable {
    /// The request to continue with (no body; GET).
    package var request: URLRequest
    /// The partial file.
    package var file: URL
    /// How many bytes of the body the file holds.
    package var offset: Int64
    /// The response's strong entity tag, if it had one.
    package var entityTag: String?
    /// The response's `Last-Modified`, if it had one.
    package var lastModified: String?
    /// The whole body's length, if known.
    package var expectedTotalBytes: Int64?
    /// Whether the file is the one resume data the user holds names (not a failed attempt's, kept for a retry): a
    /// task that never takes it leaves it alone, and an error answer to its range gives it back. Not encoded.
    package var isHeldByUser = false

    /// The validator sent with `If-Range`: the entity tag, else the date.
    var ifRange: String? { entityTag ?? lastModified }

    /// Why resume data cannot be used.
    package enum DecodingError: Error, Equatable, Sendable {
        /// Not JSON of this format (corrupt, or resume data from elsewhere, such as Apple's URLSession).
        case unreadable
        /// Written by a newer format version than this one reads.
        case unsupportedVersion(Int)
        /// Its URL is not an absolute `http` or `https` URL.
        case invalidURL(String)
        /// Its file name is not a plain name in the temporary directory.
        case invalidTemporaryFileName(String)
        /// It has neither an entity tag nor a date to validate the partial file with, a negative
        /// length, or a method other than GET.
        case notResumable
    }

    package static let format = "AlamofireNIO.ResumeData"
    package static let version = 1

    package init(
        request: URLRequest, file: URL, offset: Int64, entityTag: String?, lastModified: String?, expectedTotalBytes: Int64?
    ) {
        self.request = request
        self.file = file
        self.offset = offset
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.expectedTotalBytes = expectedTotalBytes
    }

    /// The resumption `response` allows for the file at `file` holding `offset` bytes: none unless
    /// the request is a GET without a body and the response has a strong `ETag` or a
    /// `Last-Modified` (without which `If-Range` cannot protect the bytes already written).
    /// `previous` supplies validators the response omits (a `206` need not repeat them).
    package static func possible(
        request: URLRequest, response: HTTPURLResponse?, file: URL, offset: Int64, expectedTotalBytes: Int64?,
        previous: DownloadResumption?
    ) -> DownloadResumption? {
        guard (request.httpMethod ?? "GET").uppercased() == "GET", request.httpBody == nil, request.httpBodyStream == nil else {
            return nil
        }
        // A 206 to a range the caller asked for: the file does not start at the body's first byte.
        if response?.statusCode == 206, previous == nil { return nil }
        let tag = response?.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let date = response?.value(forHTTPHeaderField: "Last-Modified")
        // A 206 continuing `previous` need not repeat its validators.
        let continuing = response?.statusCode == 206
        let entityTag = tag ?? (continuing ? previous?.entityTag : nil)
        let lastModified = date ?? (continuing ? previous?.lastModified : nil)
        guard entityTag != nil || lastModified != nil else { return nil }
        return DownloadResumption(
            request: request, file: file, offset: offset, entityTag: entityTag, lastModified: lastModified,
            expectedTotalBytes: expectedTotalBytes ?? previous?.expectedTotalBytes)
    }

    // MARK: What a response to a continued request means

    /// What to do with the final response to a request sent with this resumption's range.
    package enum Continuation: Equatable, Sendable {
        /// A `206` for the bytes from the offset: append them; `total` is the whole length, if stated.
        case append(total: Int64?)
        /// A `416`, or a `206` for another range or another entity: drop it and ask again without a range.
        case askAgain
        /// Any other response (a `200` above all): its body replaces the file's.
        case startOver
    }

    package func continuation(after response: HTTPURLResponse) -> Continuation {
        switch response.statusCode {
        case 416:
            return .askAgain
        case 206:
            guard let range = response.value(forHTTPHeaderField: "Content-Range").flatMap(Self.parseContentRange),
                range.first == offset
            else { return .askAgain }
            if let tag = response.value(forHTTPHeaderField: "ETag"), let entityTag, tag != entityTag { return .askAgain }
            if entityTag == nil, let date = response.value(forHTTPHeaderField: "Last-Modified"), let lastModified, date != lastModified {
                return .askAgain
            }
            return .append(total: range.total)
        default:
            return .startOver
        }
    }

    /// `bytes <first>-<last>/<total or *>` → first, and the total if stated.
    package static func parseContentRange(_ value: String) -> (first: Int64, total: Int64?)? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first else { return nil }
        if halves[1] == "*" { return (first, nil) }
        guard let total = Int64(halves[1]), total > last else { return nil }
        return (first, total)
    }

    // MARK: Resume data

    private struct Header: Codable {
        var format: String
        var version: Int
    }

    private struct Encoded: Codable {
        var format: String
        var version: Int
        var url: String
        var method: String
        var headers: [[String]]
        var temporaryFileName: String
        var bytesReceived: Int64
        var entityTag: String?
        var lastModified: String?
        var expectedTotalBytes: Int64?
    }

    /// The resume data handed to users (the format described above).
    package func encoded() -> Data {
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
        let value = Encoded(
            format: Self.format, version: Self.version, url: request.url?.absoluteString ?? "", method: "GET", headers: headers,
            temporaryFileName: file.lastPathComponent, bytesReceived: offset, entityTag: entityTag, lastModified: lastModified,
            expectedTotalBytes: expectedTotalBytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and integers only: encoding cannot fail.
        return (try? encoder.encode(value)) ?? Data()
    }

    /// Reads resume data; the partial file is looked for in `temporaryDirectory` by name only, so
    /// resume data cannot make a download write anywhere else.
    package init(decoding data: Data, temporaryDirectory: URL) throws(DecodingError) {
        // The format and version first: a later version may change the rest.
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.format == Self.format else { throw .unreadable }
        guard header.version <= Self.version, header.version >= 1 else { throw .unsupportedVersion(header.version) }
        guard let value = try? JSONDecoder().decode(Encoded.self, from: data) else { throw .unreadable }
        guard let url = URL(string: value.url), ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false else {
            throw .invalidURL(value.url)
        }
        let name = value.temporaryFileName
        guard DownloadFile.isTemporaryName(name) else { throw .invalidTemporaryFileName(name) }
        guard value.entityTag != nil || value.lastModified != nil, value.bytesReceived >= 0, value.method == "GET" else {
            throw .notResumable
        }
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        for pair in value.headers where pair.count == 2 { request.setValue(pair[1], forHTTPHeaderField: pair[0]) }
        self.init(
            request: request, file: temporaryDirectory.appendingPathComponent(name), offset: value.bytesReceived,
            entityTag: value.entityTag, lastModified: value.lastModified, expectedTotalBytes: value.expectedTotalBytes)
    }
}
