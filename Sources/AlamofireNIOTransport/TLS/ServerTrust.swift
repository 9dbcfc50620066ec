public import Foundation
import NIOCore
package import SwiftASN1
public import X509

/// What a trust evaluator is asked: may this server, presenting this chain, be trusted for `host`?
///
/// The transport asks before it sends any byte of the request. An evaluator accepts by returning
/// and rejects by throwing; ``evaluateDefault(anchors:validateHost:)`` performs the checks a client
/// makes by default, so evaluators can build on it (pinning, custom anchors, no host check).
public struct ServerTrustChallenge: Sendable {
    /// The host the client connects to, as written in the URL.
    public let host: String
    /// The port the client connects to.
    public let port: Int
    /// The certificates the server presented, DER-encoded, its own first.
    public let certificateChain: [[UInt8]]
    /// The roots the transport trusts by default: the system's plus any configured ones.
    public let defaultAnchors: TrustAnchors

    /// Validates the chain against `anchors` (RFC 5280: signatures, validity dates, CA constraints)
    /// and, when `validateHost` is set, checks that the leaf names ``host``.
    ///
    /// - Parameters:
    ///   - anchors: the roots to trust; nil means the transport's defaults.
    ///   - validateHost: whether the leaf must name ``host``.
    /// - Throws: a ``TransportError`` with `.serverCertificateHasBadDate`, `.serverCertificateNotYetValid`,
    ///   `.serverCertificateHasUnknownRoot` or `.serverCertificateUntrusted`.
    public func evaluateDefault(anchors: [[UInt8]]? = nil, validateHost: Bool = true) async throws {
        let roots = try anchors.map { TrustAnchors(try $0.map { try Certificate(derEncoded: $0) }) } ?? defaultAnchors
        try await roots.evaluate(chain: parsedChain(), host: validateHost ? host : nil, now: Date())
    }

    /// The chain, parsed.
    /// - Throws: a ``TransportError`` with `.serverCertificateUntrusted` when it is empty or unreadable.
    public func parsedChain() throws -> [Certificate] {
        guard !certificateChain.isEmpty else {
            throw TransportError(.serverCertificateUntrusted, "the server presented no certificate")
        }
        do {
            return try certificateChain.map { try Certificate(derEncoded: $0) }
        } catch {
            throw TransportError(.serverCertificateUntrusted, "the server's certificate could not be parsed", underlyingError: error)
        }
    }
}

/// Decides whether to trust a server; throw to refuse the connection.
public typealias ServerTrustEvaluator = @Sendable (ServerTrustChallenge) async throws -> Void

/// A set of root certificates and how to validate a chain against them.
public struct TrustAnchors: Sendable {
    /// The roots.
    public let store: CertificateStore
    /// Anchors a server certificate may be itself, trusted as it is (then only its dates, usage and name
    /// are checked): empty unless asked for.
    let anchoredLeaves: Set<Certificate>

    /// - Parameters:
    ///   - certificates: the roots to trust.
    ///   - includingSystemRoots: whether the system's roots (``systemRoots``) are trusted too.
    ///   - trustingAnchoredLeaves: whether a server certificate that is one of `certificates` is
    ///     trusted as it is, as Security trusts anchors set with `SecTrustSetAnchorCertificates`
    ///     (RFC 5280 path validation refuses a self-signed certificate that is not a CA).
    public init(_ certificates: [Certificate], includingSystemRoots: Bool = false, trustingAnchoredLeaves: Bool = false) {
        self.store = includingSystemRoots ? Self.systemRoots.appending(contentsOf: certificates) : CertificateStore(certificates)
        self.anchoredLeaves = trustingAnchoredLeaves ? Set(certificates) : []
    }

    /// The system's roots, read once: as OpenSSL-based tools do, `SSL_CERT_FILE` names the bundle
    /// to read instead of the distribution's, and `SSL_CERT_DIR` (colon-separated) adds directories
    /// whose every certificate file is read.
    public static let systemRoots: CertificateStore = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["SSL_CERT_FILE"] != nil else {
            // The distribution's bundle, wherever swift-certificates finds it, plus any directories.
            return CertificateStore.systemTrustRoots.appending(contentsOf: roots(environment: environment, includingBundle: false))
        }
        return CertificateStore(roots(environment: environment))
    }()

    /// The roots `environment`'s `SSL_CERT_FILE` and `SSL_CERT_DIR` name (the distribution's bundle
    /// when `SSL_CERT_FILE` is not set). Unreadable files and documents that are not certificates
    /// are skipped.
    /// - Parameter environment: the variables to read.
    ///   - includingBundle: whether the bundle (`SSL_CERT_FILE`'s, else the distribution's) is read.
    public static func roots(environment: [String: String], includingBundle: Bool = true) -> [Certificate] {
        let bundle = environment["SSL_CERT_FILE"] ?? defaultBundlePaths.first { FileManager.default.fileExists(atPath: $0) }
        var files = includingBundle ? bundle.map { [$0] } ?? [] : []
        for directory in (environment["SSL_CERT_DIR"] ?? "").split(separator: ":") where !directory.isEmpty {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: String(directory))) ?? []
            files += names.sorted().map { "\(directory)/\($0)" }
        }
        // A directory such as /etc/ssl/certs holds each certificate several times (file, hash link, bundle).
        var seen = Set<Certificate>()
        return files.flatMap { certificates(inFile: $0) }.filter { seen.insert($0).inserted }
    }

    private static let defaultBundlePaths = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]

    /// Every certificate in a PEM file, or the one certificate of a DER file.
    static func certificates(inFile path: String) -> [Certificate] {
        guard let bytes = FileManager.default.contents(atPath: path) else { return [] }
        return (try? CertificateEncoding.certificates(in: Array(bytes), skippingUnreadable: true)) ?? []
    }

    /// Validates `chain` (the server's own certificate first): dates first, then the path to a
    /// root, then, when `host` is given, the name, so each failure gets the code URLSession would
    /// give it.
    /// - Throws: a ``TransportError`` with `.serverCertificateHasBadDate`, `.serverCertificateNotYetValid`,
    ///   `.serverCertificateHasUnknownRoot` or (for the name) `.serverCertificateUntrusted`.
    /// - Returns: the validated path, from the server's certificate to a root.
    @discardableResult
    public func evaluate(chain: [Certificate], host: String?, now: Date) async throws -> [Certificate] {
        guard let leaf = chain.first else { throw TransportError(.serverCertificateUntrusted, "empty certificate chain") }
        if leaf.notValidAfter < now {
            throw TransportError(.serverCertificateHasBadDate, "the server's certificate expired on \(leaf.notValidAfter)")
        }
        if leaf.notValidBefore > now {
            throw TransportError(.serverCertificateNotYetValid, "the server's certificate is valid from \(leaf.notValidBefore)")
        }
        // A leaf that is itself one of the anchors is trusted as it is, as Security trusts an anchored
        // self-signed certificate: RFC 5280 would want it to be a CA.
        let isAnchored = anchoredLeaves.contains(leaf)
        let intermediates = CertificateStore(chain.dropFirst())
        let path: [Certificate]
        if isAnchored {
            if let refusal = ServerAuthenticationUsagePolicy.refusal(of: leaf) {
                throw TransportError(.serverCertificateUntrusted, "the server's certificate \(refusal)")
            }
            path = [leaf]
        } else {
            var pathVerifier = Verifier(rootCertificates: store) {
                RFC5280Policy()
                ServerAuthenticationUsagePolicy()
            }
            switch await pathVerifier.validate(leaf: leaf, intermediates: intermediates) {
            case .validCertificate(let validated):
                path = Array(validated)
            case .couldNotValidate:
                // Only the purpose, or the path itself? A chain that is sound but not for servers
                // fails as untrusted (-1202), as Security's SSL policy reports it.
                var soundnessVerifier = Verifier(rootCertificates: store) {
                    RFC5280Policy()
                    ExtendedKeyUsageCheckedElsewhere()
                }
                if case .validCertificate(let sound) = await soundnessVerifier.validate(leaf: leaf, intermediates: intermediates) {
                    let refusal = sound.dropLast().lazy.compactMap(ServerAuthenticationUsagePolicy.refusal(of:)).first
                    throw TransportError(
                        .serverCertificateUntrusted, "the server's certificate chain \(refusal ?? "is not for TLS servers")")
                }
                throw TransportError(.serverCertificateHasUnknownRoot, "the server's certificate does not chain to a trusted root")
            }
        }
        guard let host else { return path }
        let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let identity = ServerIdentityPolicy(serverHostname: isIPAddress ? nil : host, serverIP: isIPAddress ? host : nil)
        let named: Bool
        if isAnchored {
            var nameVerifier = Verifier(rootCertificates: CertificateStore([leaf])) { AnchoredLeafNamePolicy(identity: identity) }
            named = await nameVerifier.validate(leaf: leaf, intermediates: CertificateStore()).isValid
        } else {
            var nameVerifier = Verifier(rootCertificates: store) {
                RFC5280Policy()
                identity
                ExtendedKeyUsageCheckedElsewhere()
            }
            named = await nameVerifier.validate(leaf: leaf, intermediates: intermediates).isValid
        }
        guard named else {
            throw TransportError(.serverCertificateUntrusted, "the server's certificate is not valid for \(host)")
        }
        return path
    }
}

extension CertificateValidationResult {
    fileprivate var isValid: Bool {
        if case .validCertificate = self { true } else { false }
    }
}

/// RFC 5280 §4.2.1.12 for a TLS server: the leaf, and every intermediate, that limits its purpose
/// with an extended key usage must allow `serverAuth` (or any purpose), as Apple's SSL policy and
/// OpenSSL's `X509_PURPOSE_SSL_SERVER` require. swift-certificates' `RFC5280Policy` does not check
/// purposes, so a `clientAuth`-only certificate from a trusted CA would pass without this. The root
/// (a trust anchor) is not asked.
struct ServerAuthenticationUsagePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for certificate in chain.dropLast() {
            if let refusal = Self.refusal(of: certificate) { return .failsToMeetPolicy(reason: refusal) }
        }
        return .meetsPolicy
    }

    /// Why `certificate` may not serve TLS servers, or nil when it may (no extended key usage, or
    /// one with `serverAuth` or `anyExtendedKeyUsage`).
    static func refusal(of certificate: Certificate) -> String? {
        do {
            guard let usages = try certificate.extensions.extendedKeyUsage else { return nil }
            if usages.contains(.serverAuth) || usages.contains(.any) { return nil }
            return "is not for TLS servers (its extended key usage lacks serverAuth): \(certificate.subject)"
        } catch {
            return "has an extended key usage that cannot be read: \(error)"
        }
    }
}

/// Declares the extended key usage extension understood, for a verifier run after
/// ``ServerAuthenticationUsagePolicy`` has judged it (a name or revocation check, or telling a chain
/// that is sound but not for servers from one that is not sound): swift-certificates refuses a
/// certificate with a critical extension no policy declares, which would fail a critical
/// `serverAuth` usage there for the wrong reason.
package struct ExtendedKeyUsageCheckedElsewhere: VerifierPolicy {
    package let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]

    package init() {}

    package mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}

/// The name check alone, for a leaf that is itself a root: it declares the extensions RFC 5280's
/// checks would have handled, which an anchored leaf skips.
private struct AnchoredLeafNamePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
        .X509ExtensionID.subjectAlternativeName, .X509ExtensionID.nameConstraints,
    ]
    var identity: ServerIdentityPolicy

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let leaf = chain.leaf
        do {
            // What RFC 5280's checks would still ask of a server certificate (its purpose was checked first).
            if let usage = try leaf.extensions.keyUsage, !usage.digitalSignature, !usage.keyEncipherment {
                return .failsToMeetPolicy(reason: "the anchored certificate's key may not be used for TLS")
            }
        } catch {
            return .failsToMeetPolicy(reason: "the anchored certificate's extensions cannot be read: \(error)")
        }
        return identity.chainMeetsPolicyRequirements(chain: chain)
    }
}
