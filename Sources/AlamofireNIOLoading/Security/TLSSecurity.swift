package import AlamofireNIOTransport
package import Foundation
import NIOCore
import NIOHTTP1
package import X509

// What the API layer's Security stand-ins (`SecTrust`, `SecCertificate`, `SecIdentity`, the
// revocation evaluator) need of TLS, in the loading layer's terms: the transport's trust hook, its
// root certificates and validation, client identities, certificate files, and a single exchange for
// OCSP queries. Transport failures come out as the `URLError`s URLSession gives.

/// Root certificates, and validation of a server's chain against them.
package struct TrustRoots: Sendable {
    let anchors: TrustAnchors

    /// - Parameters:
    ///   - certificates: the roots to trust.
    ///   - includingSystemRoots: whether the system's roots are trusted too.
    ///   - trustingAnchoredLeaves: whether a server certificate that is one of `certificates` is trusted as it is, as
    ///     Security trusts anchors set with `SecTrustSetAnchorCertificates`.
    package init(_ certificates: [Certificate], includingSystemRoots: Bool = false, trustingAnchoredLeaves: Bool = false) {
        anchors = TrustAnchors(certificates, includingSystemRoots: includingSystemRoots, trustingAnchoredLeaves: trustingAnchoredLeaves)
    }

    init(_ anchors: TrustAnchors) {
        self.anchors = anchors
    }

    /// The roots.
    package var store: CertificateStore { anchors.store }

    /// Validates `chain` (the server's own certificate first) and, when `host` is given, its name.
    /// - Returns: the validated path, from the server's certificate to a root.
    /// - Throws: a `URLError` with `.serverCertificateHasBadDate`, `.serverCertificateNotYetValid`,
    ///   `.serverCertificateHasUnknownRoot` or `.serverCertificateUntrusted` (an empty chain, or the name).
    package func evaluate(chain: [Certificate], host: String?, now: Date) async throws -> [Certificate] {
        do {
            return try await anchors.evaluate(chain: chain, host: host, now: now)
        } catch let error as TransportError {
            throw error.urlError(for: nil)
        }
    }
}

/// What the transport asks on each TLS connection before any byte of a request is sent: may this
/// server, presenting this chain, be trusted for `host`? A judge accepts by returning and refuses by
/// throwing; the error it throws is the request's (``Foundation/URLError/trustJudgeError``).
package struct ServerTrustQuestion: Sendable {
    private let challenge: ServerTrustChallenge

    init(_ challenge: ServerTrustChallenge) {
        self.challenge = challenge
    }

    /// The host the client connects to, as written in the URL.
    package var host: String { challenge.host }
    /// The certificates the server presented, DER-encoded, its own first.
    package var certificateChain: [[UInt8]] { challenge.certificateChain }
    /// The roots trusted by default: the system's plus the session's additional ones.
    package var defaultRoots: TrustRoots { TrustRoots(challenge.defaultAnchors) }

    /// The checks a client makes by default (the chain to a default root, dates, the host's name): URLSession's
    /// default handling.
    package func evaluateDefault() async throws {
        try await challenge.evaluateDefault()
    }

    /// The transport's trust hook, asking `judge`.
    package static func transportEvaluator(_ judge: @escaping @Sendable (ServerTrustQuestion) async throws -> Void) -> ServerTrustEvaluator
    {
        { challenge in try await judge(ServerTrustQuestion(challenge)) }
    }
}

extension URLError {
    /// The error a server trust judge refused the server with, kept under the `URLError` the task failed with.
    package var trustJudgeError: (any Error)? {
        (userInfo[NSUnderlyingErrorKey] as? TransportError)?.underlyingError
    }
}

/// A client certificate chain and its private key, presented when a server asks for one.
package struct ClientCertificateIdentity: Sendable, Hashable {
    /// The transport's form, given to it by the session and the tasks.
    package let transportIdentity: TransportClientIdentity

    /// Reads a certificate chain and its private key, each PEM or DER.
    /// - Throws: NIOSSL's error when they cannot be read.
    package init(certificates: [[UInt8]], privateKey: [UInt8]) throws {
        transportIdentity = try TransportClientIdentity(certificates: certificates, privateKey: privateKey)
    }

    /// Reads a PKCS#12 archive.
    /// - Throws: NIOSSL's error when the archive cannot be opened (a wrong password, say).
    package init(pkcs12: [UInt8], password: String?) throws {
        transportIdentity = try TransportClientIdentity(pkcs12: pkcs12, password: password)
    }
}

/// Certificates in PEM or DER files.
package enum CertificateFiles {
    /// Every certificate of PEM text (several may follow each other), or the one of DER bytes.
    /// - Throws: when a document is not a certificate.
    package static func certificates(in bytes: [UInt8]) throws -> [Certificate] {
        try CertificateEncoding.certificates(in: bytes)
    }
}

/// One HTTP exchange outside any session, for a query made while a trust is evaluated (an OCSP
/// responder's): a transport of its own, shut down after it, so no state outlives the query.
package enum StandaloneExchange {
    /// POSTs `body` to `url`.
    /// - Parameters:
    ///   - headers: the request's header fields.
    ///   - maximumBytes: the most the response body may hold.
    ///   - timeout: the longest the connection and each wait for bytes may take.
    /// - Returns: the status code and the body.
    /// - Throws: a `URLError` when the exchange fails.
    package static func post(
        _ body: [UInt8], to url: URL, headers: [(String, String)], maximumBytes: Int, timeout: TimeInterval
    ) async throws -> (status: Int, body: [UInt8]) {
        let wait = TimeAmount.nanoseconds(Int64(timeout * 1_000_000_000))
        let request = TransportRequest(
            method: .POST, url: url, headers: HTTPHeaders(headers), body: .bytes(ByteBuffer(bytes: body)),
            timeouts: .init(connect: wait, idle: wait, total: nil))
        let transport = HTTPTransport()
        defer { transport.shutdown() }
        do {
            let response = try await transport.execute(request, collectingUpTo: maximumBytes)
            return (Int(response.head.status.code), Array(buffer: response.body))
        } catch let error as TransportError {
            throw error.urlError(for: url)
        }
    }
}
