public import Foundation

/// A protocol describing the API used to evaluate server trusts.
public protocol ServerTrustEvaluating: Sendable {
    /// Evaluates the given `SecTrust` value for the given `host`.
    ///
    /// Called on a thread pool of AlamofireNIO's, before any byte of the request is sent; it may
    /// block. Throw to refuse the server: the request fails with the error, as an `AFError` (other
    /// errors are wrapped in `.serverTrustEvaluationFailed(reason: .customEvaluationFailed)`).
    ///
    /// - Parameters:
    ///   - trust: The `SecTrust` value to evaluate.
    ///   - host:  The host for which to evaluate the `SecTrust` value.
    func evaluate(_ trust: SecTrust, forHost host: String) throws
}

// MARK: - Server Trust Evaluators

/// An evaluator which uses the default server trust evaluation while allowing you to control whether to validate the
/// host provided by the challenge. Applications are encouraged to always validate the host in production environments
/// to guarantee the validity of the server's certificate chain.
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    private let validateHost: Bool

    /// Creates a `DefaultTrustEvaluator`.
    ///
    /// - Parameter validateHost: Determines whether or not the evaluator should validate the host. `true` by default.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// Performs the default validation, and host validation when enabled; throws when either fails.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        if validateHost {
            try trust.af.performValidation(forHost: host)
        }
        try trust.af.performDefaultValidation(forHost: host)
    }
}

/// Uses the pinned certificates to validate the server trust. The server trust is considered valid if one of the pinned
/// certificates match one of the server certificates. By validating both the certificate chain and host, certificate
/// pinning provides a very secure form of server trust validation mitigating most, if not all, MITM attacks.
/// Applications are encouraged to always validate the host and require a valid certificate chain in production
/// environments.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    private let certificates: [SecCertificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates a `PinnedCertificatesTrustEvaluator` from the provided parameters.
    ///
    /// - Parameters:
    ///   - certificates:                 The certificates to use to evaluate the trust. All `cer`, `crt`, and `der`
    ///                                   certificates in `Bundle.main` by default.
    ///   - acceptSelfSignedCertificates: Adds the provided certificates as anchors for the trust evaluation, allowing
    ///                                   self-signed certificates to pass. `false` by default. THIS SETTING SHOULD BE
    ///                                   FALSE IN PRODUCTION!
    ///   - performDefaultValidation:     Determines whether default validation should be performed in addition to
    ///                                   evaluating the pinned certificates. `true` by default.
    ///   - validateHost:                 Determines whether or not the evaluator should validate the host, in addition
    ///                                   to performing the default evaluation, even if `performDefaultValidation` is
    ///                                   `false`. `true` by default.
    public init(
        certificates: [SecCertificate] = Bundle.main.af.certificates, acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true, validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Validates the trust as configured, then requires one of the server's certificates to be pinned.
    ///
    /// Throws when there are no pinned certificates, validation fails, or no server certificate matches.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        guard !certificates.isEmpty else {
            throw AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        if acceptSelfSignedCertificates {
            try trust.af.setAnchorCertificates(certificates)
        }
        try trust.performValidations(default: performDefaultValidation, host: validateHost, forHost: host)
        let serverCertificates = trust.af.certificates
        guard !Set(serverCertificates).isDisjoint(with: certificates) else {
            throw AFError.serverTrustEvaluationFailed(
                reason: .certificatePinningFailed(
                    host: host, trust: trust, pinnedCertificates: certificates, serverCertificates: serverCertificates))
        }
    }
}

/// Uses the pinned public keys to validate the server trust. The server trust is considered valid if one of the pinned
/// public keys match one of the server certificate public keys. By validating both the certificate chain and host,
/// public key pinning provides a very secure form of server trust validation mitigating most, if not all, MITM attacks.
/// Applications are encouraged to always validate the host and require a valid certificate chain in production
/// environments.
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    private let keys: [SecKey]
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates a `PublicKeysTrustEvaluator` from the provided parameters.
    ///
    /// - Note: Default and host validation will fail when using this evaluator with self-signed certificates. Use
    ///         `PinnedCertificatesTrustEvaluator` if you need to use self-signed certificates.
    ///
    /// - Parameters:
    ///   - keys:                     The `SecKey`s to use to validate public keys. Defaults to the public keys of all
    ///                               certificates included in the main bundle.
    ///   - performDefaultValidation: Determines whether default validation should be performed in addition to
    ///                               evaluating the pinned certificates. `true` by default.
    ///   - validateHost:             Determines whether or not the evaluator should validate the host, in addition to
    ///                               performing the default evaluation, even if `performDefaultValidation` is `false`.
    ///                               `true` by default.
    public init(keys: [SecKey] = Bundle.main.af.publicKeys, performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.keys = keys
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Validates the trust as configured, then requires one of the server's public keys to be pinned.
    ///
    /// Throws when there are no pinned keys, validation fails, or no server key matches.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        guard !keys.isEmpty else {
            throw AFError.serverTrustEvaluationFailed(reason: .noPublicKeysFound)
        }
        try trust.performValidations(default: performDefaultValidation, host: validateHost, forHost: host)
        let serverKeys = trust.af.publicKeys
        guard serverKeys.contains(where: keys.contains) else {
            throw AFError.serverTrustEvaluationFailed(
                reason: .publicKeyPinningFailed(host: host, trust: trust, pinnedKeys: keys, serverKeys: serverKeys))
        }
    }
}

/// Uses the provided evaluators to validate the server trust. The trust is only considered valid if all of the
/// evaluators consider it valid.
public final class CompositeTrustEvaluator: ServerTrustEvaluating {
    private let evaluators: [any ServerTrustEvaluating]

    /// Creates a `CompositeTrustEvaluator` from the provided evaluators.
    ///
    /// - Parameter evaluators: The `ServerTrustEvaluating` values used to evaluate the server trust.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Evaluates the trust with each evaluator in order; throws the first failure.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try evaluators.evaluate(trust, forHost: host)
    }
}

/// Disables all evaluation which in turn will always consider any server trust as valid.
///
/// **THIS EVALUATOR SHOULD NEVER BE USED IN PRODUCTION!**
@available(*, deprecated, renamed: "DisabledTrustEvaluator", message: "DisabledEvaluator has been renamed DisabledTrustEvaluator.")
public typealias DisabledEvaluator = DisabledTrustEvaluator

/// Disables all evaluation which in turn will always consider any server trust as valid.
///
/// **THIS EVALUATOR SHOULD NEVER BE USED IN PRODUCTION!**
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates an instance.
    public init() {}

    /// Accepts every trust: never throws.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {}
}

extension [any ServerTrustEvaluating] {
    /// Evaluates the given `SecTrust` value for the given `host` with every evaluator, in order.
    ///
    /// - Parameters:
    ///   - trust: The `SecTrust` value to evaluate.
    ///   - host:  The host for which to evaluate the `SecTrust` value.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        for evaluator in self {
            try evaluator.evaluate(trust, forHost: host)
        }
    }
}

// MARK: - Shorthands

extension ServerTrustEvaluating where Self == DefaultTrustEvaluator {
    /// Provides a default `DefaultTrustEvaluator` instance.
    public static var defaultEvaluator: DefaultTrustEvaluator { DefaultTrustEvaluator() }

    /// Creates a `DefaultTrustEvaluator` using the provided parameters.
    ///
    /// - Parameter validateHost: Determines whether or not the evaluator should validate the host. `true` by default.
    public static func defaultEvaluator(validateHost: Bool = true) -> DefaultTrustEvaluator {
        DefaultTrustEvaluator(validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// Provides a default `PinnedCertificatesTrustEvaluator` instance.
    public static var pinnedCertificates: PinnedCertificatesTrustEvaluator { PinnedCertificatesTrustEvaluator() }

    /// Creates a `PinnedCertificatesTrustEvaluator` using the provided parameters (see its initializer).
    public static func pinnedCertificates(
        certificates: [SecCertificate] = Bundle.main.af.certificates, acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true, validateHost: Bool = true
    ) -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(
            certificates: certificates, acceptSelfSignedCertificates: acceptSelfSignedCertificates,
            performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// Provides a default `PublicKeysTrustEvaluator` instance.
    public static var publicKeys: PublicKeysTrustEvaluator { PublicKeysTrustEvaluator() }

    /// Creates a `PublicKeysTrustEvaluator` from the provided parameters (see its initializer).
    public static func publicKeys(
        keys: [SecKey] = Bundle.main.af.publicKeys, performDefaultValidation: Bool = true, validateHost: Bool = true
    ) -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// Creates a `CompositeTrustEvaluator` from the provided evaluators.
    ///
    /// - Parameter evaluators: The `ServerTrustEvaluating` values used to evaluate the server trust.
    public static func composite(evaluators: [any ServerTrustEvaluating]) -> CompositeTrustEvaluator {
        CompositeTrustEvaluator(evaluators: evaluators)
    }
}

extension ServerTrustEvaluating where Self == DisabledTrustEvaluator {
    /// Provides a `DisabledTrustEvaluator` instance.
    public static var disabled: DisabledTrustEvaluator { DisabledTrustEvaluator() }
}

// MARK: - Certificates in bundles and directories

extension Bundle: AlamofireExtended {}
extension AlamofireExtension where ExtendedType: Bundle {
    /// Returns all valid `cer`, `crt`, and `der` certificates in the bundle (DER, or PEM on Linux too).
    public var certificates: [SecCertificate] {
        paths(forResourcesOfTypes: [".cer", ".CER", ".crt", ".CRT", ".der", ".DER"]).sorted().flatMap { path in
            (try? SecCertificate.certificates(contentsOf: URL(fileURLWithPath: path))) ?? []
        }
    }

    /// Returns all public keys for the valid certificates in the bundle.
    public var publicKeys: [SecKey] {
        certificates.af.publicKeys
    }

    /// Returns all pathnames for the resources identified by the provided file extensions.
    ///
    /// - Parameter types: The filename extensions locate.
    ///
    /// - Returns:         All pathnames for the given filename extensions.
    public func paths(forResourcesOfTypes types: [String]) -> [String] {
        // Foundation on Linux wants the extension without its dot.
        Array(Set(types.flatMap { type.paths(forResourcesOfType: String($0.drop { $0 == "." }), inDirectory: nil) }))
    }
}

extension SecCertificate {
    /// Every certificate in the `cer`, `crt`, `der` and `pem` files of a directory (not its
    /// subdirectories), in file-name order; files that hold no certificate are skipped.
    /// - Parameter directory: the directory.
    /// - Throws: the error listing the directory.
    public static func certificates(inDirectory directory: URL) throws -> [SecCertificate] {
        let extensions: Set<String> = ["cer", "crt", "der", "pem"]
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { extensions.contains($0.pathExtension.lowercased()) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .flatMap { (try? certificates(contentsOf: $0)) ?? [] }
    }
}

extension SecTrust {
    /// The default validation, then the host's, each if asked: the checks the pinning and revocation
    /// evaluators make before their own.
    func performValidations(default performDefault: Bool, host validateHost: Bool, forHost host: String) throws {
        if performDefault {
            try af.performDefaultValidation(forHost: host)
        }
        if validateHost {
            try af.performValidation(forHost: host)
        }
    }
}
