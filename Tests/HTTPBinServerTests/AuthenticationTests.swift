import Crypto
import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

@Suite struct AuthenticationTests {
    @Test func basicAuthAcceptsRightCredentials() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let credentials = Data("user:passwd".utf8).base64EncodedString()
            let ok = try await fetch(server.url("/basic-auth/user/passwd"), headers: [("Authorization", "Basic \(credentials)")])
            #expect(ok.status == 200)
            #expect(ok.json["authenticated"] as? Bool == true)
            #expect(ok.json["user"] as? String == "user")
        }
    }

    @Test func basicAuthChallengesWrongCredentials() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let wrong = Data("user:nope".utf8).base64EncodedString()
            let denied = try await fetch(server.url("/basic-auth/user/passwd"), headers: [("Authorization", "Basic \(wrong)")])
            #expect(denied.status == 401)
            #expect(denied.header("WWW-Authenticate") == "Basic realm=\"Fake Realm\"")
            let hidden = try await fetch(server.url("/hidden-basic-auth/user/passwd"))
            #expect(hidden.status == 404)
            #expect(hidden.header("WWW-Authenticate") == nil)
        }
    }

    @Test func bearerEchoesTheToken() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let ok = try await fetch(server.url("/bearer"), headers: [("Authorization", "Bearer abc.def")])
            #expect(ok.json["token"] as? String == "abc.def")
            let missing = try await fetch(server.url("/bearer"))
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == "Bearer")
        }
    }

    /// Answers the server's challenge with a digest computed here from RFC 7616's formulas.
    @Test(arguments: [("MD5", ""), ("SHA-256", "/SHA-256"), ("SHA-512", "/SHA-512")])
    func digestAuthAcceptsHandComputedResponse(algorithm: String, suffix: String) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let path = "/digest-auth/auth/user/passwd\(suffix)"
            let challenge = try await fetch(server.url(path))
            #expect(challenge.status == 401)
            let header = try #require(challenge.header("WWW-Authenticate"))
            #expect(header.hasPrefix("Digest realm=\"me@kennethreitz.com\", nonce=\""))
            #expect(header.hasSuffix(", qop=\"auth\", opaque=\"\(field("opaque", header))\", algorithm=\(algorithm), stale=FALSE"))
            let nonce = field("nonce", header)
            let hash: (String) -> String = { digestHex(algorithm, $0) }
            let ha1 = hash("user:me@kennethreitz.com:passwd")
            let ha2 = hash("GET:\(path)")
            let response = hash("\(ha1):\(nonce):00000001:0a4f113b:auth:\(ha2)")
            let authorization =
                "Digest username=\"user\", realm=\"me@kennethreitz.com\", nonce=\"\(nonce)\", uri=\"\(path)\", "
                + "algorithm=\(algorithm), qop=auth, nc=00000001, cnonce=\"0a4f113b\", response=\"\(response)\""
            let ok = try await fetch(server.url(path), headers: [("Authorization", authorization)])
            #expect(ok.status == 200)
            #expect(ok.json["user"] as? String == "user")

            let wrong = authorization.replacingOccurrences(of: response, with: String(repeating: "0", count: response.count))
            #expect(try await fetch(server.url(path), headers: [("Authorization", wrong)]).status == 401)
        }
    }

    @Test func digestAuthIntHashesTheBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let path = "/digest-auth/auth-int/user/passwd"
            let nonce = field("nonce", try #require(try await fetch(server.url(path)).header("WWW-Authenticate")))
            let ha1 = digestHex("MD5", "user:me@kennethreitz.com:passwd")
            let ha2 = digestHex("MD5", "GET:\(path):\(digestHex("MD5", ""))")
            let response = digestHex("MD5", "\(ha1):\(nonce):00000001:abc:auth-int:\(ha2)")
            let authorization =
                "Digest username=\"user\", nonce=\"\(nonce)\", uri=\"\(path)\", qop=auth-int, nc=00000001, cnonce=\"abc\", response=\"\(response)\""
            #expect(try await fetch(server.url(path), headers: [("Authorization", authorization)]).status == 200)
        }
    }

    private func field(_ name: String, _ header: String) -> String {
        guard let start = header.range(of: "\(name)=\"") else { return "" }
        return String(header[start.upperBound...].prefix { $0 != "\"" })
    }
}

func digestHex(_ algorithm: String, _ text: String) -> String {
    let bytes = Array(text.utf8)
    let digest: [UInt8]
    switch algorithm {
    case "SHA-256": digest = Array(SHA256.hash(data: bytes))
    case "SHA-512": digest = Array(SHA512.hash(data: bytes))
    default: digest = Array(Insecure.MD5.hash(data: bytes))
    }
    return digest.map { String(format: "%02x", $0) }.joined()
}
