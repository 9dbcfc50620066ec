public import Foundation

/// How a URL is written into logs and telemetry (AlamofireNIO's, not Alamofire's): OpenTelemetry
/// asks for `url.full` without credentials, and query values often hold tokens and signatures.
public struct URLRedaction: Sendable, Equatable {
    /// Which query values are replaced.
    public enum QueryValues: Sendable, Equatable {
        /// Every value.
        case all
        /// None.
        case none
        /// The values of these names, compared case-insensitively.
        case named(Set<String>)
    }

    /// What redacted parts become.
    public static let placeholder = "REDACTED"

    /// Whether a user name and password are replaced.
    public var redactsCredentials: Bool
    /// Which query values are replaced.
    public var queryValues: QueryValues

    /// Credentials and every query value redacted.
    public static let `default` = URLRedaction(redactsCredentials: true, queryValues: .all)
    /// Credentials redacted, and the query values OpenTelemetry names as sensitive by default
    /// (`AWSAccessKeyId`, `Signature`, `sig`, `X-Goog-Signature`).
    public static let openTelemetry = URLRedaction(
        redactsCredentials: true, queryValues: .named(["awsaccesskeyid", "signature", "sig", "x-goog-signature"]))

    /// Creates a redaction.
    public init(redactsCredentials: Bool, queryValues: QueryValues) {
        self.redactsCredentials = redactsCredentials
        if case .named(let names) = queryValues {
            self.queryValues = .named(Set(names.map { $0.lowercased() }))
        } else {
            self.queryValues = queryValues
        }
    }

    /// `url` with its secrets replaced by ``placeholder``; names and the fragment are kept.
    public func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            // Unreadable as components: only what cannot hold a secret.
            let port = url.port.map { ":\($0)" } ?? ""
            return "\(url.scheme ?? "unknown")://\(url.host ?? Self.placeholder)\(port)\(url.path)"
        }
        if redactsCredentials {
            if components.user != nil { components.percentEncodedUser = Self.placeholder }
            if components.password != nil { components.percentEncodedPassword = Self.placeholder }
        }
        if let items = components.percentEncodedQueryItems, queryValues != .none {
            components.percentEncodedQueryItems = items.map { item in
                guard item.value != nil, redacts(item.name) else { return item }
                return URLQueryItem(name: item.name, value: Self.placeholder)
            }
        }
        return components.string ?? Self.placeholder
    }

    private func redacts(_ name: String) -> Bool {
        switch queryValues {
        case .all: true
        case .none: false
        case .named(let names): names.contains(name.removingPercentEncoding?.lowercased() ?? name.lowercased())
        }
    }
}
