import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A type that handles how an HTTP redirect response from a remote server should be redirected to the new request.
///
/// Set one on a ``Session`` (`redirectHandler:`) or on a request (``Request/redirect(using:)``; the
/// request's wins). It is asked for every redirect the loading layer would follow by URLSession's
/// rules, each hop included.
public protocol RedirectHandler: Sendable {
    /// Determines how the HTTP redirect response should be redirected to the new request.
    ///
    /// The `completion` closure should be passed one of three possible options:
    ///
    ///   1. The new request specified by the redirect (this is the most common use case).
    ///   2. A modified version of the new request (you may want to route it somewhere else).
    ///   3. A `nil` value to deny the redirect request and return the body of the redirect response.
    ///
    /// - Parameters:
    ///   - task:       The `URLSessionTask` whose request resulted in a redirect.
    ///   - request:    The `URLRequest` to the new location specified by the redirect response.
    ///   - response:   The `HTTPURLResponse` containing the server's response to the original request.
    ///   - completion: The closure to execute containing the new `URLRequest`, a modified `URLRequest`, or `nil`.
    func task(
        _ task: URLSessionTask, willBeRedirectedTo request: URLRequest, for response: HTTPURLResponse,
        completion: @escaping (URLRequest?) -> Void)
}

/// `Redirector` is a convenience `RedirectHandler` making it easy to follow, not follow, or modify a redirect.
public struct Redirector: Sendable {
    /// Defines the behavior of the `Redirector` type.
    public enum Behavior: Sendable {
        /// Follow the redirect as defined in the response.
        case follow
        /// Do not follow the redirect defined in the response.
        case doNotFollow
        /// Modify the redirect request defined in the response.
        case modify(@Sendable (_ task: URLSessionTask, _ request: URLRequest, _ response: HTTPURLResponse) -> URLRequest?)
    }

    /// Returns a `Redirector` with a `.follow` `Behavior`.
    public static let follow = Redirector(behavior: .follow)
    /// Returns a `Redirector` with a `.doNotFollow` `Behavior`.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// The `Behavior` of the `Redirector`.
    public let behavior: Behavior

    /// Creates a `Redirector` instance from the `Behavior`.
    ///
    /// - Parameter behavior: The `Behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }
}

extension Redirector: RedirectHandler {
    /// Passes `completion` the request to follow according to `behavior`: the redirect's, none, or as the closure
    /// modifies it.
    public func task(
        _ task: URLSessionTask, willBeRedirectedTo request: URLRequest, for response: HTTPURLResponse,
        completion: @escaping (URLRequest?) -> Void
    ) {
        switch behavior {
        case .follow: completion(request)
        case .doNotFollow: completion(nil)
        case .modify(let closure): completion(closure(task, request, response))
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// Provides a `Redirector` which follows redirects. Equivalent to `Redirector.follow`.
    public static var follow: Redirector { .follow }

    /// Provides a `Redirector` which does not follow redirects. Equivalent to `Redirector.doNotFollow`.
    public static var doNotFollow: Redirector { .doNotFollow }

    /// Creates a `Redirector` which modifies the redirected `URLRequest` using the provided closure.
    ///
    /// - Parameter closure: Closure used to modify the redirect.
    /// - Returns:           The `Redirector`.
    @preconcurrency public static func modify(
        using closure: @Sendable @escaping (URLSessionTask, URLRequest, HTTPURLResponse) -> URLRequest?
    ) -> Redirector {
        Redirector(behavior: .modify(closure))
    }
}
