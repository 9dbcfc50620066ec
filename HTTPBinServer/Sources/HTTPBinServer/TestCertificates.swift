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
    /// Like `valid`, and for the same private key, but a different certificate (its own serial number):
    /// pinning `valid`'s public key accepts it, pinning `valid`'s certificate rejects it.
    case reissued
    /// Like `valid`, with its own key, naming the OCSP responder the certificates were generated for;
    /// meant to be listed as good by that responder.
    case ocspGood
    /// Like `ocspGood`, but meant to be listed as revoked by the OCSP responder.
    case ocspRevoked
    /// Like `ocspGood`, but meant to be left out of the OCSP responder's list, so it answers "unknown".
    case ocspUnknown
    /// Signed by the test CA, valid now, for `localhost` and `127.0.0.1`, but its extended key usage
    /// is `clientAuth` only: not a certificate for a server.
    case clientAuthOnly
    /// A `serverAuth` leaf for `localhost` and `127.0.0.1`, presented with the intermediate CA that
    /// signed it, whose extended key usage is `clientAuth` only (the test CA signed the intermediate).
    case clientAuthIntermediate
    /// Like `valid`, but the listener speaks TLS 1.2 at most.
    case tls12Only
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
    /// The certificate's serial number in uppercase hexadecimal, an even number of digits without
    /// leading zero bytes, as openssl writes serial numbers in a CA database (`index.txt`).
    public let serialNumberHex: String
    /// The private key (P-256), DER-encoded PKCS#8.
    public let privateKeyDER: [UInt8]

    fileprivate let certificate: Certificate
    fileprivate let privateKey: P256.Signing.PrivateKey
}

/// A throwaway public key infrastructure made for one server run: a test CA, the leaf certificate of
/// every ``TLSVariant``, an unknown CA, and a client identity for mutual TLS.
///
/// The `ocspGood`, `ocspRevoked` and `ocspUnknown` leaves name an OCSP responder (in an
/// AuthorityInformationAccess extension) when generated with one; which answer each gets is up to
/// the responder the tests run.
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
    private let reissued: CertificateIdentity
    private let ocspGood: CertificateIdentity
    private let ocspRevoked: CertificateIdentity
    private let ocspUnknown: CertificateIdentity
    private let clientAuthOnly: CertificateIdentity
    private let underClientAuthIntermediate: CertificateIdentity
    /// The intermediate CA, limited to `clientAuth`, that signed the `clientAuthIntermediate` leaf.
    public let clientAuthIntermediateAuthority: CertificateIdentity

    /// The certificates the server presents on the given endpoint after its leaf: the intermediates.
    public func intermediates(for variant: TLSVariant) -> [CertificateIdentity] {
        variant == .clientAuthIntermediate ? [clientAuthIntermediateAuthority] : []
    }

    /// The certificate the server presents on the given endpoint.
    public func leaf(for variant: TLSVariant) -> CertificateIdentity {
        switch variant {
        case .valid, .mutualTLS, .tls12Only: valid
        case .clientAuthOnly: clientAuthOnly
        case .clientAuthIntermediate: underClientAuthIntermediate
        case .expired: expired
        case .wrongHost: wrongHost
        case .selfSigned: selfSigned
        case .unknownCA: signedByUnknownCA
        case .reissued: reissued
        case .ocspGood: ocspGood
        case .ocspRevoked: ocspRevoked
        case .ocspUnknown: ocspUnknown
        }
    }

    /// Generates a new set of keys and certificates.
    /// - Parameters:
    ///   - now: the moment validity periods are computed from.
    ///   - ocspResponderURL: the OCSP responder the `ocspGood`, `ocspRevoked` and `ocspUnknown` leaves
    ///     name in their AuthorityInformationAccess extension; nil leaves that extension out.
    public static func generate(now: Date = Date(), ocspResponderURL: URL? = nil) throws -> TestCertificates {
        let hour: TimeInterval = 3600
        let month: TimeInterval = 30 * 24 * hour
        let ca = try makeAuthority(name: "AlamofireNIO Test CA", now: now)
        let unknown = try makeAuthority(name: "AlamofireNIO Unknown CA", now: now)
        let clientIntermediate = try makeAuthority(
            name: "AlamofireNIO Client-only Intermediate CA", now: now, issuer: ca, usages: [.clientAuth])
        let loopback: [GeneralName] = [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
        let current = (from: now - hour, to: now + month)
        let valid = try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: ca)
        func ocspLeaf() throws -> CertificateIdentity {
            try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: ca, ocspResponderURL: ocspResponderURL)
        }
        return TestCertificates(
            certificateAuthority: ca,
            unknownAuthority: unknown,
            client: try makeLeaf(name: "AlamofireNIO Test Client", names: [], validity: current, issuer: ca, serverAuth: false),
            valid: valid,
            expired: try makeLeaf(name: "localhost", names: loopback, validity: (now - month, now - 24 * hour), issuer: ca),
            wrongHost: try makeLeaf(
                name: "wrong.host.invalid", names: [.dnsName("wrong.host.invalid")], validity: current, issuer: ca),
            selfSigned: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: nil),
            signedByUnknownCA: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: unknown),
            reissued: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: ca, key: valid.privateKey),
            ocspGood: try ocspLeaf(),
            ocspRevoked: try ocspLeaf(),
            ocspUnknown: try ocspLeaf(),
            clientAuthOnly: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: ca, serverAuth: false),
            underClientAuthIntermediate: try makeLeaf(name: "localhost", names: loopback, validity: current, issuer: clientIntermediate),
            clientAuthIntermediateAuthority: clientIntermediate)
    }

    /// Makes a CA: a root (one intermediate may sit below it), or, with an `issuer`, an intermediate
    /// limited to `usages` when they are given.
    private static func makeAuthority(
        name: String, now: Date, issuer: CertificateIdentity? = nil, usages: [ExtendedKeyUsage.Usage] = []
    ) throws -> CertificateIdentity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: issuer == nil ? 1 : 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            if !usages.isEmpty {
                try ExtendedKeyUsage(usages)
            }
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 24 * 3600, notValidAfter: now + 365 * 24 * 3600,
            issuer: issuer?.certificate.subject ?? subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions, issuerPrivateKey: .init(issuer?.privateKey ?? key))
        return try identity(certificate, key)
    }

    /// Makes an end-entity certificate for `key` (a new one by default); a nil `issuer` makes it sign
    /// itself, and an `ocspResponderURL` is named in an AuthorityInformationAccess extension.
    private static func makeLeaf(
        name: String, names: [GeneralName], validity: (from: Date, to: Date), issuer: CertificateIdentity?,
        serverAuth: Bool = true, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), ocspResponderURL: URL? = nil
    ) throws -> CertificateIdentity {
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            // Critical, as some CAs mark it: a client must understand it wherever it checks a chain.
            Critical(try ExtendedKeyUsage([serverAuth ? .serverAuth : .clientAuth]))
            if !names.isEmpty {
                SubjectAlternativeNames(names)
            }
            if let ocspResponderURL {
                AuthorityInformationAccess([
                    AuthorityInformationAccess.AccessDescription(
                        method: .ocspServer, location: .uniformResourceIdentifier(ocspResponderURL.absoluteString))
                ])
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
            serialNumberHex: openSSLHex(certificate.serialNumber),
            privateKeyDER: Array(key.derRepresentation),
            certificate: certificate,
            privateKey: key)
    }

    /// A serial number as openssl writes it: uppercase hexadecimal, two digits a byte, no leading zero
    /// bytes (the one DER adds to keep a high first bit positive), `00` for zero.
    private static func openSSLHex(_ serialNumber: Certificate.SerialNumber) -> String {
        let significant = serialNumber.bytes.drop { $0 == 0 }
        guard !significant.isEmpty else { return "00" }
        let digits = Array("0123456789ABCDEF")
        return String(significant.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
