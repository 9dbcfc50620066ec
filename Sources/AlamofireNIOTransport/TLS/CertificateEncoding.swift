import SwiftASN1
public import X509

/// Certificates and keys as files hold them: PEM text (told by a `-----BEGIN ` line) or DER bytes.
public enum CertificateEncoding {
    /// Whether `bytes` are PEM text: they hold a `-----BEGIN ` line, and do not open as DER does
    /// with a `SEQUENCE` of long-form length (any certificate; a short DER key, such as an Ed25519
    /// one, is told apart by the missing line). Text may come before the first block, as in a
    /// distribution's commented bundle, `openssl x509 -text` output or a PKCS#12 export's
    /// `Bag Attributes`.
    public static func isPEM(_ bytes: some Collection<UInt8>) -> Bool {
        var opening = bytes.makeIterator()
        if opening.next() == 0x30, let length = opening.next(), length & 0x80 != 0 { return false }
        return bytes.firstRange(of: "-----BEGIN ".utf8) != nil
    }

    /// The certificates in PEM bytes (every `CERTIFICATE` block; other blocks are passed over) or DER
    /// bytes (one certificate).
    /// - Parameters:
    ///   - bytes: the encoded certificates.
    ///   - skippingUnreadable: whether a block that cannot be read is passed over instead of failing
    ///     the whole (for bundles of many roots).
    /// - Throws: swift-certificates' or SwiftASN1's error when the bytes cannot be read.
    public static func certificates(in bytes: [UInt8], skippingUnreadable: Bool = false) throws -> [Certificate] {
        guard isPEM(bytes) else { return [try Certificate(derEncoded: bytes)] }
        let documents = try PEMDocument.parseMultiple(pemString: String(decoding: bytes, as: UTF8.self))
            .filter { $0.discriminator == "CERTIFICATE" }
        if skippingUnreadable { return documents.compactMap { try? Certificate(pemDocument: $0) } }
        return try documents.map { try Certificate(pemDocument: $0) }
    }
}
