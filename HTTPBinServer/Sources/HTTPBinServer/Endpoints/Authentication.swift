import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/basic-auth/:user/:passwd`, `/hidden-basic-auth/:user/:passwd`, `/realmless-basic-auth/:user/:passwd`
/// (its own: a `Basic` challenge without a realm), `/bearer` and
/// `/digest-auth/:qop/:user/:passwd[/:algorithm[/stale]]` (RFC 7616: MD5, SHA-256, SHA-512-256,
/// their `-sess` forms, and SHA-512). With `/stale`, the nonce of the first challenge is refused
/// as stale (`stale=TRUE` with a new nonce) even with the right credentials; the new one is accepted.
enum Authentication {
    /// The realm httpbin.org names in its digest challenges.
    static let digestRealm = "me@kennethreitz.com"

    static func basic(_ ex: Exchange, _ rest: [String], hidden: Bool, realm: String? = "Fake Realm") throws -> Response {
        try ex.require(.get)
        guard rest.count == 2 else { throw HTTPBinError(.notFound) }
        let expected = "Basic " + Data("\(rest[0]):\(rest[1])".utf8).base64EncodedString()
        if ex.headers[.authorization] == expected {
            return try ex.json(["authenticated": true, "user": rest[0]])
        }
        if hidden { throw HTTPBinError(.notFound) }
        throw HTTPBinError(.unauthorized, headers: [.wwwAuthenticate: realm.map { "Basic realm=\"\($0)\"" } ?? "Basic"])
    }

    static func bearer(_ ex: Exchange) throws -> Response {
        try ex.require(.get)
        guard let authorization = ex.headers[.authorization], authorization.hasPrefix("Bearer "),
            case let token = String(authorization.dropFirst("Bearer ".count)), !token.isEmpty
        else { throw HTTPBinError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"]) }
        return try ex.json(["authenticated": true, "token": token])
    }

    static func digest(_ ex: Exchange, _ rest: [String]) async throws -> Response {
        // POST too, so that `auth-int` can be tried with a body.
        try ex.require(.get, .post)
        guard (3...5).contains(rest.count), rest.count < 5 || rest[4] == "stale" else { throw HTTPBinError(.notFound) }
        let (qop, user, password) = (rest[0], rest[1], rest[2])
        guard let algorithm = DigestAlgorithm(rawValue: rest.count >= 4 ? rest[3].uppercased() : "MD5") else {
            throw HTTPBinError(.badRequest, "unsupported digest algorithm")
        }
        let staleFirstNonce = rest.count == 5
        let body = Array(buffer: try await ex.collectBody())
        var stale = false
        if let header = ex.headers[.authorization], header.lowercased().hasPrefix("digest ") {
            let fields = parameters(String(header.dropFirst("Digest ".count)))
            if expectedResponse(to: fields, method: ex.method.rawValue, user: user, password: password, algorithm: algorithm, body: body)
                == true
            {
                guard staleFirstNonce, fields["nonce"]?.hasPrefix("first") == true else {
                    return try ex.json(["authenticated": true, "user": user])
                }
                stale = true
            }
        }
        let challenge = [
            "realm=\"\(digestRealm)\"",
            "nonce=\"\(staleFirstNonce && !stale ? "first" : "")\(randomHex())\"",
            qop == "auth" || qop == "auth-int" ? "qop=\"\(qop)\"" : nil,
            "opaque=\"\(randomHex())\"",
            "algorithm=\(algorithm.headerName)",
            stale ? "stale=TRUE" : "stale=FALSE",
        ].compactMap { $0 }.joined(separator: ", ")
        throw HTTPBinError(.unauthorized, headers: [.wwwAuthenticate: "Digest " + challenge])
    }

    enum DigestAlgorithm: String {
        case md5 = "MD5"
        case md5Session = "MD5-SESS"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-SESS"
        case sha512_256 = "SHA-512-256"
        case sha512_256Session = "SHA-512-256-SESS"
        case sha512 = "SHA-512"

        /// As RFC 7616 spells it in a challenge (`MD5-sess`).
        var headerName: String { isSession ? String(rawValue.dropLast(5)) + "-sess" : rawValue }

        var isSession: Bool { rawValue.hasSuffix("-SESS") }

        func hex(_ text: String) -> String { hex(Array(text.utf8)) }

        func hex(_ bytes: [UInt8]) -> String {
            switch self {
            case .md5, .md5Session: Insecure.MD5.hash(data: bytes).hexString
            case .sha256, .sha256Session: SHA256.hash(data: bytes).hexString
            case .sha512_256, .sha512_256Session: SHA512256.hash(data: bytes).hexString
            case .sha512: SHA512.hash(data: bytes).hexString
            }
        }
    }

    /// Whether the client's digest matches; nil when the header lacks a field it needs.
    static func expectedResponse(
        to fields: [String: String], method: String, user: String, password: String, algorithm: DigestAlgorithm, body: [UInt8]
    ) -> Bool? {
        guard let username = fields["username"], let nonce = fields["nonce"], let uri = fields["uri"],
            let response = fields["response"]
        else { return nil }
        guard username == user else { return false }
        var ha1 = algorithm.hex("\(user):\(fields["realm"] ?? digestRealm):\(password)")
        if algorithm.isSession {
            guard let cnonce = fields["cnonce"] else { return nil }
            ha1 = algorithm.hex("\(ha1):\(nonce):\(cnonce)")
        }
        let expected: String
        switch fields["qop"] {
        case let qop? where qop == "auth" || qop == "auth-int":
            guard let nc = fields["nc"], let cnonce = fields["cnonce"] else { return nil }
            let ha2 = qop == "auth" ? algorithm.hex("\(method):\(uri)") : algorithm.hex("\(method):\(uri):\(algorithm.hex(body))")
            expected = algorithm.hex("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)")
        default:
            expected = algorithm.hex("\(ha1):\(nonce):\(algorithm.hex("\(method):\(uri)"))")
        }
        return expected == response.lowercased()
    }

    /// Splits `a="x, y", b=z` into its fields, respecting quotes.
    static func parameters(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        var scanner = Substring(text)
        while !scanner.isEmpty {
            scanner = scanner.drop { $0 == " " || $0 == "," }
            guard let equals = scanner.firstIndex(of: "=") else { break }
            let name = scanner[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            scanner = scanner[scanner.index(after: equals)...]
            let value: Substring
            if scanner.first == "\"" {
                let afterQuote = scanner.dropFirst()
                let close = afterQuote.firstIndex(of: "\"") ?? afterQuote.endIndex
                value = afterQuote[..<close]
                scanner = close == afterQuote.endIndex ? "" : afterQuote[afterQuote.index(after: close)...]
            } else {
                let comma = scanner.firstIndex(of: ",") ?? scanner.endIndex
                value = scanner[..<comma]
                scanner = scanner[comma...]
            }
            fields[name] = value.trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    private static func randomHex() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

extension Digest {
    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
