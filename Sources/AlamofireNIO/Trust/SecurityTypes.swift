import AlamofireNIOLoading
public import Foundation
import SwiftASN1
public import X509

// Linux has no Security framework. These types take the places of `SecCertificate`, `SecKey` and
// `SecPolicy` under the same names, so trust code written for Alamofire compiles unchanged; each
// wraps swift-certificates' types, which do the parsing and the checks.

/// An X.509 certificate: Linux's stand-in for Security's `SecCertificate`.
///
/// Two certificates are equal when their DER encodings are.
public final class SecCertificate: Hashable, Sendable, CustomStringConvertible {
    /// The parsed certificate.
    public let certificate: Certificate
    /// The certificate, DER-encoded.
    public let data: Data

    /// Reads one DER-encoded certificate.
    /// - Parameter derEncoded: the certificate's bytes.
    /// - Throws: swift-certificates' error when the bytes are not a certificate.
    public convenience init(derEncoded: Data) throws {
        self.init(certificate: try Certificate(derEncoded: Array(derEncoded)), data: derEncoded)
    }

    /// Wraps a parsed certificate.
    /// - Parameter certificate: the certificate.
    /// - Throws: swift-certificates' error when it cannot be serialized.
    public convenience init(certificate: Certificate) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.init(certificate: certificate, data: Data(serializer.serializedBytes))
    }

    private init(certificate: Certificate, data: Data) {
        self.certificate = certificate
        self.data = data
    }

    /// Every certificate in PEM text (`-----BEGIN CERTIFICATE-----` blocks; other blocks are skipped).
    /// - Parameter pemEncoded: the text.
    /// - Throws: swift-certificates' error when a certificate block cannot be read.
    public static func certificates(pemEncoded: String) throws -> [SecCertificate] {
        try certificates(in: Data(pemEncoded.utf8))
    }

    /// The certificates in a file: PEM (any number) or DER (one).
    /// - Parameter url: the file.
    /// - Throws: the read error, or swift-certificates' error when the contents are not certificates.
    public static func certificates(contentsOf url: URL) throws -> [SecCertificate] {
        try certificates(in: Data(contentsOf: url))
    }

    /// The certificates in PEM (any number) or DER (one) bytes.
    static func certificates(in data: Data) throws -> [SecCertificate] {
        try CertificateFiles.certificates(in: Array(data)).map(SecCertificate.init(certificate:))
    }

    /// The certificate's public key.
    public var publicKey: SecKey { SecKey(certificate.publicKey) }

    /// The certificate, by its subject.
    public var description: String { "SecCertificate(\(certificate.subject))" }

    /// Whether both certificates have the same DER encoding.
    public static func == (lhs: SecCertificate, rhs: SecCertificate) -> Bool { lhs.data == rhs.data }

    /// Hashes the certificate's DER encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(data) }
}

/// A public key: Linux's stand-in for Security's `SecKey`, as Alamofire uses it (for public-key
/// pinning). Two keys are equal when their SubjectPublicKeyInfo encodings are.
public final class SecKey: Hashable, Sendable, CustomStringConvertible {
    /// The key.
    public let publicKey: Certificate.PublicKey

    /// Creates a key from swift-certificates' public key.
    ///
    /// - Parameter publicKey: the key.
    public init(_ publicKey: Certificate.PublicKey) {
        self.publicKey = publicKey
    }

    /// Reads a key from its DER-encoded SubjectPublicKeyInfo.
    /// - Parameter subjectPublicKeyInfo: the encoded key.
    /// - Throws: swift-certificates' error when the bytes are not a supported key.
    public convenience init(subjectPublicKeyInfo: Data) throws {
        self.init(try Certificate.PublicKey(derEncoded: Array(subjectPublicKeyInfo)))
    }

    /// The key's DER-encoded SubjectPublicKeyInfo.
    public var subjectPublicKeyInfo: Data { Data(publicKey.subjectPublicKeyInfoBytes) }

    /// The key, as text.
    public var description: String { "SecKey(\(publicKey))" }

    /// Whether both are the same public key.
    public static func == (lhs: SecKey, rhs: SecKey) -> Bool { lhs.publicKey == rhs.publicKey }

    /// Hashes the public key.
    public func hash(into hasher: inout Hasher) { hasher.combine(publicKey) }
}

/// What a trust evaluation checks: Linux's stand-in for Security's `SecPolicy`. Make them with
/// `SecPolicy.af.default`, `.af.hostname(_:)` and `.af.revocation(options:)`.
public final class SecPolicy: Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// A TLS server's chain; with a host name, the leaf must name it.
        case ssl(hostname: String?)
        /// The chain, and the revocation status of its certificates.
        case revocation(RevocationTrustEvaluator.Options)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// The policy, as text: what it checks.
    public var description: String {
        switch kind {
        case .ssl(let hostname): "SecPolicy(SSL\(hostname.map { ", \($0)" } ?? ""))"
        case .revocation(let options): "SecPolicy(revocation, \(options.rawValue))"
        }
    }
}

extension SecPolicy: AlamofireExtended {}
extension AlamofireExtension where ExtendedType == SecPolicy {
    /// A policy that validates a server's certificate chain but not its name.
    public static var `default`: SecPolicy { SecPolicy(.ssl(hostname: nil)) }

    /// A policy that validates a server's certificate chain and that it names `hostname`.
    /// - Parameter hostname: the host name (or IP address) to match.
    public static func hostname(_ hostname: String) -> SecPolicy { SecPolicy(.ssl(hostname: hostname)) }

    /// A policy that checks the revocation status of a chain's certificates.
    /// - Parameter options: how to check.
    /// - Throws: never on Linux; kept for Alamofire's signature.
    public static func revocation(options: RevocationTrustEvaluator.Options) throws -> SecPolicy {
        SecPolicy(.revocation(options))
    }
}

/// A client certificate chain with its private key: Linux's stand-in for Security's `SecIdentity`,
/// presented when a server asks for a client certificate (mutual TLS).
///
/// Give one to a whole session (`Session(clientIdentity:)`) or to one request
/// (`request.authenticate(with:)`). Connections are pooled per identity, so make one per identity
/// and reuse it.
public final class SecIdentity: Sendable {
    let identity: ClientCertificateIdentity

    /// Reads a certificate chain and its private key, each PEM or DER.
    /// - Parameters:
    ///   - certificateChain: the client's certificate first, then any intermediates; PEM text may hold several.
    ///   - privateKey: the first certificate's private key (PEM, or PKCS#8, SEC1 or PKCS#1 DER).
    /// - Throws: NIOSSL's error when they cannot be read.
    public init(certificateChain: [Data], privateKey: Data) throws {
        identity = try ClientCertificateIdentity(certificates: certificateChain.map { Array($0) }, privateKey: Array(privateKey))
    }

    /// Reads a PKCS#12 archive (`.p12` or `.pfx`), as `SecPKCS12Import` does.
    /// - Parameters:
    ///   - pkcs12Data: the archive.
    ///   - password: its password; nil for none.
    /// - Throws: NIOSSL's error when the archive cannot be opened (a wrong password, say).
    public init(pkcs12Data: Data, password: String?) throws {
        identity = try ClientCertificateIdentity(pkcs12: Array(pkcs12Data), password: password)
    }

    /// Reads the chain and key from files (PEM or DER each).
    /// - Parameters:
    ///   - certificateChainFile: the certificates' file.
    ///   - privateKeyFile: the key's file.
    /// - Throws: the read error, or as ``init(certificateChain:privateKey:)``.
    public convenience init(certificateChainFile: URL, privateKeyFile: URL) throws {
        try self.init(certificateChain: [Data(contentsOf: certificateChainFile)], privateKey: Data(contentsOf: privateKeyFile))
    }
}

#if !canImport(Darwin)
/// Linux's stand-in for `CFData`, so `data as CFData` compiles as it does with the Security framework.
public typealias CFData = NSData
/// Linux's stand-in for `CFAllocator`: the Security functions below take `nil` for it.
public typealias CFAllocator = NSObject
#endif

/// Reads a DER-encoded certificate, as Security's function of that name does; nil when the data is
/// not a certificate.
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    try? SecCertificate(derEncoded: Data(referencing: data))
}

/// The certificate's DER encoding, as Security's function of that name returns it.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(data: certificate.data)
}

/// The certificate's public key, as Security's function of that name returns it.
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    certificate.publicKey
}

/// Security's result code type (`Int32`, as on Apple platforms), for the trust failure reasons that carry one.
public typealias OSStatus = Int32
