public import NIOSSL

/// How the transport speaks TLS.
public struct TransportTLSConfiguration: Sendable {
    /// The oldest TLS version to accept.
    public var minimumVersion: TLSVersion = .tlsv12
    /// Whether the system's root certificates are trusted by the default evaluation.
    public var trustsSystemRoots = true
    /// More roots the default evaluation trusts, DER-encoded.
    public var additionalTrustRoots: [[UInt8]] = []
    /// A certificate chain (DER, leaf first) and its private key (PEM or DER) to present when a
    /// server asks for one.
    public var clientIdentity: (certificateChain: [[UInt8]], privateKey: [UInt8])?
    /// Decides whether to trust each server; nil performs ``ServerTrustChallenge/evaluateDefault(anchors:validateHost:)``.
    public var serverTrustEvaluator: ServerTrustEvaluator?

    /// The default: TLS 1.2 or later, the system's roots, no client identity.
    public init() {}
}
