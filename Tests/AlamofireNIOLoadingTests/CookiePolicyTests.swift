import Foundation
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 6265 parsing, storing and matching, as plain values against an in-memory storage.
@Suite struct CookiePolicyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func policy(_ acceptPolicy: HTTPCookie.AcceptPolicy = .always) -> CookiePolicy {
        CookiePolicy(storage: URLSessionConfiguration.ephemeral.httpCookieStorage, sendsCookies: true, acceptPolicy: acceptPolicy)
    }

    static func request(_ url: String) -> URLRequest { URLRequest(url: URL(string: url)!) }

    static func cookieHeader(_ policy: CookiePolicy, _ url: String) -> String? {
        var request = request(url)
        policy.prepare(&request)
        return request.value(forHTTPHeaderField: "Cookie")
    }

    @Test func parsesNameValueAndEveryAttribute() throws {
        let parsed = try #require(
            SetCookie(
                " id = a=b ; Domain=.Example.COM; Path=/docs; Secure; HttpOnly; SameSite=Lax; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
                now: Self.now))
        #expect(parsed.name == "id")
        #expect(parsed.value == "a=b")
        #expect(parsed.domain == "example.com")
        #expect(parsed.path == "/docs")
        #expect(parsed.isSecure && parsed.isHTTPOnly)
        #expect(parsed.sameSite == "Lax")
        #expect(parsed.expires == Date(timeIntervalSince1970: 1_623_233_894))
    }

    @Test func maxAgeWinsOverExpiresWhereverItComes() throws {
        let parsed = try #require(SetCookie("a=1; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT", now: Self.now))
        #expect(parsed.expires == Self.now.addingTimeInterval(60))
        #expect(SetCookie("a=1; Max-Age=0", now: Self.now)?.expires == .distantPast)
        #expect(SetCookie("a=1; Max-Age=-5", now: Self.now)?.expires == .distantPast)
        // Not a number: the attribute is ignored.
        #expect(SetCookie("a=1; Max-Age=1e3", now: Self.now)?.expires == nil)
    }

    @Test func headersThatSetNoCookieAreIgnored() {
        #expect(SetCookie("novalue", now: Self.now) == nil)
        #expect(SetCookie("=value", now: Self.now) == nil)
        #expect(SetCookie("", now: Self.now) == nil)
        #expect(SetCookie("a=", now: Self.now)?.value == "")
        // A path that is not a path is the default path.
        #expect(SetCookie("a=1; Path=docs", now: Self.now)?.path == nil)
    }

    @Test func cookieDatesInEveryFormatServersSend() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 06 Nov 1994 08:49:37 GMT
        #expect(CookieDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(CookieDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(CookieDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(CookieDate.parse("6 nov 1994 8:49:37") == expected)
        #expect(CookieDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(CookieDate.parse("Wed, 31 Feb 2024 10:00:00 GMT") == nil)
        #expect(CookieDate.parse("Wed, 10 Feb 2024 25:00:00 GMT") == nil)
        #expect(CookieDate.parse("tomorrow") == nil)
        #expect(CookieDate.parse("") == nil)
    }

    @Test func defaultPathIsTheDirectoryOfTheRequestPath() {
        #expect(SetCookie.defaultPath(of: URL(string: "http://h/a/b/c")!) == "/a/b")
        #expect(SetCookie.defaultPath(of: URL(string: "http://h/a")!) == "/")
        #expect(SetCookie.defaultPath(of: URL(string: "http://h")!) == "/")
        #expect(SetCookie.defaultPath(of: URL(string: "http://h/a/")!) == "/a")
    }

    @Test func hostOnlyCookiesGoOnlyToTheirHostAndDomainCookiesToSubdomains() {
        let policy = Self.policy()
        policy.store(["host=1", "dom=2; Domain=example.com"], for: Self.request("http://www.example.com/"))
        #expect(Self.cookieHeader(policy, "http://www.example.com/") == "host=1; dom=2")
        #expect(Self.cookieHeader(policy, "http://a.www.example.com/") == "dom=2")
        #expect(Self.cookieHeader(policy, "http://example.com/") == "dom=2")
        #expect(Self.cookieHeader(policy, "http://notexample.com/") == nil)
        // Stored as Apple stores them: a domain cookie's domain has a leading dot.
        let domains = Set(policy.storage?.cookies?.map(\.domain) ?? [])
        #expect(domains == ["www.example.com", ".example.com"])
    }

    @Test func aDomainTheHostIsNotWithinIsRejected() {
        let policy = Self.policy()
        policy.store(["a=1; Domain=other.com", "b=2; Domain=ww.example.com"], for: Self.request("http://www.example.com/"))
        #expect(policy.storage?.cookies?.isEmpty == true)
    }

    /// A Domain with no dot of its own would reach every host under it ("supercookies").
    @Test func aDomainWithoutADotIsRefusedUnlessItIsTheHost() {
        let policy = Self.policy()
        policy.store(["super=1; Domain=com", "dotted=1; Domain=.com"], for: Self.request("http://evil.com/"))
        #expect(policy.storage?.cookies?.isEmpty == true)
        #expect(Self.cookieHeader(policy, "http://bank.com/") == nil)
        policy.store(["local=1; Domain=localhost"], for: Self.request("http://localhost/"))
        #expect(Self.cookieHeader(policy, "http://localhost/") == "local=1")
    }

    /// RFC 6265 §5.3 step 5 with the Public Suffix List: a Domain that is a public suffix is
    /// refused, unless it is the host itself, which gets a host-only cookie.
    @Test func aPublicSuffixDomainIsRefusedOrHostOnly() {
        let policy = Self.policy()
        policy.store(["uk=1; Domain=co.uk", "io=1; Domain=github.io"], for: Self.request("http://evil.co.uk/"))
        policy.store(["io=1; Domain=github.io"], for: Self.request("http://attacker.github.io/"))
        #expect(policy.storage?.cookies?.isEmpty == true)
        #expect(Self.cookieHeader(policy, "http://bank.co.uk/") == nil)
        #expect(Self.cookieHeader(policy, "http://victim.github.io/") == nil)
        // The site's own registrable domain is fine.
        policy.store(["site=1; Domain=example.co.uk"], for: Self.request("http://www.example.co.uk/"))
        #expect(Self.cookieHeader(policy, "http://shop.example.co.uk/") == "site=1")
        // A host that is itself a public suffix keeps its cookie, for itself alone.
        policy.store(["own=1; Domain=github.io"], for: Self.request("http://github.io/"))
        #expect(Self.cookieHeader(policy, "http://github.io/") == "own=1")
        #expect(Self.cookieHeader(policy, "http://victim.github.io/") == nil)
        #expect(policy.storage?.cookies?.first { $0.name == "own" }?.domain == "github.io")
    }

    @Test func publicSuffixListFollowsItsFormalAlgorithm() {
        for suffix in [
            "com", "co.uk", "CO.UK", ".co.uk", "co.uk.", "github.io", "localhost", "foo.ck", "a..b", "", "xn--55qx5d.cn", "公司.cn",
        ] {
            #expect(PublicSuffixList.isPublicSuffix(suffix), "\(suffix)")
        }
        for domain in ["example.com", "example.co.uk", "user.github.io", "www.ck", "a.www.ck", "example.xn--55qx5d.cn"] {
            #expect(!PublicSuffixList.isPublicSuffix(domain), "\(domain)")
        }
    }

    @Test func pathsMatchOnSegmentBoundariesLongestFirst() {
        let policy = Self.policy()
        policy.store(["root=1; Path=/", "docs=2; Path=/docs", "deep=3; Path=/docs/api/"], for: Self.request("http://h.test/"))
        #expect(Self.cookieHeader(policy, "http://h.test/docs/api/x") == "deep=3; docs=2; root=1")
        #expect(Self.cookieHeader(policy, "http://h.test/docs") == "docs=2; root=1")
        #expect(Self.cookieHeader(policy, "http://h.test/docsets") == "root=1")
        #expect(Self.cookieHeader(policy, "http://h.test/docs/api") == "docs=2; root=1")
    }

    @Test func secureCookiesGoOnlyOverHTTPS() {
        let policy = Self.policy()
        policy.store(["s=1; Secure", "p=2"], for: Self.request("https://h.test/"))
        let overHTTPS = Self.cookieHeader(policy, "https://h.test/")?.split(separator: "; ").map(String.init)
        #expect(Set(overHTTPS ?? []) == ["s=1", "p=2"] && overHTTPS?.count == 2)
        #expect(Self.cookieHeader(policy, "http://h.test/") == "p=2")
    }

    @Test func anExpiredCookieDeletesTheStoredOne() {
        let policy = Self.policy()
        let request = Self.request("http://h.test/")
        policy.store(["a=1; Path=/", "b=2; Path=/"], for: request)
        policy.store(["a=gone; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], for: request)
        #expect(Self.cookieHeader(policy, "http://h.test/") == "b=2")
        policy.store(["b=; Max-Age=0"], for: request)
        #expect(Self.cookieHeader(policy, "http://h.test/") == nil)
        #expect(policy.storage?.cookies?.isEmpty == true)
    }

    @Test func cookiesWithoutExpiryAreSessionOnlyAndOthersKeepTheirDates() throws {
        let policy = Self.policy()
        policy.store(["session=1", "lasting=2; Max-Age=3600; HttpOnly"], for: Self.request("http://h.test/"))
        let cookies = try #require(policy.storage?.cookies)
        let session = try #require(cookies.first { $0.name == "session" })
        let lasting = try #require(cookies.first { $0.name == "lasting" })
        #expect(session.isSessionOnly && session.expiresDate == nil)
        #expect(!lasting.isSessionOnly && lasting.isHTTPOnly)
        #expect(abs((lasting.expiresDate?.timeIntervalSinceNow ?? 0) - 3600) < 60)
    }

    @Test func acceptPoliciesAndCookieSwitches() {
        let never = Self.policy(.never)
        never.store(["a=1"], for: Self.request("http://h.test/"))
        #expect(never.storage?.cookies?.isEmpty == true)

        let mainDocument = Self.policy(.onlyFromMainDocumentDomain)
        var thirdParty = Self.request("http://tracker.test/")
        thirdParty.mainDocumentURL = URL(string: "http://h.test/")
        mainDocument.store(["t=1"], for: thirdParty)
        var firstParty = Self.request("http://h.test/")
        firstParty.mainDocumentURL = URL(string: "http://h.test/page")
        mainDocument.store(["f=1"], for: firstParty)
        // Without a main document URL (Alamofire's requests), cookies are accepted.
        mainDocument.store(["n=1"], for: Self.request("http://other.test/"))
        #expect(Set(mainDocument.storage?.cookies?.map(\.name) ?? []) == ["f", "n"])

        let policy = Self.policy()
        var unhandled = Self.request("http://h.test/")
        unhandled.httpShouldHandleCookies = false
        policy.store(["a=1"], for: unhandled)
        #expect(policy.storage?.cookies?.isEmpty == true)
        policy.store(["a=1"], for: Self.request("http://h.test/"))
        policy.prepare(&unhandled)
        #expect(unhandled.value(forHTTPHeaderField: "Cookie") == nil)

        let notSending = CookiePolicy(storage: policy.storage, sendsCookies: false, acceptPolicy: .always)
        #expect(Self.cookieHeader(notSending, "http://h.test/") == nil)

        // A request that sets its own Cookie header keeps it.
        var own = Self.request("http://h.test/")
        own.setValue("mine=1", forHTTPHeaderField: "Cookie")
        policy.prepare(&own)
        #expect(own.value(forHTTPHeaderField: "Cookie") == "mine=1")
    }

    @Test func aCookieSetAgainReplacesItsValue() {
        let policy = Self.policy()
        policy.store(["a=1"], for: Self.request("http://h.test/"))
        policy.store(["a=2"], for: Self.request("http://h.test/"))
        #expect(Self.cookieHeader(policy, "http://h.test/") == "a=2")
    }
}
