import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// URLSession's redirect rules: 301, 302 and 303 turn a request into a GET without a body (303
/// keeps HEAD); 307 and 308 repeat the method and body. `Authorization` is not carried to another
/// origin. Asked once per response; the delegate then decides whether to follow.
package struct RedirectPolicy: Sendable {
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
        if base.host?.lowercased() != target.host?.lowercased() || base.port != target.port || base.scheme != target.scheme {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
        }
        return next
    }
}
