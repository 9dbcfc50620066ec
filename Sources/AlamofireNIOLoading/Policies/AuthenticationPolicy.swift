import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides whether a response is a challenge the task should answer (a 401 or 407 with
/// `WWW-Authenticate`/`Proxy-Authenticate`), and with which credential by default.
///
/// A seat for now: no response is treated as a challenge, so a 401 is the result, as it is today.
/// Basic and Digest, the request's credential and the configuration's `urlCredentialStorage` take
/// effect here when authentication lands.
package struct AuthenticationPolicy: Sendable {
    package init() {}

    /// The challenge in `response` the task should answer, if any (none yet).
    func challenge(in response: HTTPURLResponse, previousFailureCount: Int) -> LoadingChallenge? { nil }
}
