import AlamofireNIO
import Foundation

extension Exchange {
    /// The `URLRequest` of a plan: method, URL, the items' headers, and a JSON or URL-encoded body
    /// with HTTPie's `Content-Type` and `Accept` (a multipart body is added when it is sent).
    static func urlRequest(for plan: RequestPlan, bearer: String?) throws -> URLRequest {
        if case .multipart(_, let files) = plan.body {
            for file in files where !FileManager.default.isReadableFile(atPath: file.value) {
                throw SetupError(description: "\(file.name)@\(file.value): no such file, or it cannot be read")
            }
        }
        var headers = HTTPHeaders()
        if let bearer { headers.add(.authorization(bearerToken: bearer)) }
        for header in plan.headers { headers.add(header) }
        func setDefault(_ name: String, _ value: String) {
            if headers.value(for: name) == nil, !plan.removedHeaders.contains(name.lowercased()) { headers.add(name: name, value: value) }
        }
        var request = try URLRequest(url: plan.url, method: plan.method, headers: [:])
        switch plan.body {
        case .json(let value):
            setDefault("Content-Type", "application/json")
            setDefault("Accept", "application/json, */*;q=0.5")
            request.httpBody = Data(value.serialized.utf8)
        case .form(let fields):
            setDefault("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
            request.httpBody = Data(
                fields.map { URLEncoding.default.escape($0.name) + "=" + URLEncoding.default.escape($0.value) }.joined(separator: "&").utf8)
        case .none, .multipart: break
        }
        setDefault("Accept", "*/*")
        request.headers = headers
        return request
    }

    /// `connectionProxyDictionary` for `--proxy` values; a proxy URL's user and password are kept
    /// in the shared credential storage, where the session looks for a proxy's credentials.
    static func proxyDictionary(_ proxies: [(scheme: String, url: URL)]) -> [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = [:]
        for (scheme, url) in proxies {
            let host = url.host ?? ""
            let isSOCKS = url.scheme?.lowercased().hasPrefix("socks") == true
            let prefix = isSOCKS ? "SOCKS" : scheme == "https" ? "HTTPS" : "HTTP"
            let port = url.port ?? (isSOCKS ? 1080 : 80)
            dictionary["\(prefix)Enable"] = 1
            dictionary["\(prefix)Proxy"] = host
            dictionary["\(prefix)Port"] = port
            if let user = url.user, !isSOCKS {
                let space = URLProtectionSpace(
                    proxyHost: host, port: port, type: NSURLProtectionSpaceHTTPProxy, realm: nil, authenticationMethod: nil)
                URLCredentialStorage.shared.setDefaultCredential(
                    URLCredential(
                        user: user.removingPercentEncoding ?? user, password: url.password?.removingPercentEncoding ?? "",
                        persistence: .forSession),
                    for: space)
            }
        }
        return dictionary
    }

    /// The certificates in a PEM or DER file.
    static func certificates(_ path: String) throws -> [SecCertificate] {
        let certificates: [SecCertificate]
        do { certificates = try SecCertificate.certificates(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw SetupError(description: "cannot read certificates from \(path): \(error.localizedDescription)")
        }
        guard !certificates.isEmpty else { throw SetupError(description: "\(path) holds no certificate") }
        return certificates
    }

    /// A client identity: PKCS#12 by its extension, else a PEM chain with its key (in `key`, or in
    /// the same file).
    static func identity(certificate: String, key: String?, password: String?) throws -> SecIdentity {
        let url = URL(fileURLWithPath: certificate)
        do {
            if ["p12", "pfx"].contains(url.pathExtension.lowercased()) {
                return try SecIdentity(pkcs12Data: Data(contentsOf: url), password: password)
            }
            return try SecIdentity(certificateChainFile: url, privateKeyFile: URL(fileURLWithPath: key ?? certificate))
        } catch {
            throw SetupError(description: "cannot read the client certificate \(certificate): \(error.localizedDescription)")
        }
    }

    /// Why the session could not be set up.
    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }
}

/// A trust manager that gives every host the same evaluator (`--verify no` disables evaluation
/// for the redirects' hosts too).
final class EveryHostTrustManager: ServerTrustManager, @unchecked Sendable {
    private let evaluator: any ServerTrustEvaluating

    init(evaluator: any ServerTrustEvaluating) {
        self.evaluator = evaluator
        super.init(allHostsMustBeEvaluated: false, evaluators: [:])
    }

    override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? { evaluator }
}
