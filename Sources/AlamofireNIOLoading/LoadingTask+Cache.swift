import AFSynchronization
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's steps that meet the cache (``CachePolicy``): the lookup before the first exchange, a
/// stored response served or revalidated, and the final response offered for storage.
extension LoadingTask {
    /// Looks the request up and goes on as the cache policy says: serve, revalidate, load, or fail.
    func lookUpCache() {
        // A URL protocol is given the request as it is; a WebSocket is never cached.
        if case .webSocket = destination { return perform(state.withLock { $0.machine.cacheMissed() }) }
        if URLProtocolLoad.protocolClass(for: originalRequest, among: session.protocolClasses) != nil {
            return perform(state.withLock { $0.machine.cacheMissed() })
        }
        let lookup = session.cachePolicy.lookUp(originalRequest) { self.session.headerValue($0, of: self.originalRequest) }
        switch lookup {
        case .load:
            perform(state.withLock { $0.machine.cacheMissed() })
        case .revalidate(let entry, let validators):
            perform(
                state.withLock { state in
                    state.cache.revalidate(entry, validators: validators)
                    return state.machine.cacheMissed()
                })
        case .serve(let entry):
            serve(entry)
        case .unavailable:
            perform(state.withLock { $0.machine.cacheUnavailable() })
        }
    }

    /// Answers with a stored response: one transaction fetched from the local cache, no exchange.
    /// A stored redirect is followed (or put to the delegate) as one that came from the network.
    private func serve(_ entry: CachedURLResponse) {
        let now = Date()
        let length = Int64(entry.data.count)
        didReceiveBody(totalBytes: length, expected: length)
        let response = ReceivedResponse(entry.response)
        let transaction = TransactionMetrics(
            request: originalRequest, response: response, fetchStart: now, end: now, fetchType: .localCache)
        perform(
            state.withLock { state in
                state.log.record(transaction)
                state.response = response
                state.log.responseArrived(response)
                state.cache.exempt()
                let proposed = session.redirectPolicy.nextRequest(after: originalRequest, response: response)
                return state.machine.cacheHit(
                    holding: HeldResponse(proposedRequest: proposed, body: .collected(ByteBuffer(bytes: entry.data))))
            })
    }

    /// The response a revalidation's answer stands for: a 304 becomes the stored response (with
    /// the 304's headers, stored again) and its body; anything else is itself, with no stored body.
    func revalidated(_ response: ReceivedResponse?, for request: URLRequest) -> (ReceivedResponse?, Data?) {
        let (revalidating, requestTime) = state.withLock { $0.cache.takeRevalidation() }
        guard let response, let revalidating, response.statusCode == 304, let notModified = response.httpURLResponse else {
            return (response, nil)
        }
        let merged = session.cachePolicy.merge(
            notModified: notModified, into: revalidating.entry, request: originalRequest, requestTime: requestTime,
            responseTime: session.cachePolicy.now())
        state.withLock { $0.cache.exempt() }
        return (merged.response is HTTPURLResponse ? ReceivedResponse(merged.response) : response, merged.data)
    }

    /// Whether a streamed body should be copied for the cache (a GET, with a cache to offer it to).
    func wantsCacheCopy() -> Bool {
        session.cachePolicy.cache != nil && CachePolicy.isCacheable(method: state.withLock { $0.request.current.httpMethod })
    }

    /// The body has been handed over: offers the response to the cache (the delegate may change or
    /// refuse it), stores it, then completes. The delegate is asked off the event loop (it hands a
    /// user's `CachedResponseHandler` to its own queue) and the entry is stored on a Dispatch thread:
    /// storing lists the cache's directory and may write a file, which must block neither an event
    /// loop nor the queue the delegate answered on. A delegate that answers before it returns (no
    /// handler: the proposal is cached as it is) has the entry stored on the thread that asked it,
    /// without a second hop; so the task completes only once the delegate's method has returned (a
    /// delegate override that answers and then waits for the response would wait for ever).
    func finishBody(offering body: Data?, _ offer: CacheOffer?) {
        guard let body, let offer,
            let proposal = session.cachePolicy.proposal(
                for: offer.request, response: offer.response, body: body, requestTime: offer.requestSent,
                responseTime: offer.responseReceived, headerValue: { offer.sentHeaders.first(name: $0) })
        else { return perform(state.withLock { $0.machine.bodyReceived() }) }
        let request = offer.request
        let storeThenComplete: @Sendable (CachedURLResponse?) -> Void = { accepted in
            if let accepted { self.session.cachePolicy.store(accepted, proposed: proposal, for: request) }
            self.perform(self.state.withLock { $0.machine.bodyReceived() })
        }
        DispatchQueue.global().async {
            let answer = InlineAnswer<CachedURLResponse?>()
            self.delegate.loadingTask(self, willCacheResponse: proposal) { accepted in
                guard !answer.keepIfAsking(accepted) else { return }
                DispatchQueue.global().async { storeThenComplete(accepted) }
            }
            if let accepted = answer.stopAsking() { storeThenComplete(accepted) }
        }
    }
}

/// A callback's answer, taken on the asking thread when it comes before the call that asked
/// returns, else handled by the callback itself.
final class InlineAnswer<Value: Sendable>: Sendable {
    private enum State {
        case asking
        case answered(Value)
        case stopped
    }

    private let state = Mutex(State.asking)

    /// Keeps `value` for the asker if it is still asking; false once it has stopped (the caller
    /// handles the value).
    func keepIfAsking(_ value: Value) -> Bool {
        state.withLock { state in
            guard case .asking = state else { return false }
            state = .answered(value)
            return true
        }
    }

    /// Stops asking: the answer, if it came meanwhile.
    func stopAsking() -> Value? {
        state.withLock { state in
            defer { state = .stopped }
            guard case .answered(let value) = state else { return nil }
            return value
        }
    }
}
