import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Where cookies enter and leave a task, by RFC 6265: asked before every hop to add `Cookie`, and
/// after every response, redirects included, to store what `Set-Cookie` sets.
///
/// Cookies live in the configuration's `httpCookieStorage`. Parsing and matching are the loading
/// layer's own (``SetCookie``): FoundationNetworking's `HTTPCookieStorage.cookies(for:)` checks
/// only the host (not the path, `Secure` or expiry) and its parser ignores `Max-Age`. Cookies are
/// stored as `HTTPCookie`s whose domain has a leading dot unless they are host-only, as on Apple
/// platforms, so code reading the storage sees what it expects.
package struct CookiePolicy: @unchecked Sendable {
    // @unchecked: HTTPCookieStorage is thread-safe (its own queue) but not marked Sendable.
    let storage: HTTPCookieStorage?
    /// `httpShouldSetCookies`: whether requests carry stored cookies.
    let sendsCookies: Bool
    let acceptPolicy: HTTPCookie.AcceptPolicy

    package init(storage: HTTPCookieStorage?, sendsCookies: Bool, acceptPolicy: HTTPCookie.AcceptPolicy) {
        self.storage = storage
        self.sendsCookies = sendsCookies
        self.acceptPolicy = acceptPolicy
    }

    /// No storage: nothing is sent or stored.
    package init() {
        self.init(storage: nil, sendsCookies: false, acceptPolicy: .never)
    }

    /// Adds a `Cookie` header with the stored cookies that match `request`, unless cookies are off
    /// for it or it sets `Cookie` itself.
    func prepare(_ request: inout URLRequest) {
        guard sendsCookies, request.httpShouldHandleCookies, let storage, let url = request.url,
            request.value(forHTTPHeaderField: "Cookie") == nil,
            let header = Self.cookieHeader(for: url, from: storage.cookies ?? [], now: Date())
        else { return }
        request.setValue(header, forHTTPHeaderField: "Cookie")
    }

    /// Whether `store` would keep anything from a response with these `Set-Cookie` values.
    func stores(_ setCookies: [String], for request: URLRequest) -> Bool {
        !setCookies.isEmpty && storage != nil && acceptPolicy != .never && request.httpShouldHandleCookies
    }

    /// Stores the cookies of a response's `Set-Cookie` headers (each header's raw value) to `request`;
    /// a cookie whose expiry has passed removes the stored one instead.
    func store(_ setCookies: [String], for request: URLRequest) {
        guard stores(setCookies, for: request), let storage, let url = request.url, let host = url.host?.lowercased() else { return }
        if acceptPolicy == .onlyFromMainDocumentDomain, let main = request.mainDocumentURL?.host?.lowercased(),
            !Self.domainMatches(main, host)
        {
            return
        }
        let now = Date()
        for header in setCookies {
            guard let parsed = SetCookie(header, now: now), let cookie = Self.cookie(from: parsed, url: url, host: host) else {
                continue
            }
            if let expires = cookie.expiresDate, expires <= now {
                // Delete by name, domain and path (the storage's key), whatever the stored one's value.
                storage.deleteCookie(cookie)
            } else {
                storage.setCookie(cookie)
            }
        }
    }

    /// The `HTTPCookie` a parsed header makes for a response from `host` (RFC 6265 §5.3), or nil when
    /// the storage model rejects it (a `Domain` the host is not within).
    static func cookie(from parsed: SetCookie, url: URL, host: String) -> HTTPCookie? {
        var domain = host
        if let attribute = parsed.domain {
            // RFC 6265 §5.3 step 5: a Domain that is a public suffix (`com`, `co.uk`, `github.io`)
            // would reach every site under it. Refused, unless it is the host itself, which then
            // gets a host-only cookie, as browsers do.
            if PublicSuffixList.isPublicSuffix(attribute) {
                guard attribute == host else { return nil }
            } else if attribute == host {
                domain = "." + host
            } else {
                guard domainMatches(host, attribute) else { return nil }
                domain = "." + attribute
            }
        }
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: parsed.name, .value: parsed.value, .domain: domain, .path: parsed.path ?? SetCookie.defaultPath(of: url),
            .version: "0",
        ]
        if let expires = parsed.expires {
            properties[.expires] = expires
        } else {
            properties[.discard] = "TRUE"
        }
        if parsed.isSecure { properties[.secure] = "TRUE" }
        if parsed.isHTTPOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }

    /// The `Cookie` header for a request to `url` (RFC 6265 §5.4): matching cookies, longer paths
    /// first, then older first; nil when none match.
    static func cookieHeader(for url: URL, from cookies: [HTTPCookie], now: Date) -> String? {
        guard !cookies.isEmpty, let host = url.host?.lowercased() else { return nil }
        let rawPath = url.path(percentEncoded: true)
        let path = rawPath.isEmpty ? "/" : rawPath
        let isSecure = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        let matching = cookies.filter { cookie in
            if let expires = cookie.expiresDate, expires <= now { return false }
            if cookie.isSecure && !isSecure { return false }
            let domain = cookie.domain.lowercased()
            let domainMatches = domain.hasPrefix(".") ? Self.domainMatches(host, String(domain.dropFirst())) : host == domain
            return domainMatches && Self.pathMatches(path, cookie.path)
        }
        guard !matching.isEmpty else { return nil }
        let sorted = matching.sorted { first, second in
            if first.path.count != second.path.count { return first.path.count > second.path.count }
            return creation(of: first) < creation(of: second)
        }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 §5.1.3: `host` is `domain` or ends with `.domain`, and is not an IP address.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !isIPAddress(host))
    }

    /// RFC 6265 §5.1.4: the cookie's path is the request path or a prefix of it ending at a `/`.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath[requestPath.index(requestPath.startIndex, offsetBy: cookiePath.count)] == "/"
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) })
    }

    private static func creation(of cookie: HTTPCookie) -> Double {
        (cookie.properties?[HTTPCookiePropertyKey("Created")] as? Double) ?? 0
    }
}
