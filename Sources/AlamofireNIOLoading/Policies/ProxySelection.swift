package import AlamofireNIOTransport
import Foundation
package import Logging

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Where a Session's proxies come from: its configuration's `connectionProxyDictionary` when it has
/// one (an empty dictionary means no proxy, as on Apple platforms), else the environment as curl
/// reads it (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`). A proxy without credentials in its
/// URL gets them from the configuration's `urlCredentialStorage`: a credential stored for a proxy
/// protection space with the proxy's host and port. Basic goes with every request up front; a proxy
/// that answers 407 with a Digest challenge is answered once, with the loading layer's Digest code.
package enum ProxySelection {
    /// The proxy settings for a session with `configuration`; `environment`'s warnings go to `logger`.
    package static func settings(
        for configuration: URLSessionConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger
    ) -> ProxySettings {
        var settings: ProxySettings
        if let dictionary = ConfigurationExtras.proxyDictionary(of: configuration) {
            settings = ProxySettings(connectionProxyDictionary: dictionary)
        } else {
            settings = ProxySettings(environment: environment)
            for warning in settings.warnings { logger.warning("\(warning)") }
        }
        if !settings.isEmpty, let storage = configuration.urlCredentialStorage {
            let box = UncheckedCredentialStorage(storage: storage)
            settings.credentialLookup = { proxy in box.credentials(for: proxy) }
        }
        settings.challengeAnswerer = { challenges, method, uri, body, credentials in
            AuthenticationPolicy.proxyAuthorization(
                answering: challenges, user: credentials.user, password: credentials.password, method: method, uri: uri, body: body)
        }
        return settings
    }
}

/// `URLCredentialStorage` is thread-safe but not marked `Sendable` on Linux.
private struct UncheckedCredentialStorage: @unchecked Sendable {
    let storage: URLCredentialStorage

    /// A credential stored for an HTTP or HTTPS proxy protection space at the proxy's host and port:
    /// the space's default credential, else the one with the first user name.
    func credentials(for proxy: TransportProxy) -> TransportProxy.Credentials? {
        guard proxy.kind == .http else { return nil }
        let spaces = storage.allCredentials.filter { space, _ in
            space.isProxy() && space.host.lowercased() == proxy.host.lowercased() && space.port == proxy.port
                && (space.proxyType == NSURLProtectionSpaceHTTPProxy || space.proxyType == NSURLProtectionSpaceHTTPSProxy)
        }
        for (space, credentials) in spaces.sorted(by: { ($0.key.realm ?? "") < ($1.key.realm ?? "") }) {
            let credential = storage.defaultCredential(for: space) ?? credentials.sorted(by: { $0.key < $1.key }).first?.value
            if let credential, let user = credential.user {
                return TransportProxy.Credentials(user: user, password: credential.password ?? "")
            }
        }
        return nil
    }
}
