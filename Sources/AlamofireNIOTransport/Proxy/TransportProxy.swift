import Foundation

/// A proxy that connections to an origin go through.
///
/// - An HTTP proxy forwards `http` requests, sent to it in absolute form, and tunnels `https`
///   connections with `CONNECT`; TLS, and HTTP/2 where the origin offers it, run inside the tunnel,
///   with the origin's name for SNI and for the server trust evaluation.
/// - A SOCKS5 proxy carries the connection for both schemes; `socks5h` has the proxy resolve the
///   origin's name, `socks5` resolves it here and sends the address.
public struct TransportProxy: Sendable, Hashable, CustomStringConvertible {
    /// How the proxy is spoken to.
    public enum Kind: Sendable, Hashable {
        /// An HTTP proxy: absolute-form requests for `http`, `CONNECT` tunnels for `https`.
        case http
        /// A SOCKS5 proxy; `resolvesRemotely` (`socks5h`) sends the origin's name instead of an address.
        case socks5(resolvesRemotely: Bool)
    }

    /// A user name and password for the proxy (Basic `Proxy-Authorization` for an HTTP proxy).
    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// The `Proxy-Authorization` value for Basic authentication.
        var basicAuthorization: String {
            "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }

    public var kind: Kind
    public var host: String
    public var port: Int
    /// Sent with every `CONNECT` and forwarded request (SOCKS5 proxies are used without authentication).
    public var credentials: Credentials?

    /// - Parameters:
    ///   - kind: HTTP or SOCKS5.
    ///   - host: the proxy's host name or address (IPv6 without brackets).
    ///   - port: the proxy's port.
    ///   - credentials: the user name and password to present, if any.
    public init(kind: Kind, host: String, port: Int, credentials: Credentials? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// Whether this is an HTTP proxy.
    var isHTTP: Bool { kind == .http }

    /// The proxy's URL, without its credentials.
    public var description: String {
        let scheme =
            switch kind {
            case .http: "http"
            case .socks5(let remote): remote ? "socks5h" : "socks5"
            }
        let name = host.bracketedIfIPv6
        return "\(scheme)://\(name):\(port)"
    }
}
