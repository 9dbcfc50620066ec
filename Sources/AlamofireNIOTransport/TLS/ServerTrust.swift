import Foundation
import NIOCore
import SwiftASN1
import X509

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
    let defaultAnchors: TrustAnchors

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

    func parsedChain() throws -> [Certificate] {
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
struct TrustAnchors: Sendable {
    let store: CertificateStore

    init(_ certificates: [Certificate], includingSystemRoots: Bool = false) {
        self.store =
            includingSystemRoots ? CertificateStore.systemTrustRoots.appending(contentsOf: certificates) : CertificateStore(certificates)
    }

    /// Checks dates first, then the path to a root, then the name, so each failure gets the code
    /// URLSession would give it.
    func evaluate(chain: [Certificate], host: String?, now: Date) async throws {
        guard let leaf = chain.first else { throw TransportError(.serverCertificateUntrusted, "empty certificate chain") }
        if leaf.notValidAfter < now {
            throw TransportError(.serverCertificateHasBadDate, "the server's certificate expired on \(leaf.notValidAfter)")
        }
        if leaf.notValidBefore > now {
            throw TransportError(.serverCertificateNotYetValid, "the server's certificate is valid from \(leaf.notValidBefore)")
        }
        var pathVerifier = Verifier(rootCertificates: store) { RFC5280Policy() }
        let intermediates = CertificateStore(chain.dropFirst())
        guard case .validCertificate = await pathVerifier.validate(leaf: leaf, intermediates: intermediates) else {
            throw TransportError(.serverCertificateHasUnknownRoot, "the server's certificate does not chain to a trusted root")
        }
        guard let host else { return }
        let isIPAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        var nameVerifier = Verifier(rootCertificates: store) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIPAddress ? nil : host, serverIP: isIPAddress ? host : nil)
        }
        guard case .validCertificate = await nameVerifier.validate(leaf: leaf, intermediates: intermediates) else {
            throw TransportError(.serverCertificateUntrusted, "the server's certificate is not valid for \(host)")
        }
    }
}
