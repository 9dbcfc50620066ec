import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Challenges parsed, answered and matched as plain values; digests checked against RFC 7616's
/// examples and values computed by hand (Python's hashlib) for the other algorithms.
@Suite struct AuthenticationPolicyTests {
    typealias Offer = AuthenticationChallengeOffer

    // MARK: Parsing

    @Test func parsesOneChallengeWithQuotedCommasAndEscapes() {
        #expect(
            Offer.parse([#"Digest realm="a, b", nonce="x\"y", qop="auth,auth-int", algorithm=MD5-sess, stale=TRUE"#]) == [
                Offer(
                    scheme: "digest",
                    parameters: ["realm": "a, b", "nonce": "x\"y", "qop": "auth,auth-int", "algorithm": "MD5-sess", "stale": "TRUE"])
            ])
        #expect(Offer.parse(["Basic"]) == [Offer(scheme: "basic")])
        #expect(Offer.parse(["BASIC Realm = \"r\""]) == [Offer(scheme: "basic", parameters: ["realm": "r"])])
    }

    @Test func parsesSeveralChallengesInOneHeaderAndAcrossHeaders() {
        // RFC 9110 §11.6.1's example.
        let header = #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#
        #expect(
            Offer.parse([header, "Negotiate abc==, Bearer"]) == [
                Offer(scheme: "newauth", parameters: ["realm": "apps", "type": "1", "title": "Login to \"apps\""]),
                Offer(scheme: "basic", parameters: ["realm": "simple"]),
                Offer(scheme: "negotiate", token: "abc=="),
                Offer(scheme: "bearer"),
            ])
    }

    @Test func malformedHeadersAreSkippedNeverACrash() {
        #expect(Offer.parse([""]) == [])
        #expect(Offer.parse([",,, ,"]) == [])
        #expect(Offer.parse(["=x"]) == [])
        #expect(Offer.parse([#"Basic realm="unterminated"#]) == [Offer(scheme: "basic")])
        #expect(Offer.parse(["Digest realm="]) == [Offer(scheme: "digest", token: "realm=")])
        #expect(Offer.parse(["Basic realm=\"r\", ==, Digest nonce=n"]).map(\.scheme) == ["basic", "digest"])
        #expect(Offer.parse(["\u{1F600} Basic"]).map(\.scheme) == ["basic"])
    }

    // MARK: Answers

    static let rfcOffer = Offer(
        scheme: "digest",
        parameters: [
            "realm": "http-auth@example.org", "qop": "auth, auth-int", "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
            "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
        ])
    static let rfcClientNonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    static func digestResponse(algorithm: String?, qop: String? = nil, method: String = "GET", body: Data? = Data()) -> String? {
        var offer = rfcOffer
        if let algorithm { offer.parameters["algorithm"] = algorithm }
        if let qop { offer.parameters["qop"] = qop }
        let header = HTTPAuthorization.digest(
            user: "Mufasa", password: "Circle of Life", challenge: offer, method: method, uri: "/dir/index.html", body: body,
            clientNonce: rfcClientNonce)
        return header.flatMap { Offer.parse([$0]).first?.parameters["response"] }
    }

    @Test(arguments: [
        // RFC 7616 §3.9.1.
        (nil as String?, "8ca523f5e9506fed4657c9700eebdbec"),
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ("MD5-sess", "e783283f46242139c486a698fec7211d"),
        ("SHA-256-sess", "2fd51b3a77ad75bad6afad6003e818d767133c46d9e2749e7f5232ae1ea3efd7"),
        ("SHA-512-256", "430d05014cecc49cab6fbe03176d41a1da86cbfe24a16580e22aaad928d960d0"),
        ("sha-512-256-sess", "3f2a34f923c38b0fb26dce2fdfc2ce326c23cecf86fbb1444f3e51fbbc2cb92e"),
    ])
    func digestWithQopAuth(algorithm: String?, expected: String) {
        #expect(Self.digestResponse(algorithm: algorithm) == expected)
    }

    @Test(arguments: [
        ("MD5", "23fef4d928a3e9fa6e0b0de51288c997"),
        ("SHA-256", "c98b95dbdb463c4483e324bced57d591946a6f84098142757b1333c52c47d62e"),
        ("SHA-512-256", "94b85dbcbbb97c3bda2751c7e160fe6604eccca585f3cbff75d2a23f0085ed70"),
    ])
    func digestWithQopAuthIntHashesTheBody(algorithm: String, expected: String) {
        #expect(Self.digestResponse(algorithm: algorithm, qop: "auth-int", method: "POST", body: Data("hello".utf8)) == expected)
        // A body not in memory (a stream) cannot be hashed: no answer.
        #expect(Self.digestResponse(algorithm: algorithm, qop: "auth-int", method: "POST", body: nil) == nil)
    }

    @Test(arguments: [
        ("MD5", "7b2cc3b30e75b4777ea31027084363fd"),
        ("SHA-256", "a1306b0595a6c7fe96c448631fb5cfbd5107bd1fe1da729d978dd7446b812363"),
        ("SHA-512-256", "93e9122020ea0624d2ca801426d5bfbeb93d10ff4cc24cb410af3920fa4730e7"),
    ])
    func digestWithoutQop(algorithm: String, expected: String) {
        var offer = Self.rfcOffer
        offer.parameters["qop"] = nil
        offer.parameters["algorithm"] = algorithm
        let header = HTTPAuthorization.digest(
            user: "Mufasa", password: "Circle of Life", challenge: offer, method: "GET", uri: "/dir/index.html", body: nil)
        let fields = header.flatMap { Offer.parse([$0]).first?.parameters } ?? [:]
        #expect(fields["response"] == expected)
        #expect(fields["qop"] == nil && fields["nc"] == nil && fields["cnonce"] == nil)
    }

    /// A `-sess` answer without qop still sends the client nonce its hash includes.
    @Test func sessionDigestWithoutQopSendsItsClientNonce() throws {
        var offer = Self.rfcOffer
        offer.parameters["qop"] = nil
        offer.parameters["algorithm"] = "MD5-sess"
        let header = try #require(
            HTTPAuthorization.digest(user: "u", password: "p", challenge: offer, method: "GET", uri: "/", body: nil, clientNonce: "cn"))
        let fields = try #require(Offer.parse([header]).first?.parameters)
        #expect(fields["cnonce"] == "cn")
        #expect(fields["qop"] == nil)
    }

    @Test func theDigestHeaderCarriesEveryField() throws {
        var offer = Self.rfcOffer
        offer.parameters["algorithm"] = "md5-sess"
        let header = try #require(
            HTTPAuthorization.digest(
                user: "Mu\"fasa", password: "p", challenge: offer, method: "GET", uri: "/a?b=c", body: Data(), clientNonce: "cn"))
        #expect(header.hasPrefix("Digest "))
        let fields = try #require(Offer.parse([header]).first?.parameters)
        #expect(fields["username"] == "Mu\"fasa")
        #expect(fields["realm"] == "http-auth@example.org")
        #expect(fields["uri"] == "/a?b=c")
        #expect(fields["algorithm"] == "MD5-sess")
        #expect(fields["qop"] == "auth" && fields["nc"] == "00000001" && fields["cnonce"] == "cn")
        #expect(fields["opaque"] == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
        // Unknown algorithms and missing nonces get no answer.
        offer.parameters["algorithm"] = "SHA-1"
        #expect(HTTPAuthorization.digest(user: "u", password: "p", challenge: offer, method: "GET", uri: "/", body: nil) == nil)
    }

    @Test func basicIsBase64OfUserColonPassword() {
        #expect(HTTPAuthorization.basic(user: "Aladdin", password: "open sesame") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(HTTPAuthorization.basic(user: "ü", password: "") == "Basic w7w6")
    }

    @Test func theRequestTargetIsThePathAndQueryAsSent() {
        #expect(HTTPAuthorization.requestTarget(of: URL(string: "http://h/a%20b?q=1&r")!) == "/a%20b?q=1&r")
        #expect(HTTPAuthorization.requestTarget(of: URL(string: "http://h")!) == "/")
    }

    // MARK: Choosing and matching

    @Test func theStrongestOfferIsAnswered() {
        let basic = Offer(scheme: "basic", parameters: ["realm": "r"])
        let md5 = Offer(scheme: "digest", parameters: ["nonce": "n"])
        let sha256 = Offer(scheme: "digest", parameters: ["nonce": "n", "algorithm": "SHA-256"])
        let unsupported = Offer(scheme: "digest", parameters: ["nonce": "n", "algorithm": "SHA-1"])
        #expect(AuthenticationPolicy.strongestOffer([basic, md5, sha256]) == sha256)
        #expect(AuthenticationPolicy.strongestOffer([unsupported, basic]) == basic)
        #expect(AuthenticationPolicy.strongestOffer([Offer(scheme: "bearer"), Offer(scheme: "negotiate", token: "x")]) == nil)
    }

    @Test func onlyA401WithAnOfferIsAChallenge() throws {
        let policy = AuthenticationPolicy()
        let request = URLRequest(url: URL(string: "https://Example.com/x")!)
        func response(_ status: Int) -> ReceivedResponse { wireResponse(request.url!, status: status) }
        let challenge = try #require(
            policy.challenge(in: response(401), wwwAuthenticate: [#"Basic realm="R""#], request: request, previousFailureCount: 1))
        #expect(challenge.protectionSpace.host == "Example.com")
        #expect(challenge.protectionSpace.port == 443)
        #expect(challenge.protectionSpace.protocol == "https")
        #expect(challenge.protectionSpace.realm == "R")
        #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
        #expect(challenge.previousFailureCount == 1)
        #expect(challenge.failureResponse.statusCode == 401)
        #expect(policy.challenge(in: response(401), wwwAuthenticate: [], request: request, previousFailureCount: 0) == nil)
        #expect(policy.challenge(in: response(401), wwwAuthenticate: ["Bearer"], request: request, previousFailureCount: 0) == nil)
        #expect(policy.challenge(in: response(403), wwwAuthenticate: ["Basic"], request: request, previousFailureCount: 0) == nil)
    }

    @Test func storedCredentialsAreFoundByTheirSpacesFields() throws {
        let storage = try #require(URLSessionConfiguration.ephemeral.urlCredentialStorage)
        let policy = AuthenticationPolicy(credentialStorage: storage)
        let stored = URLProtectionSpace(
            host: "h.test", port: 80, protocol: "http", realm: "R", authenticationMethod: NSURLAuthenticationMethodDefault)
        storage.set(URLCredential(user: "u", password: "p", persistence: .forSession), for: stored)
        let asked = URLProtectionSpace(
            host: "H.test", port: 80, protocol: "http", realm: "R", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        #expect(policy.defaultCredential(for: asked)?.user == "u")
        let otherRealm = URLProtectionSpace(
            host: "h.test", port: 80, protocol: "http", realm: "S", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let digest = URLProtectionSpace(
            host: "h.test", port: 80, protocol: "http", realm: "R", authenticationMethod: NSURLAuthenticationMethodHTTPDigest)
        #expect(policy.defaultCredential(for: otherRealm) == nil)
        #expect(policy.defaultCredential(for: digest) == nil)

        // Storing for an equal space replaces rather than adds; `.none` is never stored.
        policy.store(URLCredential(user: "u", password: "q", persistence: .forSession), for: asked)
        #expect(storage.allCredentials.count == 1)
        #expect(policy.defaultCredential(for: asked)?.password == "q")
        policy.store(URLCredential(user: "n", password: "p", persistence: .none), for: otherRealm)
        #expect(policy.defaultCredential(for: otherRealm) == nil)
    }
}
