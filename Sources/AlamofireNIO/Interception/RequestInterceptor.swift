public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Stores all state associated with a `URLRequest` being adapted.
public struct RequestAdapterState: Sendable {
    /// The `UUID` of the `Request` associated with the `URLRequest` to adapt.
    public let requestID: UUID
    /// The `Session` associated with the `URLRequest` to adapt.
    public let session: Session
}

/// A type that can inspect and optionally adapt a `URLRequest` in some manner if necessary.
public protocol RequestAdapter: Sendable {
    /// Inspects and adapts the specified `URLRequest` in some manner and calls the completion handler with the Result.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest` to adapt.
    ///   - session:    The `Session` that will execute the `URLRequest`.
    ///   - completion: The completion handler that must be called when adaptation is complete.
    @preconcurrency func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)

    /// Inspects and adapts the specified `URLRequest` in some manner and calls the completion handler with the Result.
    /// The `Session` calls this one.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest` to adapt.
    ///   - state:      The `RequestAdapterState` associated with the `URLRequest`.
    ///   - completion: The completion handler that must be called when adaptation is complete.
    @preconcurrency func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)
}

extension RequestAdapter {
    /// Adapts `urlRequest` by calling ``RequestAdapter/adapt(_:for:completion:)`` with the state's session.
    @preconcurrency public func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, for: state.session, completion: completion)
    }
}

/// Outcome of determination whether retry is necessary.
public enum RetryResult: Sendable {
    /// Retry should be attempted immediately.
    case retry
    /// Retry should be attempted after the associated `TimeInterval`.
    case retryWithDelay(TimeInterval)
    /// Do not retry.
    case doNotRetry
    /// Do not retry due to the associated `Error`.
    case doNotRetryWithError(any Error)
}

extension RetryResult {
    var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    var delay: TimeInterval? {
        switch self {
        case .retryWithDelay(let delay): delay
        case .retry, .doNotRetry, .doNotRetryWithError: nil
        }
    }

    var error: (any Error)? {
        if case .doNotRetryWithError(let error) = self { error } else { nil }
    }
}

/// A type that determines whether a request should be retried after being executed by the specified session manager
/// and encountering an error.
public protocol RequestRetrier: Sendable {
    /// Determines whether the `Request` should be retried by calling the `completion` closure.
    ///
    /// This operation is fully asynchronous. Any amount of time can be taken to determine whether the request needs
    /// to be retried. The one requirement is that the completion closure is called to ensure the request is properly
    /// cleaned up after.
    ///
    /// - Parameters:
    ///   - request:    `Request` that failed due to the provided `Error`.
    ///   - session:    `Session` that produced the `Request`.
    ///   - error:      `Error` encountered while executing the `Request`.
    ///   - completion: Completion closure to be executed when a retry decision has been determined.
    @preconcurrency func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void)
}

/// Type that provides both `RequestAdapter` and `RequestRetrier` functionality.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Completes with `urlRequest` unchanged: the default for interceptors that only retry.
    @preconcurrency public func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.success(urlRequest))
    }

    /// Completes with `.doNotRetry`: the default for interceptors that only adapt.
    @preconcurrency public func retry(
        _ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        completion(.doNotRetry)
    }
}

/// `RequestAdapter` closure definition.
public typealias AdaptHandler =
    @Sendable (
        _ request: URLRequest, _ session: Session, _ completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> Void

/// `RequestRetrier` closure definition.
public typealias RetryHandler =
    @Sendable (
        _ request: Request, _ session: Session, _ error: any Error, _ completion: @escaping @Sendable (RetryResult) -> Void
    ) -> Void
