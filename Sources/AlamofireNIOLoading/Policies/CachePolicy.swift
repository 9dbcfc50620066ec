import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a task meets the response cache: looked up before the first exchange, asked after the
/// final response whether to store it.
///
/// A seat for now: every lookup misses and nothing is stored. The configuration's `urlCache` and
/// `requestCachePolicy`, with RFC 9111's freshness and validation rules, take effect here when the
/// cache lands.
package struct CachePolicy: Sendable {
    package init() {}

    /// A stored response that may answer `request` without an exchange (none yet).
    func cachedResponse(for request: URLRequest) -> CachedURLResponse? { nil }

    /// Whether `response` to `request` should be offered to the cache (never yet).
    func shouldStore(_ response: HTTPURLResponse, for request: URLRequest) -> Bool { false }
}
