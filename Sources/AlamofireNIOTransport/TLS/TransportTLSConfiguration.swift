public import NIOSSL

/// How the transport speaks TLS.
public struct TransportTLSConfiguration: Sendable {
    /// The oldest TLS version to accept.
    public var minimumVersion: TLSVersion = .tlsv12
    /// The newest TLS version to offer; nil offers the newest NIOSSL supports (TLS 1.3). One below
    /// ``minimumVersion`` makes the settings unusable: every `https` request then fails with
    /// `.secureConnectionFailed`.
    public var maximumVersion: TLSVersion?
    /// Whether the system's root certificates are trusted by the default evaluation.
    public var trustsSystemRoots = true
    /// More roots the default evaluation trusts, DER-encoded.
    public var additionalTrustRoots: [[UInt8]] = []
    /// The certificate chain and key to present when a server asks for one, unless the request
    /// carries its own (``TransportRequest/clientIdentity``).
    public var clientIdentity: TransportClientIdentity?
    /// Decides whether to trust each server; nil performs ``ServerTrustChallenge/evaluateDefault(anchors:validateHost:)``.
    public var serverTrustEvaluator: ServerTrustEvaluator?

    /// The default: TLS 1.2 or later, the system's roots, no client identity.
    public init() {}
}

extension TLSVersion {
    /// The version's order, oldest first.
    var rank: Int {
        switch self {
        case .tlsv1: 0
        case .tlsv11: 1
        case .tlsv12: 2
        case .tlsv13: 3
        }
    }
}
