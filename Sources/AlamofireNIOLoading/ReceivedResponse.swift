import AFSynchronization
package import Foundation
package import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// A response as it arrived: an HTTP head off the wire, made into Foundation's `HTTPURLResponse`
/// only when something first reads it, and then once; or a `URLResponse` that already exists (a
/// stored one, a URL protocol's, a `file:` or `data:` URL's).
///
/// FoundationNetworking's `HTTPURLResponse` initializer capitalizes and compares every header name
/// through `NSString`: about a third of a small request's instructions. The loading policies read
/// what they need (status, a header) from the head, so a request whose response nobody reads (a
/// serializer given a body, no monitor, no validator) never pays for it. Every reader gets the same
/// object.
package final class ReceivedResponse: Sendable, Hashable {
    private enum Source {
        case wire(HTTPResponseHead, url: URL)
        case built(URLResponse)
    }

    private let source: Source
    /// The wire head's `HTTPURLResponse`, once made.
    private let made = Mutex<URLResponse?>(nil)

    /// A head off the wire, for `url`.
    package init(head: HTTPResponseHead, url: URL) {
        source = .wire(head, url: url)
    }

    /// A response that already exists.
    package init(_ response: URLResponse) {
        source = .built(response)
    }

    /// The URL the response is for.
    package var url: URL? {
        switch source {
        case .wire(_, let url): url
        case .built(let response): response.url
        }
    }

    /// Whether this is an HTTP response (not a `file:` or `data:` URL's).
    package var isHTTP: Bool {
        switch source {
        case .wire: true
        case .built(let response): response is HTTPURLResponse
        }
    }

    /// The HTTP status code; 0 for a response that is not HTTP.
    package var statusCode: Int {
        switch source {
        case .wire(let head, _): Int(head.status.code)
        case .built(let response): (response as? HTTPURLResponse)?.statusCode ?? 0
        }
    }

    /// A header's value, its name matched without regard to case; repeated fields joined with
    /// commas, as `HTTPURLResponse` holds them.
    package func value(forHTTPHeaderField name: String) -> String? {
        switch source {
        case .wire(let head, _):
            let values = head.headers[name]
            return values.isEmpty ? nil : values.joined(separator: ", ")
        case .built(let response):
            return (response as? HTTPURLResponse)?.value(forHTTPHeaderField: name)
        }
    }

    /// The header fields as received, repeated ones apart and in order; a response that was not
    /// received (a cached or a protocol's one) gives its `allHeaderFields`, sorted by name.
    package var headerFields: [(name: String, value: String)] {
        switch source {
        case .wire(let head, _):
            return head.headers.map { (name: $0.name, value: $0.value) }
        case .built(let response):
            let fields = (response as? HTTPURLResponse)?.allHeaderFields ?? [:]
            return fields.compactMap { name, value in (name as? String).map { ($0, "\(value)") } }.sorted { $0.name < $1.name }
        }
    }

    /// The response as Foundation's type, made on first read.
    package var urlResponse: URLResponse {
        switch source {
        case .built(let response): response
        case .wire(let head, let url): made.withLock { made in made ?? Self.make(head, url: url, into: &made) }
        }
    }

    /// Whether ``urlResponse`` has been made (or was given).
    package var hasMadeURLResponse: Bool {
        switch source {
        case .built: true
        case .wire: made.withLock { $0 != nil }
        }
    }

    /// ``urlResponse`` when it is an `HTTPURLResponse`.
    package var httpURLResponse: HTTPURLResponse? {
        urlResponse as? HTTPURLResponse
    }

    /// Repeated fields are joined with commas under the first one's spelling, whatever the case of
    /// the others, so the response holds what ``value(forHTTPHeaderField:)`` answers.
    private static func make(_ head: HTTPResponseHead, url: URL, into made: inout URLResponse?) -> URLResponse {
        var fields: [String: String] = [:]
        var spellings: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            if let spelling = spellings[key], let existing = fields[spelling] {
                fields[spelling] = existing + ", " + value
            } else {
                spellings[key] = name
                fields[name] = value
            }
        }
        // FoundationNetworking's initializer never fails; should one, the URL is still answered for.
        let response =
            HTTPURLResponse(
                url: url, statusCode: Int(head.status.code), httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
                headerFields: fields) ?? URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
        made = response
        return response
    }

    package static func == (lhs: ReceivedResponse, rhs: ReceivedResponse) -> Bool {
        lhs === rhs || lhs.urlResponse == rhs.urlResponse
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(urlResponse)
    }
}
