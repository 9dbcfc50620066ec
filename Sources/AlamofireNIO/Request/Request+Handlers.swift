import AFSynchronization
public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// MARK: Closure API

extension Request {
    /// Associates a credential using the provided values with the instance.
    ///
    /// - Parameters:
    ///   - username:    The username.
    ///   - password:    The password.
    ///   - persistence: The `URLCredential.Persistence` for the created `URLCredential`. `.forSession` by default.
    /// - Returns:       The instance.
    @discardableResult
    public func authenticate(username: String, password: String, persistence: URLCredential.Persistence = .forSession) -> Self {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    /// Associates the provided credential with the instance.
    ///
    /// - Parameter credential: The `URLCredential`.
    /// - Returns:              The instance.
    @discardableResult
    public func authenticate(with credential: URLCredential) -> Self {
        self.credential = credential
        return self
    }

    /// Presents `identity`'s client certificate if a server asks for one, in place of the session's.
    ///
    /// Alamofire takes a client certificate as `URLCredential(identity:certificates:persistence:)`,
    /// which Linux cannot make; this is AlamofireNIO's stand-in. The request's connections are
    /// pooled apart from those of other identities.
    ///
    /// - Parameter identity: The certificate chain and key to present.
    /// - Returns:            The instance.
    @discardableResult
    public func authenticate(with identity: SecIdentity) -> Self {
        mutableState.withLock { $0.clientIdentity = identity }
        return self
    }

    /// Sets the redirect handler for the instance which will be used if a redirect response is encountered. It is
    /// used instead of the session's.
    ///
    /// - Note: Alamofire traps when a handler is set twice; here the later one replaces the earlier.
    /// - Parameter handler: The `RedirectHandler`.
    /// - Returns:           The instance.
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        redirectHandler = handler
        return self
    }

    /// Sets the cached response handler for the `Request` which will be used when attempting to cache a response. It
    /// is used instead of the session's.
    ///
    /// - Note: Alamofire traps when a handler is set twice; here the later one replaces the earlier.
    /// - Parameter handler: The `CachedResponseHandler`.
    /// - Returns:           The instance.
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        cachedResponseHandler = handler
        return self
    }

    // MARK: Lifetime APIs

    /// Sets a handler to be called when the cURL description of the request is available.
    ///
    /// - Note: When waiting for a `Request`'s `URLRequest` to be created, only the last `handler` will be called.
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which `handler` will be called.
    ///   - handler: Closure to be called when the cURL description is available.
    /// - Returns:           The instance.
    @discardableResult
    @preconcurrency public func cURLDescription(on queue: DispatchQueue, calling handler: @escaping @Sendable (String) -> Void) -> Self {
        let hasRequest = mutableState.withLock { state in
            if state.requests.isEmpty { state.cURLHandler = (queue, handler) }
            return !state.requests.isEmpty
        }
        if hasRequest {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        return self
    }

    /// Sets a handler to be called when the cURL description of the request is available.
    ///
    /// - Note: When waiting for a `Request`'s `URLRequest` to be created, only the last `handler` will be called.
    /// - Parameter handler: Closure to be called when the cURL description is available. Called on the instance's
    ///                      `underlyingQueue` by default.
    /// - Returns:           The instance.
    @discardableResult
    @preconcurrency public func cURLDescription(calling handler: @escaping @Sendable (String) -> Void) -> Self {
        cURLDescription(on: underlyingQueue, calling: handler)
    }

    /// Calls the waiting cURL handler, once, now that a `URLRequest` exists (or could not be made).
    func callCURLHandler() {
        guard
            let handler = mutableState.withLock({ state in
                defer { state.cURLHandler = nil }; return state.cURLHandler
            })
        else { return }
        let description = cURLDescription()
        handler.queue.async { handler.handler(description) }
    }

    /// Sets a closure to called whenever Alamofire creates a `URLRequest` for this instance.
    ///
    /// - Note: This closure will be called multiple times if the instance adapts incoming `URLRequest`s or is retried.
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which `handler` will be called. `.main` by default.
    ///   - handler: Closure to be called when a `URLRequest` is available.
    /// - Returns:   The instance.
    @discardableResult
    @preconcurrency public func onURLRequestCreation(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (URLRequest) -> Void
    ) -> Self {
        let last = mutableState.withLock { state in
            state.urlRequestHandler = (queue, handler)
            return state.requests.last
        }
        if let last { queue.async { handler(last) } }
        return self
    }

    /// Sets a closure to be called whenever the instance creates a `URLSessionTask`.
    ///
    /// - Note: This API should only be used to provide `URLSessionTask`s to existing API. It **SHOULD NOT** be used to
    ///         interact with tasks directly, as that may be break Alamofire features. Additionally, this closure may be
    ///         called multiple times if the instance is retried.
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which `handler` will be called. `.main` by default.
    ///   - handler: Closure to be called when the `URLSessionTask` is available.
    /// - Returns:   The instance.
    @discardableResult
    @preconcurrency public func onURLSessionTaskCreation(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (URLSessionTask) -> Void
    )
        -> Self
    {
        let last = mutableState.withLock { state in
            state.urlSessionTaskHandler = (queue, handler)
            return state.tasks.last
        }
        if let last {
            let task = sessionTask(for: last)
            queue.async { handler(task) }
        }
        return self
    }

    // MARK: Per-request interceptors and monitors

    /// Adds a `RequestInterceptor` for this instance, called after the interceptors of the parent `Session`.
    ///
    /// - Parameter interceptor: `RequestInterceptor` to add.
    /// - Returns:               The instance.
    @discardableResult
    public func interceptor(_ interceptor: any RequestInterceptor) -> Self {
        mutableState.withLock { state in
            state.interceptor =
                switch state.interceptor {
                case let existing as Interceptor:
                    Interceptor(adapters: existing.adapters, retriers: existing.retriers, interceptors: [interceptor])
                case let existing?: Interceptor(interceptors: [existing, interceptor])
                case nil: Interceptor(interceptors: [interceptor])
                }
        }
        return self
    }

    /// Adds a `RequestAdapter` for this instance, called after the adapters of the parent `Session`.
    ///
    /// - Parameter adapter: `RequestAdapter` to be called.
    /// - Returns:           The instance.
    @discardableResult
    public func adapt(using adapter: any RequestAdapter) -> Self {
        mutableState.withLock { state in
            state.interceptor =
                switch state.interceptor {
                case let existing as Interceptor: Interceptor(adapters: existing.adapters + [adapter], retriers: existing.retriers)
                case let existing?: Interceptor(adapters: [adapter], interceptors: [existing])
                case nil: Interceptor(adapters: [adapter])
                }
        }
        return self
    }

    /// Adds a `RequestRetrier` for this instance, called after the retriers of the parent `Session`.
    ///
    /// - Parameter retrier: `RequestRetrier` to add.
    /// - Returns:           The instance.
    @discardableResult
    public func retry(using retrier: any RequestRetrier) -> Self {
        mutableState.withLock { state in
            state.interceptor =
                switch state.interceptor {
                case let existing as Interceptor: Interceptor(adapters: existing.adapters, retriers: existing.retriers + [retrier])
                case let existing?: Interceptor(retriers: [retrier], interceptors: [existing])
                case nil: Interceptor(retriers: [retrier])
                }
        }
        return self
    }

    /// Adds an `EventMonitor` for this instance, called after the `EventMonitor`s of the parent `Session`.
    ///
    /// - Note: `Request` `EventMonitor`s only receive `Request` events. `URLSession` events are only sent at the
    ///         `Session` level.
    /// - Parameter eventMonitor: `EventMonitor` to add.
    /// - Returns:                The instance.
    @discardableResult
    public func eventMonitor(_ eventMonitor: any EventMonitor) -> Self {
        mutableState.withLock { state in
            state.eventMonitor =
                state.eventMonitor?.adding(eventMonitor) ?? CompositeEventMonitor(queue: underlyingQueue, monitors: [eventMonitor])
        }
        if eventMonitor is any RequestLifetimeMonitor { hasLifetimeMonitors.store(true, ordering: .relaxed) }
        return self
    }
}
