import AlamofireNIOLoading
import AlamofireNIOTransport
public import Foundation
import X509

/// An evaluator which Uses the default and revoked server trust evaluations allowing you to control whether to validate
/// the host provided by the challenge as well as specify the revocation flags for testing for revoked certificates.
/// Applications are encouraged to always validate the host in production environments to guarantee the validity of
/// the server's certificate chain.
///
/// On Linux revocation is checked with OCSP: each certificate of the chain that names an OCSP responder
/// (in its Authority Information Access) is looked up there, over plain HTTP as RFC 6960 has it, and the
/// signed answer verified. A revoked certificate always fails. Whether an answer that says nothing (a
/// responder that cannot be reached, status "unknown") fails too is `.requirePositiveResponse`'s choice,
/// as with Security; a certificate that names no responder passes either way (swift-certificates' OCSP
/// policy). CRLs and stapled OCSP responses are not consulted (see ``Options``).
public final class RevocationTrustEvaluator: ServerTrustEvaluating {
    /// Represents the options to be use when evaluating the status of a certificate. The flags keep
    /// Security's values.
    public struct Options: OptionSet, Sendable, Hashable {
        /// Perform revocation checking using the CRL (Certification Revocation List) method. Linux has no
        /// CRL support: with this method alone, revocation cannot be checked (a failure only with
        /// `.requirePositiveResponse`).
        public static let crl = Options(rawValue: 1 << 1)
        /// Consult only locally cached replies; do not use network access. Linux keeps no replies and
        /// NIOSSL does not surface stapled ones, so nothing is consulted.
        public static let networkAccessDisabled = Options(rawValue: 1 << 4)
        /// Perform revocation checking using OCSP (Online Certificate Status Protocol).
        public static let ocsp = Options(rawValue: 1 << 0)
        /// Prefer CRL revocation checking over OCSP; by default, OCSP is preferred.
        public static let preferCRL = Options(rawValue: 1 << 2)
        /// Require a positive response to pass the policy. If the flag is not set, revocation checking is done on a
        /// "best attempt" basis, where failure to reach the server is not considered fatal.
        public static let requirePositiveResponse = Options(rawValue: 1 << 3)
        /// Perform either OCSP or CRL checking. The checking is performed according to the method(s) specified in the
        /// certificate and the value of `preferCRL`.
        public static let any: Options = [.ocsp, .crl]

        /// The raw value of the option.
        public let rawValue: UInt

        /// Creates an `Options` value with the given flags.
        ///
        /// - Parameter rawValue: The flags to initialize with.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }
    }

    private let performDefaultValidation: Bool
    private let validateHost: Bool
    private let options: Options

    /// Creates a `RevocationTrustEvaluator` using the provided parameters.
    ///
    /// - Note: Default and host validation will fail when using this evaluator with self-signed certificates. Use
    ///         `PinnedCertificatesTrustEvaluator` if you need to use self-signed certificates.
    ///
    /// - Parameters:
    ///   - performDefaultValidation: Determines whether default validation should be performed in addition to
    ///                               evaluating the pinned certificates. `true` by default.
    ///   - validateHost:             Determines whether or not the evaluator should validate the host, in addition to
    ///                               performing the default evaluation, even if `performDefaultValidation` is `false`.
    ///                               `true` by default.
    ///   - options:                  The `Options` to use to check the revocation status of the certificate. `.any` by
    ///                               default.
    public init(performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
    }

    /// Performs the default and host validations as configured, then checks the revocation status of the server's
    /// certificates.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try trust.performValidations(default: performDefaultValidation, host: validateHost, forHost: host)
        let options = self.options
        try trust.evaluate(
            SecPolicy(.revocation(options)), failure: { .revocationCheckFailed(output: $0, options: options) }, host: host)
    }
}

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// Provides a default `RevocationTrustEvaluator` instance.
    public static var revocationChecking: RevocationTrustEvaluator { RevocationTrustEvaluator() }

    /// Creates a `RevocationTrustEvaluator` using the provided parameters (see its initializer).
    public static func revocationChecking(
        performDefaultValidation: Bool = true, validateHost: Bool = true, options: RevocationTrustEvaluator.Options = .any
    ) -> RevocationTrustEvaluator {
        RevocationTrustEvaluator(performDefaultValidation: performDefaultValidation, validateHost: validateHost, options: options)
    }
}

/// Why a revocation check failed: a certificate is revoked, or (with `.requirePositiveResponse`) its
/// status could not be established.
public struct RevocationCheckError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What the check found, in swift-certificates' words.
    public let reason: String

    /// The reason the check failed, as text.
    public var description: String { "revocation check failed: \(reason)" }
    /// The reason the check failed, as text.
    public var errorDescription: String? { description }
}

/// One revocation check of a chain, by swift-certificates' OCSP policy.
struct RevocationCheck {
    let options: RevocationTrustEvaluator.Options

    /// - Throws: ``RevocationCheckError``.
    func check(chain: [Certificate], roots: CertificateStore) async throws {
        let requirePositive = options.contains(.requirePositiveResponse)
        let usesOCSP = options.contains(.ocsp) || options.isEmpty
        guard usesOCSP else {
            // CRLs only: there is nothing Linux can consult.
            if requirePositive { throw RevocationCheckError(reason: "CRL checking is not supported; no OCSP method was allowed") }
            return
        }
        let requester = OCSPResponderClient(
            networkAccessDisabled: options.contains(.networkAccessDisabled), requirePositiveResponse: requirePositive)
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            OCSPVerifierPolicy(failureMode: requirePositive ? .hard : .soft, requester: requester)
            ExtendedKeyUsageCheckedElsewhere()
        }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(chain.dropFirst()))
        guard case .couldNotValidate(let failures) = result else { return }
        let reasons = failures.map { "\($0.policyFailureReason)" }
        throw RevocationCheckError(reason: reasons.isEmpty ? "the chain could not be validated" : reasons.joined(separator: "; "))
    }
}

/// Asks OCSP responders over HTTP (RFC 6960 appendix A: a POST of the DER request).
struct OCSPResponderClient: OCSPRequester {
    let networkAccessDisabled: Bool
    let requirePositiveResponse: Bool

    private static let maximumResponseSize = 256 * 1024

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        guard !networkAccessDisabled else { return unanswered("network access is disabled and no response is cached") }
        guard let url = URL(string: uri), ["http", "https"].contains(url.scheme?.lowercased()) else {
            return unanswered("the OCSP responder URI \(uri) is not an HTTP URL")
        }
        do {
            let response = try await StandaloneExchange.post(
                request, to: url, headers: [("Content-Type", "application/ocsp-request"), ("Accept", "application/ocsp-response")],
                maximumBytes: Self.maximumResponseSize, timeout: 10)
            guard response.status == 200 else { return unanswered("the OCSP responder answered \(response.status)") }
            return .response(response.body)
        } catch {
            return unanswered("the OCSP responder could not be reached: \(error)")
        }
    }

    /// No answer: fatal only when a positive response is required.
    private func unanswered(_ reason: String) -> OCSPRequesterQueryResult {
        let error = RevocationCheckError(reason: reason)
        return requirePositiveResponse ? .terminalError(error) : .nonTerminalError(error)
    }
}
