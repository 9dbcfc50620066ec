package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// URLSession's redirect rules: 301, 302 and 303 turn a request into a GET without a body (303
/// keeps HEAD); 307 and 308 repeat the method and body. Asked once per response; the delegate then
/// decides whether to follow.
///
/// It also owns the origin rule: the fields that speak for the user to one origin
/// (``originBoundFields``) are never carried to another. A redirect that changes the scheme, the
/// host or the port drops them from the request it proposes, and the task withholds them from
/// then on, whatever would set them: the session's headers (`httpAdditionalHeaders`) are not merged
/// back at later hops, and an adapter ran for the first hop only. A delegate (a `RedirectHandler`)
/// that wants one sent to the new origin sets it on the request it returns: that is sent as it is.
/// Cookies from the cookie storage are matched per hop, and challenge answers per protection
/// space, so neither follows a redirect either.
package struct RedirectPolicy: Sendable {
    /// The header fields that never go to another origin: AsyncHTTPClient's list (`RedirectState`);
    /// the Fetch standard, curl, Go and Python's requests each drop at least `Authorization`.
    package static let originBoundFields = ["Authorization", "Proxy-Authorization", "Cookie", "Origin"]

    package init() {}

    /// The request URLSession would send next, or nil when `response` is not a redirect to follow.
    package func nextRequest(after request: URLRequest, response: ReceivedResponse) -> URLRequest? {
        guard [301, 302, 303, 307, 308].contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"),
            let base = request.url, let target = URL(string: location, relativeTo: base)?.absoluteURL,
            ["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return nil }
        var next = request
        next.url = target
        let method = request.httpMethod ?? "GET"
        let keepsMethod = response.statusCode == 307 || response.statusCode == 308
        if !keepsMethod && !(response.statusCode == 303 && method == "HEAD") && method != "GET" && method != "HEAD" {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        if !Self.isSameOrigin(base, target) {
            for name in Self.originBoundFields { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return next
    }

    /// Whether two URLs share an origin (RFC 6454): scheme, host and port, the scheme's default
    /// port standing for a missing one. `ws` and `wss` count as `http` and `https`.
    package static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        guard let one = Origin(first), let other = Origin(second) else { return false }
        return one == other
    }

    private struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: Int

        init?(_ url: URL) {
            guard var scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            if scheme == "ws" { scheme = "http" } else if scheme == "wss" { scheme = "https" }
            guard let port = url.port ?? (scheme == "http" ? 80 : scheme == "https" ? 443 : nil) else { return nil }
            self.scheme = scheme
            self.host = host
            self.port = port
        }
    }
}
