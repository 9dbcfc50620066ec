import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Closure-based `RequestAdapter`.
open class Adapter: @unchecked Sendable, RequestInterceptor {
    private let adaptHandler: AdaptHandler

    /// Creates an instance using the provided closure.
    ///
    /// - Parameter adaptHandler: `AdaptHandler` closure to be executed when handling request adaptation.
    @preconcurrency public init(_ adaptHandler: @escaping AdaptHandler) {
        self.adaptHandler = adaptHandler
    }

    /// Adapts `urlRequest` by calling the closure this adapter was created with.
    @preconcurrency open func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adaptHandler(urlRequest, session, completion)
    }

    /// Adapts `urlRequest` by calling the closure this adapter was created with, passing it the state's session.
    @preconcurrency open func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adaptHandler(urlRequest, state.session, completion)
    }
}

extension RequestAdapter where Self == Adapter {
    /// Creates an `Adapter` using the provided `AdaptHandler` closure.
    ///
    /// - Parameter closure: `AdaptHandler` to use to adapt the request.
    /// - Returns:           The `Adapter`.
    @preconcurrency public static func adapter(using closure: @escaping AdaptHandler) -> Adapter {
        Adapter(closure)
    }
}

/// Closure-based `RequestRetrier`.
open class Retrier: @unchecked Sendable, RequestInterceptor {
    private let retryHandler: RetryHandler

    /// Creates an instance using the provided closure.
    ///
    /// - Parameter retryHandler: `RetryHandler` closure to be executed when handling request retry.
    @preconcurrency public init(_ retryHandler: @escaping RetryHandler) {
        self.retryHandler = retryHandler
    }

    /// Decides whether to retry `request` by calling the closure this retrier was created with.
    @preconcurrency open func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        retryHandler(request, session, error, completion)
    }
}

extension RequestRetrier where Self == Retrier {
    /// Creates a `Retrier` using the provided `RetryHandler` closure.
    ///
    /// - Parameter closure: `RetryHandler` to use to retry the request.
    /// - Returns:           The `Retrier`.
    @preconcurrency public static func retrier(using closure: @escaping RetryHandler) -> Retrier {
        Retrier(closure)
    }
}

/// `RequestInterceptor` which can use multiple `RequestAdapter` and `RequestRetrier` values: adapters
/// run in order, each on the previous one's output, until one fails; retriers are asked in order
/// until one decides anything but `.doNotRetry`.
open class Interceptor: @unchecked Sendable, RequestInterceptor {
    /// All `RequestAdapter`s associated with the instance. These adapters will be run until one fails.
    public let adapters: [any RequestAdapter]
    /// All `RequestRetrier`s associated with the instance. These retriers will be run one at a time until one triggers retry.
    public let retriers: [any RequestRetrier]

    /// Creates an instance from `AdaptHandler` and `RetryHandler` closures.
    ///
    /// - Parameters:
    ///   - adaptHandler: `AdaptHandler` closure to be used.
    ///   - retryHandler: `RetryHandler` closure to be used.
    @preconcurrency public init(adaptHandler: @escaping AdaptHandler, retryHandler: @escaping RetryHandler) {
        adapters = [Adapter(adaptHandler)]
        retriers = [Retrier(retryHandler)]
    }

    /// Creates an instance from `RequestAdapter` and `RequestRetrier` values.
    ///
    /// - Parameters:
    ///   - adapter: `RequestAdapter` value to be used.
    ///   - retrier: `RequestRetrier` value to be used.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        adapters = [adapter]
        retriers = [retrier]
    }

    /// Creates an instance from the arrays of `RequestAdapter` and `RequestRetrier` values.
    ///
    /// - Parameters:
    ///   - adapters:     `RequestAdapter` values to be used.
    ///   - retriers:     `RequestRetrier` values to be used.
    ///   - interceptors: `RequestInterceptor`s to be used, after the adapters and retriers.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [], interceptors: [any RequestInterceptor] = []) {
        self.adapters = adapters + interceptors
        self.retriers = retriers + interceptors
    }

    /// Runs the adapters in order, each on the previous one's result, and completes with the first failure or the final
    /// request.
    @preconcurrency open func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, using: adapters[...], each: { $0.adapt($1, for: session, completion: $2) }, completion: completion)
    }

    /// Runs the adapters in order with `state`, each on the previous one's result, and completes with the first failure or
    /// the final request.
    @preconcurrency open func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, using: adapters[...], each: { $0.adapt($1, using: state, completion: $2) }, completion: completion)
    }

    /// Runs `adapters` one after another, each through `each`, stopping at the first failure.
    private func adapt(
        _ urlRequest: URLRequest, using adapters: ArraySlice<any RequestAdapter>,
        each: @escaping @Sendable (any RequestAdapter, URLRequest, @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        guard let adapter = adapters.first else { return completion(.success(urlRequest)) }
        each(adapter, urlRequest) { result in
            switch result {
            case .success(let adapted): self.adapt(adapted, using: adapters.dropFirst(), each: each, completion: completion)
            case .failure: completion(result)
            }
        }
    }

    /// Asks the retriers in order, completing with the first answer other than `.doNotRetry`, or `.doNotRetry` when all
    /// decline.
    @preconcurrency open func retry(
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

extension RequestInterceptor where Self == Interceptor {
    /// Creates an `Interceptor` using the provided `AdaptHandler` and `RetryHandler` closures.
    ///
    /// - Parameters:
    ///   - adapter: `AdapterHandler`to use to adapt the request.
    ///   - retrier: `RetryHandler` to use to retry the request.
    /// - Returns:   The `Interceptor`.
    @preconcurrency public static func interceptor(adapter: @escaping AdaptHandler, retrier: @escaping RetryHandler) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// Creates an `Interceptor` using the provided `RequestAdapter` and `RequestRetrier` instances.
    /// - Parameters:
    ///   - adapter: `RequestAdapter` to use to adapt the request
    ///   - retrier: `RequestRetrier` to use to retry the request.
    /// - Returns:   The `Interceptor`.
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// Creates an `Interceptor` using the provided `RequestAdapter`s, `RequestRetrier`s, and `RequestInterceptor`s.
    /// - Parameters:
    ///   - adapters:     `RequestAdapter`s to use to adapt the request. These adapters will be run until one fails.
    ///   - retriers:     `RequestRetrier`s to use to retry the request. These retriers will be run one at a time until
    ///                   a retry is triggered.
    ///   - interceptors: `RequestInterceptor`s to use to intercept the request.
    /// - Returns:        The `Interceptor`.
    public static func interceptor(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [], interceptors: [any RequestInterceptor] = []
    ) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}
