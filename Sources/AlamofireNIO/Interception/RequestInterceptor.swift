public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What a retrier decided.
public enum RetryResult: Sendable {
    case retry
    case retryWithDelay(TimeInterval)
    case doNotRetry
    case doNotRetryWithError(any Error)

    var delay: TimeInterval? {
        switch self {
        case .retry: 0
        case .retryWithDelay(let delay): delay
        case .doNotRetry, .doNotRetryWithError: nil
        }
    }
}

/// Changes a `URLRequest` before it is sent (to add a token, for example).
public protocol RequestAdapter: Sendable {
    /// Calls `completion` with the adapted request, or the error that stops it.
    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)
}

/// Decides whether a failed request is tried again.
public protocol RequestRetrier: Sendable {
    /// Calls `completion` with the decision.
    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void)
}

/// Both an adapter and a retrier; each part defaults to doing nothing.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.success(urlRequest))
    }

    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        completion(.doNotRetry)
    }
}

/// Runs adapters in order, each on the previous one's output, and asks retriers in order until one
/// decides to retry or fails.
public final class Interceptor: RequestInterceptor {
    public let adapters: [any RequestAdapter]
    public let retriers: [any RequestRetrier]

    /// - Parameters:
    ///   - adapters: the adapters, applied in order.
    ///   - retriers: the retriers, asked in order.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// Uses each interceptor as both adapter and retrier.
    public init(interceptors: [any RequestInterceptor]) {
        self.adapters = interceptors
        self.retriers = interceptors
    }

    public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, for: session, using: adapters[...], completion: completion)
    }

    private func adapt(
        _ urlRequest: URLRequest, for session: Session, using adapters: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard let adapter = adapters.first else { return completion(.success(urlRequest)) }
        adapter.adapt(urlRequest, for: session) { result in
            switch result {
            case .success(let adapted): self.adapt(adapted, for: session, using: adapters.dropFirst(), completion: completion)
            case .failure: completion(result)
            }
        }
    }

    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        retry(request, for: session, dueTo: error, using: retriers[...], completion: completion)
    }

    private func retry(
        _ request: Request, for session: Session, dueTo error: any Error, using retriers: ArraySlice<any RequestRetrier>,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = retriers.first else { return completion(.doNotRetry) }
        retrier.retry(request, for: session, dueTo: error) { result in
            switch result {
            case .retry, .retryWithDelay, .doNotRetryWithError: completion(result)
            case .doNotRetry: self.retry(request, for: session, dueTo: error, using: retriers.dropFirst(), completion: completion)
            }
        }
    }
}

/// An adapter from a closure.
public struct Adapter: RequestInterceptor {
    public typealias AdaptHandler = @Sendable (URLRequest, Session, @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void
    private let handler: AdaptHandler

    public init(_ handler: @escaping AdaptHandler) { self.handler = handler }

    public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        handler(urlRequest, session, completion)
    }
}

/// A retrier from a closure.
public struct Retrier: RequestInterceptor {
    public typealias RetryHandler = @Sendable (Request, Session, any Error, @escaping @Sendable (RetryResult) -> Void) -> Void
    private let handler: RetryHandler

    public init(_ handler: @escaping RetryHandler) { self.handler = handler }

    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        handler(request, session, error, completion)
    }
}
