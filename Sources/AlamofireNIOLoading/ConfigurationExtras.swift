import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Settings that `URLSessionConfiguration` has on Apple platforms and not in FoundationNetworking
/// (`tlsMinimumSupportedProtocolVersion`, `tlsMaximumSupportedProtocolVersion`, and
/// `waitsForConnectivity`, which it declares unavailable), kept inside the configuration itself so
/// that they travel with it.
///
/// They live in its `connectionProxyDictionary` under keys of their own: it is the only open-ended
/// field, and the only place that survives the copies URLSession makes (`URLSession(configuration:)`
/// keeps the fields it knows, and `session.configuration` hands out another copy). The proxy
/// selection reads the dictionary without them (``proxyDictionary(of:)``), so setting one never
/// turns the environment's proxies off. Assigning a whole new `connectionProxyDictionary` replaces
/// them too: set them after it.
package enum ConfigurationExtras {
    /// The configuration's TLS version settings, as the raw values of Security's `tls_protocol_version_t`,
    /// and whether its tasks wait for connectivity (1) or not (0, or nothing stored).
    package enum Key: String, CaseIterable, Sendable {
        case minimumTLSVersion = "AlamofireNIO.tlsMinimumSupportedProtocolVersion"
        case maximumTLSVersion = "AlamofireNIO.tlsMaximumSupportedProtocolVersion"
        case waitsForConnectivity = "AlamofireNIO.waitsForConnectivity"
    }

    /// Marks a dictionary that was nil (proxies from the environment) before an extra was set.
    static let wasNilMarker = "AlamofireNIO.connectionProxyDictionaryWasNil"

    /// The value stored for `key`, if any.
    package static func value(_ key: Key, in configuration: URLSessionConfiguration) -> UInt16? {
        (configuration.connectionProxyDictionary?[key.rawValue] as? NSNumber)?.uint16Value
    }

    /// Whether `configuration`'s tasks wait for a route instead of failing offline (`waitsForConnectivity`).
    package static func waitsForConnectivity(_ configuration: URLSessionConfiguration) -> Bool {
        value(.waitsForConnectivity, in: configuration) == 1
    }

    /// Stores `value` for `key` (nil removes it), leaving the user's proxy settings as they were.
    package static func set(_ value: UInt16?, for key: Key, in configuration: URLSessionConfiguration) {
        var dictionary = configuration.connectionProxyDictionary ?? [wasNilMarker: true]
        dictionary[key.rawValue] = value.map { NSNumber(value: $0) }
        let keepsExtras = Key.allCases.contains { dictionary[$0.rawValue] != nil }
        if !keepsExtras, dictionary[wasNilMarker] != nil {
            configuration.connectionProxyDictionary = nil
        } else {
            configuration.connectionProxyDictionary = dictionary
        }
    }

    /// The configuration's `connectionProxyDictionary` as its user set it: without the extras, and
    /// nil when it was nil before they were set and nothing else has been added since.
    package static func proxyDictionary(of configuration: URLSessionConfiguration) -> [AnyHashable: Any]? {
        guard var dictionary = configuration.connectionProxyDictionary else { return nil }
        let wasNil = dictionary.removeValue(forKey: wasNilMarker) != nil
        for key in Key.allCases { dictionary[key.rawValue] = nil }
        return wasNil && dictionary.isEmpty ? nil : dictionary
    }
}
