import AlamofireNIOTransport
import Foundation
import Testing

/// Where proxies come from, tested as values: the environment as curl reads it, and the keys of
/// `connectionProxyDictionary`.
@Suite struct ProxySettingsTests {
    let httpURL = URL(string: "http://api.example.com/get")!
    let httpsURL = URL(string: "https://api.example.com/get")!

    @Test func httpProxyIsReadInLowerCaseOnly() {
        #expect(ProxySettings(environment: ["HTTP_PROXY": "http://proxy:3128"]).proxy(for: httpURL) == nil)
        let settings = ProxySettings(environment: ["http_proxy": "http://proxy:3128"])
        #expect(settings.proxy(for: httpURL) == TransportProxy(kind: .http, host: "proxy", port: 3128))
        #expect(settings.proxy(for: httpsURL) == nil)
    }

    @Test func httpsProxyPrefersLowerCaseAndFallsBackToUpperCase() {
        let both = ProxySettings(environment: ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"])
        #expect(both.proxy(for: httpsURL)?.host == "lower")
        let upper = ProxySettings(environment: ["HTTPS_PROXY": "http://upper:2"])
        #expect(upper.proxy(for: httpsURL) == TransportProxy(kind: .http, host: "upper", port: 2))
        #expect(upper.proxy(for: httpURL) == nil)
    }

    @Test func allProxyServesBothSchemesWhenTheirOwnIsUnsetOrEmpty() {
        let settings = ProxySettings(environment: ["ALL_PROXY": "socks5h://gate:9050", "http_proxy": "", "https_proxy": "http://tls:8443"])
        #expect(settings.proxy(for: httpURL) == TransportProxy(kind: .socks5(resolvesRemotely: true), host: "gate", port: 9050))
        #expect(settings.proxy(for: httpsURL)?.host == "tls")
        let lower = ProxySettings(environment: ["all_proxy": "http://lower:1", "ALL_PROXY": "http://upper:2"])
        #expect(lower.proxy(for: httpURL)?.host == "lower")
    }

    @Test func proxyURLsAreReadAsCurlReadsThem() throws {
        func proxy(_ text: String) -> TransportProxy? { ProxySettings(environment: ["http_proxy": text]).httpProxy }
        // No scheme means http; no port means 1080.
        #expect(proxy("proxy.corp") == TransportProxy(kind: .http, host: "proxy.corp", port: 1080))
        #expect(proxy("http://proxy.corp/") == TransportProxy(kind: .http, host: "proxy.corp", port: 1080))
        #expect(proxy("socks5://10.0.0.1:1081") == TransportProxy(kind: .socks5(resolvesRemotely: false), host: "10.0.0.1", port: 1081))
        #expect(proxy("SOCKS5H://gate") == TransportProxy(kind: .socks5(resolvesRemotely: true), host: "gate", port: 1080))
        #expect(proxy("http://[::1]:3128") == TransportProxy(kind: .http, host: "::1", port: 3128))
        let withCredentials = try #require(proxy("http://al%40ice:p%3Ass@proxy:8080"))
        #expect(withCredentials.credentials == TransportProxy.Credentials(user: "al@ice", password: "p:ss"))
        #expect(proxy("http://bob@proxy:8080")?.credentials == TransportProxy.Credentials(user: "bob", password: ""))
        // Decoded once: an encoded percent sign stays a percent sign.
        #expect(proxy("http://bob:p%2541@proxy:8080")?.credentials == TransportProxy.Credentials(user: "bob", password: "p%41"))
    }

    @Test func malformedProxyURLsAreIgnoredWithAWarning() {
        for bad in ["ftp://proxy:21", "https://proxy:443", "http://", "http://proxy:99999", "http://proxy:80/path", "http://pro xy:80"] {
            let settings = ProxySettings(environment: ["https_proxy": bad])
            #expect(settings.httpsProxy == nil, "\(bad)")
            #expect(settings.warnings.count == 1, "\(bad)")
            #expect(settings.warnings.first?.hasPrefix("https_proxy is ignored: ") == true, "\(bad)")
        }
        // A malformed variable does not hide a good fallback.
        let fallback = ProxySettings(environment: ["https_proxy": "gopher://x", "all_proxy": "http://good:1"])
        #expect(fallback.httpsProxy?.host == "good")
        #expect(fallback.warnings.count == 1)
    }

    @Test func noProxyMatchesNamesSubdomainsAddressesAndRanges() {
        let exceptions = ProxyExceptions(
            "example.com, .internal.corp,host.test:8080,192.168.1.10, 10.0.0.0/8,::1,[fd00::1]:443,fe80::/10".split(separator: ",").map(
                String.init))
        for direct in [
            "example.com", "www.example.com", "EXAMPLE.com", "example.com.", "internal.corp", "a.b.internal.corp", "host.test",
            "192.168.1.10", "10.1.2.3", "::1", "[::1]", "fd00::1", "fe80::abcd",
        ] {
            #expect(exceptions.matches(host: direct), "\(direct)")
        }
        for proxied in ["notexample.com", "example.com.org", "corp", "192.168.1.11", "11.0.0.1", "::2", "fec0::1", "host.test2"] {
            #expect(!exceptions.matches(host: proxied), "\(proxied)")
        }
        #expect(ProxyExceptions(["*"]).matches(host: "anything.at.all"))
        #expect(!ProxyExceptions(["*.example.com"]).matches(host: "example.org"))
        #expect(ProxyExceptions(["*.example.com"]).matches(host: "a.example.com"))
        // A name entry never matches an address, and an address entry never a name.
        #expect(!ProxyExceptions(["1.2.3.4"]).matches(host: "1.2.3.4.example.com"))
        // Bad entries are skipped, the rest still apply.
        let mixed = ProxyExceptions(["10.0.0.0/33", "", "  ", "ok.test"])
        #expect(!mixed.matches(host: "10.0.0.1"))
        #expect(mixed.matches(host: "ok.test"))
    }

    @Test func noProxyPrefersLowerCaseAndAppliesToEveryScheme() {
        let settings = ProxySettings(environment: [
            "http_proxy": "http://proxy:1", "https_proxy": "http://proxy:1", "no_proxy": "api.example.com", "NO_PROXY": "other.com",
        ])
        #expect(settings.proxy(for: httpURL) == nil)
        #expect(settings.proxy(for: httpsURL) == nil)
        #expect(settings.proxy(for: URL(string: "http://other.com/")!) != nil)
        let upper = ProxySettings(environment: ["http_proxy": "http://proxy:1", "NO_PROXY": "example.com"])
        #expect(upper.proxy(for: httpURL) == nil)
        #expect(upper.proxy(for: URL(string: "http://[::1]:8080/")!) != nil)
    }

    @Test func credentialLookupFillsInOnlyWhenTheProxyHasNone() {
        var settings = ProxySettings(environment: ["http_proxy": "http://proxy:1", "https_proxy": "http://me:mine@proxy:2"])
        settings.credentialLookup = { proxy in TransportProxy.Credentials(user: "stored-\(proxy.port)", password: "secret") }
        #expect(settings.proxy(for: httpURL)?.credentials == TransportProxy.Credentials(user: "stored-1", password: "secret"))
        #expect(settings.proxy(for: httpsURL)?.credentials == TransportProxy.Credentials(user: "me", password: "mine"))
    }

    @Test func connectionProxyDictionaryKeys() {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPEnable": 1, "HTTPProxy": "web.proxy", "HTTPPort": 8080,
            "HTTPSEnable": NSNumber(value: true), "HTTPSProxy": "tls.proxy", "HTTPSPort": NSNumber(value: 8443),
            "ExceptionsList": ["*.local", "169.254/16", "localhost"],
        ])
        #expect(settings.proxy(for: httpURL) == TransportProxy(kind: .http, host: "web.proxy", port: 8080))
        #expect(settings.proxy(for: httpsURL) == TransportProxy(kind: .http, host: "tls.proxy", port: 8443))
        #expect(settings.proxy(for: URL(string: "http://printer.local/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://169.254.3.4/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://localhost:8080/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://169.255.0.1/")!) != nil)
    }

    @Test func connectionProxyDictionarySOCKSServesWhatHasNoProxyOfItsOwn() {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPEnable": false, "HTTPProxy": "off.proxy", "SOCKSEnable": true, "SOCKSProxy": "socks.proxy", "SOCKSPort": "1081",
            "ExcludeSimpleHostnames": true,
        ])
        let socks = TransportProxy(kind: .socks5(resolvesRemotely: true), host: "socks.proxy", port: 1081)
        #expect(settings.proxy(for: httpURL) == socks)
        #expect(settings.proxy(for: httpsURL) == socks)
        #expect(settings.proxy(for: URL(string: "http://intranet/")!) == nil)
        // A host without an enable key is enabled; default ports are 80, 443 and 1080.
        let implicit = ProxySettings(connectionProxyDictionary: ["HTTPProxy": "p", "HTTPSProxy": "q"])
        #expect(implicit.proxy(for: httpURL) == TransportProxy(kind: .http, host: "p", port: 80))
        #expect(implicit.proxy(for: httpsURL) == TransportProxy(kind: .http, host: "q", port: 443))
        // An empty dictionary means no proxy.
        #expect(ProxySettings(connectionProxyDictionary: [:]).isEmpty)
    }
}
