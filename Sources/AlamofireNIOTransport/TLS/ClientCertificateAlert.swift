import Foundation
import NIOSSL

/// Reads a TLS alert from the server about the client's certificate out of NIOSSL's errors, so that
/// a server that wants a certificate (or refused the one offered) is reported as URLSession reports
/// it, not as a dropped connection.
///
/// In TLS 1.3 the server judges the client's certificate after the client considers the handshake
/// done, so the alert can arrive with the first response instead of during the handshake; both
/// paths read it here.
enum ClientCertificateAlert {
    /// Alerts a server sends about the certificate a client presented (BoringSSL's names for them).
    private static let rejectionAlerts = [
        "ALERT_BAD_CERTIFICATE", "ALERT_UNSUPPORTED_CERTIFICATE", "ALERT_CERTIFICATE_REVOKED", "ALERT_CERTIFICATE_EXPIRED",
        "ALERT_CERTIFICATE_UNKNOWN", "ALERT_UNKNOWN_CA", "ALERT_ACCESS_DENIED",
    ]

    /// The error to report for `error`, if it carries an alert about the client's certificate.
    /// - Parameters:
    ///   - error: what NIOSSL raised.
    ///   - presentedCertificate: whether the client offered a certificate; a refusal of none means one is required.
    static func transportError(for error: (any Error)?, presentedCertificate: Bool = true) -> TransportError? {
        guard let error, error is NIOSSLError || error is BoringSSLError else { return nil }
        // BoringSSL's reason codes end with the alert's name (`...:TLSV1_ALERT_CERTIFICATE_REQUIRED at ...`).
        let text = String(describing: error)
        let names = text.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "]" || $0 == ")" })
        func named(_ alert: String) -> Bool { names.contains { $0.hasSuffix("_" + alert) && $0.contains("ALERT_") } }
        if named("ALERT_CERTIFICATE_REQUIRED") || names.contains("TLSV1_CERTIFICATE_REQUIRED") {
            return TransportError(.clientCertificateRequired, "the server requires a client certificate", underlyingError: error)
        }
        guard rejectionAlerts.contains(where: named) else { return nil }
        if !presentedCertificate {
            return TransportError(.clientCertificateRequired, "the server requires a client certificate", underlyingError: error)
        }
        return TransportError(.clientCertificateRejected, "the server rejected the client certificate", underlyingError: error)
    }
}
