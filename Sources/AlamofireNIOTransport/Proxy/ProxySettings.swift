public import Foundation

/// Which proxy, if any, a request goes through: from a `connectionProxyDictionary` (the keys
/// URLSession reads) or from the environment as curl reads it. The transport asks it once per
/// exchange; with no proxy configured that costs one branch.
///
/// The environment, as curl reads it:
/// - `http_proxy` (lower case only) for `http` URLs; `https_proxy`, else `HTTPS_PROXY`, for `https`;
///   `all_proxy`, else `ALL_PROXY`, for either when its own variable is unset or empty;
/// - `no_proxy`, else `NO_PROXY`: comma-separated host names (each also matching its subdomains; a
///   leading dot is dropped), IP addresses, CIDR ranges, or `*` for every host; ports are ignored;
/// - proxy URLs `[scheme://][user[:password]@]host[:port]` with scheme `http` (the default),
///   `socks5` or `socks5h` (the proxy resolves names) and port 1080 by default; percent-encoded
///   credentials are decoded. A value that is not such a URL is ignored, with a warning in ``warnings``.
public struct ProxySettings: Sendable {
    /// The proxy for `http` URLs.
    public var httpProxy: TransportProxy?
    /// The proxy for `https` URLs.
    public var httpsProxy: TransportProxy?
    /// Hosts reached directly whatever the proxies.
    public var exceptions: ProxyExceptions
    /// Looks up credentials for a proxy that has none of its own (the session's credential storage).
    public var credentialLookup: (@Sendable (TransportProxy) -> TransportProxy.Credentials?)?
    /// Answers a 407's `Proxy-Authenticate` challenges that Basic, sent up front, does not (Digest):
    /// the `Proxy-Authorization` value for a request with `method` to `uri` (the request target as
    /// sent, `host:port` for `CONNECT`) whose body, when in memory, is `body`; nil when it cannot.
    /// The transport asks once per request or tunnel, so a refused answer is not repeated.
    public var challengeAnswerer: ChallengeAnswerer?

    /// See ``challengeAnswerer``.
    public typealias ChallengeAnswerer =
        @Sendable (
            _ proxyAuthenticate: [String], _ method: String, _ uri: String, _ body: [UInt8]?, _ credentials: TransportProxy.Credentials
        ) -> String?
    /// What could not be used, one sentence each: malformed proxy URLs and unsupported schemes.
    public private(set) var warnings: [String] = []

    /// No proxy: every connection is direct.
    public init() {
        exceptions = ProxyExceptions()
    }

    /// The proxies of a `URLSessionConfiguration.connectionProxyDictionary`: `HTTPEnable`,
    /// `HTTPProxy`, `HTTPPort` for `http` URLs; `HTTPSEnable`, `HTTPSProxy`, `HTTPSPort` (a `CONNECT`
    /// tunnel through an HTTP proxy) for `https`; `SOCKSEnable`, `SOCKSProxy`, `SOCKSPort` (SOCKS5,
    /// names resolved by the proxy) for either when its own is not set; `ExceptionsList` (host names,
    /// `*.domain`, addresses and CIDR ranges such as `169.254/16`) and `ExcludeSimpleHostnames`.
    /// A proxy whose enable key is absent is enabled when its host is set. An empty dictionary means
    /// no proxy at all, as on Apple platforms.
    public init(connectionProxyDictionary dictionary: [AnyHashable: Any]) {
        func value(_ key: String) -> Any? { dictionary[key] ?? dictionary[key as NSString] }
        func proxy(_ prefix: String, kind: TransportProxy.Kind, defaultPort: Int) -> TransportProxy? {
            guard let host = value("\(prefix)Proxy").flatMap(Self.string), !host.isEmpty else { return nil }
            if let enabled = value("\(prefix)Enable"), Self.bool(enabled) != true { return nil }
            let port = value("\(prefix)Port").flatMap(Self.integer) ?? defaultPort
            return TransportProxy(kind: kind, host: Self.unbracketed(host), port: port)
        }
        let socks = proxy("SOCKS", kind: .socks5(resolvesRemotely: true), defaultPort: 1080)
        httpProxy = proxy("HTTP", kind: .http, defaultPort: 80) ?? socks
        httpsProxy = proxy("HTTPS", kind: .http, defaultPort: 443) ?? socks
        let entries = (value("ExceptionsList") as? [Any])?.compactMap(Self.string) ?? []
        exceptions = ProxyExceptions(entries)
        exceptions.excludesSimpleHostnames = value("ExcludeSimpleHostnames").flatMap(Self.bool) ?? false
    }

    /// The proxies the environment names, as curl reads them (see the type's overview).
    /// - Parameter environment: the variables, e.g. `ProcessInfo.processInfo.environment`.
    public init(environment: [String: String]) {
        exceptions = ProxyExceptions()
        func variable(_ names: String...) -> (name: String, value: String)? {
            for name in names {
                if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return (name, value) }
            }
            return nil
        }
        var warnings: [String] = []
        func proxy(_ found: (name: String, value: String)?) -> TransportProxy? {
            guard let found else { return nil }
            do {
                return try Self.proxy(fromURL: found.value)
            } catch {
                warnings.append("\(found.name) is ignored: \(error.reason)")
                return nil
            }
        }
        let all = proxy(variable("all_proxy", "ALL_PROXY"))
        httpProxy = proxy(variable("http_proxy")) ?? all
        httpsProxy = proxy(variable("https_proxy", "HTTPS_PROXY")) ?? all
        if let noProxy = environment["no_proxy"] ?? environment["NO_PROXY"] {
            exceptions = ProxyExceptions(noProxy.split(separator: ",").map(String.init))
        }
        self.warnings = warnings
    }

    /// Whether no proxy is configured.
    public var isEmpty: Bool { httpProxy == nil && httpsProxy == nil }

    /// The proxy a request to `url` goes through, or nil for a direct connection.
    public func proxy(for url: URL) -> TransportProxy? {
        guard !isEmpty else { return nil }
        let candidate: TransportProxy?
        switch url.scheme?.lowercased() {
        case "http": candidate = httpProxy
        case "https": candidate = httpsProxy
        default: candidate = nil
        }
        guard var proxy = candidate, let host = url.host, !exceptions.matches(host: host) else { return nil }
        if proxy.credentials == nil, let credentialLookup { proxy.credentials = credentialLookup(proxy) }
        return proxy
    }

    /// Why a proxy URL cannot be used.
    struct MalformedProxyURL: Error {
        let reason: String
    }

    /// Reads `[scheme://][user[:password]@]host[:port][/]` as curl does.
    static func proxy(fromURL text: String) throws(MalformedProxyURL) -> TransportProxy {
        let hasScheme = text.range(of: "://") != nil
        guard let components = URLComponents(string: hasScheme ? text : "http://" + text), let scheme = components.scheme?.lowercased()
        else { throw MalformedProxyURL(reason: "\(text) is not a proxy URL") }
        let kind: TransportProxy.Kind
        switch scheme {
        case "http": kind = .http
        case "socks5": kind = .socks5(resolvesRemotely: false)
        case "socks5h": kind = .socks5(resolvesRemotely: true)
        default: throw MalformedProxyURL(reason: "\(scheme) proxies are not supported (http, socks5 and socks5h are)")
        }
        guard let host = components.host, !host.isEmpty else { throw MalformedProxyURL(reason: "\(text) names no host") }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw MalformedProxyURL(reason: "\(text) has a path or query")
        }
        if let port = components.port, !(1...65535).contains(port) { throw MalformedProxyURL(reason: "\(text) has no valid port") }
        // `user` and `password` are decoded once, by URLComponents.
        let credentials = components.user.map { TransportProxy.Credentials(user: $0, password: components.password ?? "") }
        return TransportProxy(kind: kind, host: unbracketed(host), port: components.port ?? 1080, credentials: credentials)
    }

    static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    private static func string(_ value: Any) -> String? {
        (value as? String) ?? (value as? NSString).map { $0 as String }
    }

    private static func integer(_ value: Any) -> Int? {
        switch value {
        case let number as Int: number
        case let number as NSNumber: number.intValue
        case let text as String: Int(text)
        default: nil
        }
    }

    private static func bool(_ value: Any) -> Bool? {
        switch value {
        case let flag as Bool: flag
        case let number as Int: number != 0
        case let number as NSNumber: number.boolValue
        case let text as String: ["1", "true", "yes"].contains(text.lowercased())
        default: nil
        }
    }
}
