import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A type that handles whether the data task should store the HTTP response in the cache.
///
/// Set one on a ``Session`` (`cachedResponseHandler:`) or on a request
/// (``Request/cacheResponse(using:)``; the request's wins). It is asked whenever the loading
/// layer's cache policy would store a response.
public protocol CachedResponseHandler: Sendable {
    /// Determines whether the HTTP response should be stored in the cache.
    ///
    /// The `completion` closure should be passed one of three possible options:
    ///
    ///   1. The cached response provided by the server (this is the most common use case).
    ///   2. A modified version of the cached response (you may want to modify it in some way before caching).
    ///   3. A `nil` value to prevent the cached response from being stored in the cache.
    ///
    /// - Parameters:
    ///   - task:       The data task whose request resulted in the cached response.
    ///   - response:   The cached response to potentially store in the cache.
    ///   - completion: The closure to execute containing cached response, a modified response, or `nil`.
    func dataTask(
        _ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse, completion: @escaping (CachedURLResponse?) -> Void)
}

/// `ResponseCacher` is a convenience `CachedResponseHandler` making it easy to cache, not cache, or modify a cached
/// response.
public struct ResponseCacher: Sendable {
    /// Defines the behavior of the `ResponseCacher` type.
    public enum Behavior: Sendable {
        /// Stores the cached response in the cache.
        case cache
        /// Prevents the cached response from being stored in the cache.
        case doNotCache
        /// Modifies the cached response before storing it in the cache.
        case modify(@Sendable (_ task: URLSessionDataTask, _ cachedResponse: CachedURLResponse) -> CachedURLResponse?)
    }

    /// Returns a `ResponseCacher` with a `.cache` `Behavior`.
    public static let cache = ResponseCacher(behavior: .cache)
    /// Returns a `ResponseCacher` with a `.doNotCache` `Behavior`.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// The `Behavior` of the `ResponseCacher`.
    public let behavior: Behavior

    /// Creates a `ResponseCacher` instance from the `Behavior`.
    ///
    /// - Parameter behavior: The `Behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }
}

extension ResponseCacher: CachedResponseHandler {
    /// Passes `completion` the response to cache according to `behavior`: as proposed, none, or as the closure modifies
    /// it.
    public func dataTask(
        _ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse, completion: @escaping (CachedURLResponse?) -> Void
    ) {
        switch behavior {
        case .cache: completion(response)
        case .doNotCache: completion(nil)
        case .modify(let closure): completion(closure(task, response))
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// Provides a `ResponseCacher` which caches the response, if allowed. Equivalent to `ResponseCacher.cache`.
    public static var cache: ResponseCacher { .cache }

    /// Provides a `ResponseCacher` which does not cache the response. Equivalent to `ResponseCacher.doNotCache`.
    public static var doNotCache: ResponseCacher { .doNotCache }

    /// Creates a `ResponseCacher` which modifies the proposed `CachedURLResponse` using the provided closure.
    ///
    /// - Parameter closure: Closure used to modify the `CachedURLResponse`.
    /// - Returns:           The `ResponseCacher`.
    @preconcurrency public static func modify(
        using closure: @escaping (@Sendable (URLSessionDataTask, CachedURLResponse) -> CachedURLResponse?)
    ) -> ResponseCacher {
        ResponseCacher(behavior: .modify(closure))
    }
}
