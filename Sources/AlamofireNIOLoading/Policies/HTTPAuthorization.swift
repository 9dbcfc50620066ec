import Crypto
import CryptoExtras
package import Foundation

/// The `Authorization` header a credential makes in answer to a challenge: Basic (RFC 7617) or
/// Digest (RFC 7616, with MD5, SHA-256 and SHA-512-256, their `-sess` forms, and qop `auth` or
/// `auth-int`).
package enum HTTPAuthorization {
    /// The Digest algorithms URLSession answers, strongest last.
    package enum DigestAlgorithm: String, CaseIterable, Sendable {
        case md5 = "MD5"
        case md5Session = "MD5-SESS"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-SESS"
        case sha512_256 = "SHA-512-256"
        case sha512_256Session = "SHA-512-256-SESS"

        /// The algorithm a challenge names (MD5 when it names none); nil when it is not supported.
        package init?(challenge: AuthenticationChallengeOffer) {
            self.init(rawValue: (challenge.parameters["algorithm"] ?? "MD5").uppercased())
        }

        /// How strong it is, for choosing among several Digest challenges.
        var strength: Int {
            switch self {
            case .md5, .md5Session: 0
            case .sha256, .sha256Session: 1
            case .sha512_256, .sha512_256Session: 2
            }
        }

        var isSession: Bool { rawValue.hasSuffix("-SESS") }

        /// The algorithm's name as sent back (`MD5-sess`, as RFC 7616 spells it).
        var headerName: String { isSession ? String(rawValue.dropLast(5)) + "-sess" : rawValue }

        /// The lowercase hex digest of `bytes`.
        func hex<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
            switch self {
            case .md5, .md5Session: Insecure.MD5.hash(data: bytes).lowercaseHex
            case .sha256, .sha256Session: SHA256.hash(data: bytes).lowercaseHex
            case .sha512_256, .sha512_256Session: SHA512256.hash(data: bytes).lowercaseHex
            }
        }

        func hex(_ text: String) -> String { hex(Array(text.utf8)) }
    }

    /// `Basic base64(user:password)`.
    package static func basic(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The Digest answer to `challenge` for a request with `method` to `uri` (the request target),
    /// or nil when the challenge lacks a nonce, names an unsupported algorithm, or asks only for
    /// `auth-int` and the body is not at hand (`body` nil: a stream or file).
    package static func digest(
        user: String, password: String, challenge: AuthenticationChallengeOffer, method: String, uri: String, body: Data?,
        clientNonce: String = randomClientNonce()
    ) -> String? {
        guard let nonce = challenge.parameters["nonce"], let algorithm = DigestAlgorithm(challenge: challenge) else { return nil }
        let realm = challenge.parameters["realm"] ?? ""
        let offered = (challenge.parameters["qop"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let qop: String?
        if offered.contains("auth") {
            qop = "auth"
        } else if offered.contains("auth-int") {
            guard body != nil else { return nil }
            qop = "auth-int"
        } else if offered.isEmpty || offered == [""] {
            qop = nil
        } else {
            return nil
        }
        let nonceCount = "00000001"
        var ha1 = algorithm.hex("\(user):\(realm):\(password)")
        if algorithm.isSession { ha1 = algorithm.hex("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 =
            qop == "auth-int"
            ? algorithm.hex("\(method):\(uri):\(algorithm.hex(body ?? Data()))") : algorithm.hex("\(method):\(uri)")
        let response =
            qop.map { algorithm.hex("\(ha1):\(nonce):\(nonceCount):\(clientNonce):\($0):\(ha2)") }
            ?? algorithm.hex("\(ha1):\(nonce):\(ha2)")
        var fields = [
            "username=\(quoted(user))", "realm=\(quoted(realm))", "nonce=\(quoted(nonce))", "uri=\(quoted(uri))",
            "algorithm=\(algorithm.headerName)", "response=\(quoted(response))",
        ]
        if let qop {
            fields += ["qop=\(qop)", "nc=\(nonceCount)", "cnonce=\(quoted(clientNonce))"]
        } else if algorithm.isSession {
            // A -sess answer signs the client nonce, so the server must have it even without qop.
            fields.append("cnonce=\(quoted(clientNonce))")
        }
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\(quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// The request target Digest signs: the path (`/` when empty) and the query, as sent.
    package static func requestTarget(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        let query = url.query(percentEncoded: true).map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }

    package static func randomClientNonce() -> String {
        (0..<16).map { _ in UInt8.random(in: 0...255) }.lowercaseHex
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal digits (a digest's usual spelling).
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in self {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
