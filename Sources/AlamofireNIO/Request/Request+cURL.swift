import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// cURL representation of the instance: the method, credentials, cookies and headers the session
    /// would send (the session's headers under the request's own), the body and the URL.
    ///
    /// - Returns: The cURL equivalent of the instance.
    public func cURLDescription() -> String {
        guard let request = lastRequest, let url = request.url, let host = url.host, let method = request.httpMethod else {
            return "$ curl command could not be created"
        }
        // Without its session (gone), the configuration's credentials, cookies and headers are left out.
        let configuration = session?.configuration
        var components = ["$ curl -v", "-X \(method)"]

        if let credentialStorage = configuration?.urlCredentialStorage {
            let protectionSpace = URLProtectionSpace(
                host: host, port: url.port ?? 0, protocol: url.scheme, realm: host, authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            )
            if let credentials = credentialStorage.credentials(for: protectionSpace)?.values {
                for credential in credentials {
                    guard let user = credential.user, let password = credential.password else { continue }
                    components.append("-u \(user):\(password)")
                }
            } else if let credential, let user = credential.user, let password = credential.password {
                components.append("-u \(user):\(password)")
            }
        }

        if let configuration, configuration.httpShouldSetCookies, let cookies = configuration.httpCookieStorage?.cookies(for: url),
            !cookies.isEmpty
        {
            components.append("-b \"\(cookies.map { "\($0.name)=\($0.value)" }.joined(separator: ";"))\"")
        }

        var headers = HTTPHeaders()
        for header in configuration?.headers ?? [] where header.name != "Cookie" { headers[header.name] = header.value }
        for header in request.headers where header.name != "Cookie" { headers[header.name] = header.value }
        for header in headers {
            components.append("-H \"\(header.name): \(header.value.replacingOccurrences(of: "\"", with: "\\\""))\"")
        }

        if let body = request.httpBody {
            let escaped = String(decoding: body, as: UTF8.self)
                .replacingOccurrences(of: "\\\"", with: "\\\\\"")
                .replacingOccurrences(of: "\"", with: "\\\"")
            components.append("-d \"\(escaped)\"")
        }
        components.append("\"\(url.absoluteString)\"")
        return components.joined(separator: " \\\n\t")
    }
}
