import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where cookies enter and leave a task: asked before every hop (to add `Cookie`) and after every
/// response, redirects included (to store `Set-Cookie`).
///
/// A seat for now: it sends and stores nothing. The configuration's `httpCookieStorage`,
/// `httpShouldSetCookies` and `httpCookieAcceptPolicy` take effect here when cookies land.
package struct CookiePolicy: Sendable {
    package init() {}

    /// Adds the cookies that match `request` (none yet).
    func prepare(_ request: inout URLRequest) {}

    /// Stores the cookies `response` sets (none yet).
    func store(from response: HTTPURLResponse, for request: URLRequest) {}
}
