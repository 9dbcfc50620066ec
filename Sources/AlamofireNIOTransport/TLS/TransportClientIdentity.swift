import Foundation
public import NIOSSL

/// A client certificate chain and its private key, presented when a server asks for one (mutual TLS).
///
/// Connections made with an identity are pooled apart from those made without it, or with another
/// identity: a request never rides on a connection that authenticated as someone else. Identities
/// compare by object, so make one per identity and reuse it.
public final class TransportClientIdentity: Sendable, Hashable {
    /// The certificates to present, the client's own first.
    public let certificateChain: [NIOSSLCertificate]
    /// The private key of the first certificate.
    public let privateKey: NIOSSLPrivateKey

    /// - Parameters:
    ///   - certificateChain: the certificates to present, the client's own first; not empty.
    ///   - privateKey: the private key of the first certificate.
    public init(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }

    /// Reads certificates and a key, each PEM or DER (see ``CertificateEncoding/isPEM(_:)``).
    /// - Parameters:
    ///   - certificates: the certificates: one PEM document holding one or more, or DER blobs.
    ///   - privateKey: the key, PEM or PKCS#8/SEC1/PKCS#1 DER.
    /// - Throws: NIOSSL's error when a certificate or the key cannot be read.
    public convenience init(certificates: [[UInt8]], privateKey: [UInt8]) throws {
        let chain = try certificates.flatMap { bytes in
            CertificateEncoding.isPEM(bytes)
                ? try NIOSSLCertificate.fromPEMBytes(bytes) : [try NIOSSLCertificate(bytes: bytes, format: .der)]
        }
        guard !chain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        self.init(
            certificateChain: chain,
            privateKey: try NIOSSLPrivateKey(bytes: privateKey, format: CertificateEncoding.isPEM(privateKey) ? .pem : .der))
    }

    /// Reads a PKCS#12 archive (`.p12`, `.pfx`).
    /// - Parameters:
    ///   - pkcs12: the archive's bytes.
    ///   - password: its password; nil or empty for none.
    /// - Throws: NIOSSL's error when the archive cannot be opened (a wrong password, say).
    public convenience init(pkcs12: [UInt8], password: String?) throws {
        let bundle = try NIOSSLPKCS12Bundle(buffer: pkcs12, passphrase: Array((password ?? "").utf8))
        guard !bundle.certificateChain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        self.init(certificateChain: bundle.certificateChain, privateKey: bundle.privateKey)
    }

    public static func == (lhs: TransportClientIdentity, rhs: TransportClientIdentity) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
