import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a task knows for the cache (``CachePolicy``) about the exchange under way: when its request
/// was sent and its final response arrived (by the cache policy's clock, for the age arithmetic),
/// the headers it sent (for the response's `Vary`), the stored response the first exchange
/// revalidates, and whether the response is exempt from being offered (it came from the cache or a
/// URL protocol).
struct TaskCacheFacts {
    /// A stored response being revalidated by the first exchange, with the validators it sends.
    private(set) var revalidating: (entry: CachedURLResponse, validators: [(name: String, value: String)])?
    private(set) var isExempt = false
    private(set) var requestSent = Date()
    private(set) var responseReceived = Date()
    private(set) var sentHeaders = NIOHTTP1.HTTPHeaders()

    /// The lookup found a stored response to revalidate.
    mutating func revalidate(_ entry: CachedURLResponse, validators: [(name: String, value: String)]) {
        revalidating = (entry, validators)
    }

    /// An exchange starts at `now`: its response may be offered again (a redirect's next hop, say).
    mutating func exchangeStarted(at now: Date) {
        isExempt = false
        requestSent = now
    }

    /// The validators exchange `hop` sends: the first one's, if it revalidates.
    func validators(forHop hop: Int) -> [(name: String, value: String)] {
        hop == 0 ? revalidating?.validators ?? [] : []
    }

    mutating func headersSent(_ headers: NIOHTTP1.HTTPHeaders) {
        sentHeaders = headers
    }

    mutating func responseArrived(at now: Date) {
        responseReceived = now
    }

    /// The revalidation under way, handed over once (a later response revalidates nothing), with when
    /// its request was sent.
    mutating func takeRevalidation() -> (
        revalidating: (entry: CachedURLResponse, validators: [(name: String, value: String)])?, requestSent: Date
    ) {
        defer { revalidating = nil }
        return (revalidating, requestSent)
    }

    var isRevalidating: Bool { revalidating != nil }

    /// The response came from the cache (stored, or confirmed by a 304) or a URL protocol.
    mutating func exempt() {
        isExempt = true
    }

    /// What offering `response` to `request` for storage needs besides the body; nil when it is exempt.
    func offer(of response: ReceivedResponse?, to request: URLRequest) -> CacheOffer? {
        guard !isExempt, let response else { return nil }
        return CacheOffer(
            request: request, response: response, requestSent: requestSent, responseReceived: responseReceived, sentHeaders: sentHeaders)
    }
}

/// What offering a task's final response to the cache needs besides its body, made by
/// ``TaskCacheFacts/offer(of:to:)`` in the step that takes the body.
struct CacheOffer: Sendable {
    var request: URLRequest
    var response: ReceivedResponse
    /// When the request was sent and the response arrived, by the cache policy's clock.
    var requestSent: Date
    var responseReceived: Date
    /// The headers the exchange sent, for the response's `Vary`.
    var sentHeaders: NIOHTTP1.HTTPHeaders
}
