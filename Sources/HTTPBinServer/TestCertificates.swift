import Crypto
public import Foundation
import SwiftASN1
import X509

/// The TLS endpoints the server can open, each presenting a different certificate.
public enum TLSVariant: String, CaseIterable, Sendable {
    /// Signed by the test CA, valid now, for `localhost` and `127.0.0.1`.
    case valid
    /// Signed by the test CA, but its validity ended yesterday.
    case expired
    /// Signed by the test CA, valid now, but only for `wrong.host.invalid`.
    case wrongHost
    /// A leaf that signed itself: no CA vouches for it.
    case selfSigned
    /// Signed by a second CA that clients are never told to trust.
    case unknownCA
    /// Like `valid`, but the server demands a client certificate signed by the test CA.
    case mutualTLS
}

/// A certificate with its private key, in the forms TLS libraries and tests want.
public struct CertificateIdentity: Sendable {
    /// The certificate, DER-encoded.
    public let certificateDER: [UInt8]
    /// The certificate, PEM-encoded.
    public let certificatePEM: String
    /// The private key (P-256), PEM-encoded PKCS#8.
    public let privateKeyPEM: String
    /// The SHA-256 digest of the certificate's DER-encoded SubjectPublicKeyInfo, for pinning.
    public let publicKeySHA256: [UInt8]

    fileprivate let certificate: Certificate
    fileprivate let privateKey: P256.Signing.PrivateKey
}

/// A throwaway public key infrastructure made for one server run: a test CA, the leaf certificate of
/// every ``TLSVariant``, an unknown CA, and a client identity for mutual TLS.
public struct TestCertificates: Sendable {
    /// The CA clients should trust to accept the `valid` and `mutualTLS` endpoints.
    public let certificateAuthority: CertificateIdentity
    /// A CA that no client trusts; it signed the `unknownCA` leaf.
    public let unknownAuthority: CertificateIdentity
    /// A client certificate signed by ``certificateAuthority``, accepted by the `mutualTLS` endpoint.
    public let client: CertificateIdentity
    private let valid: CertificateIdentity
    private let expired: CertificateIdentity
    private let wrongHost: CertificateIdentity
    private let selfSigned: CertificateIdentity
    private let signedByUnknownCA: CertificateIdentity

    /// The certificate the server presents on the given endpoint.
    public func leaf(for variant: TLSVariant) -> CertificateIdentity {
        switch variant {
        case .valid, .mutualTLS: valid
        case .expired: expired
        case .wrongHost: wrongHost
        case .selfSigned: selfSigned
        case .unknownCA: signedByUnknownCA
        }
    }

    /// Generates a new set of keys and certificates.
    /// - Parameter now: the moment validity periods are computed from.
    public static func generate(now: Date = Date()) throws -> TestCertificates {
        let hour: TimeInterval = 3600
        let month: TimeInterval = 30 * 24 * hour
        let ca = try makeAuthority(name: "AlamofireNIO Test CA", now: now)
        let unknown = try makeAuthority(name: "AlamofireNIO Unknown CA", now: now)
        let loopback: [GeneralName] = [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
        let current = (from: now - hour, to: now + month)
        return TestCertificates(
            certificateAuthority: ca,
            unknownAuthority: unknown,
            client: try makeLeaf(name: "AlamofireNIO Test Client", names: [], validity: current, issuer: ca, serverAuth: false),
            valid: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: ca),
            expired: try makeLeaf(name: "localhost", names: loopback, validity: (now - month, now - 24 * hour), issuer: ca),
            wrongHost: try makeLeaf(
                name: "wrong.host.invalid", names: [.dnsName("wrong.host.invalid")], validity: current, issuer: ca),
            selfSigned: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: nil),
            signedByUnknownCA: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: unknown))
    }

    private static func makeAuthority(name: String, now: Date) throws -> CertificateIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 24 * 3600, notValidAfter: now + 365 * 24 * 3600,
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(key))
        return try identity(certificate, key)
    }

    /// Makes an end-entity certificate; a nil `issuer` makes it sign itself.
    private static func makeLeaf(
        name: String, names: [GeneralName], validity: (from: Date, to: Date), issuer: CertificateIdentity?,
        serverAuth: Bool = true
    ) throws -> CertificateIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([serverAuth ? .serverAuth : .clientAuth])
            if !names.isEmpty {
                SubjectAlternativeNames(names)
            }
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: validity.from, notValidAfter: validity.to,
            issuer: issuer?.certificate.subject ?? subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(issuer?.privateKey ?? key))
        return try identity(certificate, key)
    }

    private static func identity(_ certificate: Certificate, _ key: P256.Signing.PrivateKey) throws -> CertificateIdentity {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        var keySerializer = DER.Serializer()
        try keySerializer.serialize(certificate.publicKey)
        return CertificateIdentity(
            certificateDER: serializer.serializedBytes,
            certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation,
            publicKeySHA256: Array(SHA256.hash(data: keySerializer.serializedBytes)),
            certificate: certificate,
            privateKey: key)
    }
}
