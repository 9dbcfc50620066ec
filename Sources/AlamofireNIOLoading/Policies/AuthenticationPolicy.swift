package import Foundation

#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// HTTP authentication as URLSession performs it: a 401 whose `WWW-Authenticate` offers Basic or
/// Digest becomes a challenge for the delegate; a credential it answers with (or, by default, the
/// configuration's `urlCredentialStorage`) makes the `Authorization` header of one more exchange.
///
/// Of several offers the strongest is answered: Digest over Basic, SHA-512-256 over SHA-256 over
/// MD5. Stored credentials are found by matching host, port, scheme, realm and method field by
/// field: FoundationNetworking's `URLProtectionSpace` compares by identity, so its
/// `defaultCredential(for:)` finds nothing for an equal space made elsewhere. A credential whose
/// persistence is `.forSession` or `.permanent` is stored once a response accepts it.
package struct AuthenticationPolicy: @unchecked Sendable {
    // @unchecked: URLCredentialStorage is thread-safe (its own queue) but not marked Sendable.
    let credentialStorage: URLCredentialStorage?

    package init(credentialStorage: URLCredentialStorage? = nil) {
        self.credentialStorage = credentialStorage
    }

    /// The challenge in a 401 response with these `WWW-Authenticate` values, if it offers a scheme
    /// this policy answers.
    func challenge(
        in response: ReceivedResponse, wwwAuthenticate: [String], request: URLRequest, previousFailureCount: Int
    ) -> LoadingChallenge? {
        guard response.statusCode == 401, let url = request.url, let host = url.host,
            let offer = Self.strongestOffer(AuthenticationChallengeOffer.parse(wwwAuthenticate)),
            let failureResponse = response.httpURLResponse
        else { return nil }
        let scheme = url.scheme?.lowercased() ?? "http"
        let space = URLProtectionSpace(
            host: host, port: url.port ?? (scheme == "https" ? 443 : 80), protocol: scheme, realm: offer.parameters["realm"],
            authenticationMethod: offer.scheme == "digest" ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic)
        return LoadingChallenge(
            protectionSpace: space, previousFailureCount: previousFailureCount, failureResponse: failureResponse, offer: offer)
    }

    /// Digest with the strongest supported algorithm, else Basic; nil when neither is offered.
    static func strongestOffer(_ offers: [AuthenticationChallengeOffer]) -> AuthenticationChallengeOffer? {
        let digests = offers.filter { $0.scheme == "digest" && $0.parameters["nonce"] != nil }
            .compactMap { offer in HTTPAuthorization.DigestAlgorithm(challenge: offer).map { (offer, $0) } }
        if let strongest = digests.max(by: { $0.1.strength < $1.1.strength }) { return strongest.0 }
        return offers.first { $0.scheme == "basic" }
    }

    /// The `Proxy-Authorization` answering a proxy's 407 (its `Proxy-Authenticate` values) when the
    /// strongest offer is Digest; nil for Basic (the transport sends it up front) or anything else.
    package static func proxyAuthorization(
        answering proxyAuthenticate: [String], user: String, password: String, method: String, uri: String, body: [UInt8]?
    ) -> String? {
        guard let offer = strongestOffer(AuthenticationChallengeOffer.parse(proxyAuthenticate)), offer.scheme == "digest" else {
            return nil
        }
        return HTTPAuthorization.digest(
            user: user, password: password, challenge: offer, method: method, uri: uri, body: body.map { Data($0) })
    }

    /// The `Authorization` value `credential` makes for `challenge` on `request` (whose body, if in
    /// memory, is `body`); nil when the credential has no user and password or the offer cannot be
    /// answered.
    func authorization(answering challenge: LoadingChallenge, with credential: URLCredential, request: URLRequest, body: Data?) -> String? {
        guard let user = credential.user, let password = credential.password, let url = request.url else { return nil }
        switch challenge.offer.scheme {
        case "basic":
            return HTTPAuthorization.basic(user: user, password: password)
        case "digest":
            return HTTPAuthorization.digest(
                user: user, password: password, challenge: challenge.offer, method: request.httpMethod ?? "GET",
                uri: HTTPAuthorization.requestTarget(of: url), body: body)
        default:
            return nil
        }
    }

    /// The configuration's credential for `space`: its default one, else the only one stored.
    func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        guard let credentialStorage else { return nil }
        for (stored, credentials) in credentialStorage.allCredentials where Self.matches(stored, space) {
            if let preferred = credentialStorage.defaultCredential(for: stored) { return preferred }
            if credentials.count == 1 { return credentials.first?.value }
        }
        return nil
    }

    /// Keeps a credential a response accepted, as its persistence asks.
    func store(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard let credentialStorage, credential.persistence != .none, credential.user != nil else { return }
        // Replace an equal space's credential for the same user rather than add a second space.
        let stored = credentialStorage.allCredentials.keys.first { Self.matches($0, space) } ?? space
        let preferred = credentialStorage.defaultCredential(for: stored)
        if preferred == nil || preferred?.user == credential.user {
            credentialStorage.setDefaultCredential(credential, for: stored)
        } else {
            credentialStorage.set(credential, for: stored)
        }
    }

    /// Whether `space` belongs to `url`'s origin (scheme, host and port): a credential given for a
    /// request answers only its own origin's challenges, never a redirect target's.
    package static func protectionSpace(_ space: URLProtectionSpace, isOnOriginOf url: URL) -> Bool {
        guard let scheme = space.protocol, let target = URL(string: "\(scheme)://\(space.host.bracketedIfIPv6):\(space.port)/") else {
            return false
        }
        return RedirectPolicy.isSameOrigin(url, target)
    }

    /// Whether two protection spaces are the same: host (any case), port, protocol, realm and
    /// method, with the default method counting as Basic and an empty realm as none, as on Apple platforms.
    static func matches(_ first: URLProtectionSpace, _ second: URLProtectionSpace) -> Bool {
        func method(_ space: URLProtectionSpace) -> String {
            space.authenticationMethod == NSURLAuthenticationMethodDefault ? NSURLAuthenticationMethodHTTPBasic : space.authenticationMethod
        }
        return first.host.lowercased() == second.host.lowercased() && first.port == second.port
            && first.protocol?.lowercased() == second.protocol?.lowercased() && (first.realm ?? "") == (second.realm ?? "")
            && method(first) == method(second)
    }
}

extension String {
    /// The host as it goes in a URL: an IPv6 address in brackets.
    fileprivate var bracketedIfIPv6: String { contains(":") && !hasPrefix("[") ? "[\(self)]" : self }
}
