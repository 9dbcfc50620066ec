import AlamofireNIOLoading
import Foundation
import NIOSSL

#if canImport(FoundationNetworking)
public import FoundationNetworking

/// A TLS (or DTLS) protocol version, as Security's `tls_protocol_version_t` names it on Apple
/// platforms (FoundationNetworking has none), for `URLSessionConfiguration`'s TLS version limits.
public enum tls_protocol_version_t: UInt16, Sendable, CaseIterable {
    /// TLS 1.0.
    case TLSv10 = 0x0301
    /// TLS 1.1.
    case TLSv11 = 0x0302
    /// TLS 1.2.
    case TLSv12 = 0x0303
    /// TLS 1.3.
    case TLSv13 = 0x0304
    /// DTLS 1.0, which an HTTP connection counts as TLS 1.1 (the version it derives from).
    case DTLSv10 = 0xfeff
    /// DTLS 1.2, which an HTTP connection counts as TLS 1.2.
    case DTLSv12 = 0xfefd

    /// The TLS version NIOSSL negotiates for this one.
    var nioSSLVersion: TLSVersion {
        switch self {
        case .TLSv10: .tlsv1
        case .TLSv11, .DTLSv10: .tlsv11
        case .TLSv12, .DTLSv12: .tlsv12
        case .TLSv13: .tlsv13
        }
    }
}

extension URLSessionConfiguration {
    /// The oldest TLS version a session's connections accept, as on Apple platforms. `.TLSv12` by
    /// default: AlamofireNIO never negotiates older unless asked. A server that offers nothing this
    /// recent fails the request with `URLError(.secureConnectionFailed)`.
    ///
    /// FoundationNetworking has no such property: AlamofireNIO keeps it in the configuration's
    /// `connectionProxyDictionary` (the only field URLSession's copies keep), under a key of its
    /// own that the proxy settings ignore. Set it after assigning a whole `connectionProxyDictionary`,
    /// which would replace it.
    public var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t {
        get { ConfigurationExtras.value(.minimumTLSVersion, in: self).flatMap(tls_protocol_version_t.init) ?? .TLSv12 }
        set { ConfigurationExtras.set(newValue.rawValue, for: .minimumTLSVersion, in: self) }
    }

    /// The newest TLS version a session's connections offer, as on Apple platforms. `.TLSv13` by
    /// default. Kept as ``tlsMinimumSupportedProtocolVersion`` is; a maximum below the minimum makes
    /// every `https` request fail with `URLError(.secureConnectionFailed)`.
    public var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t {
        get { ConfigurationExtras.value(.maximumTLSVersion, in: self).flatMap(tls_protocol_version_t.init) ?? .TLSv13 }
        set { ConfigurationExtras.set(newValue.rawValue, for: .maximumTLSVersion, in: self) }
    }
}
#endif
