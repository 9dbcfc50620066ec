import SwiftASN1
public import X509

/// Certificates and keys as files hold them: PEM text (told by its `-----BEGIN` line) or DER bytes.
public enum CertificateEncoding {
    /// Whether `bytes` are PEM text: their first non-blank characters open a PEM block.
    public static func isPEM(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.drop(while: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }).starts(with: "-----BEGIN".utf8)
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
