import Foundation
import NIOHTTP1
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``TaskCacheFacts`` as a value: what the cache learns of a task's exchanges.
@Suite struct TaskCacheFactsTests {
    private let url = URL(string: "http://example.com/a")!
    private var response: ReceivedResponse {
        ReceivedResponse(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"])!)
    }

    @Test func anOfferCarriesTheExchangesTimesAndHeaders() throws {
        var facts = TaskCacheFacts()
        let sent = Date(timeIntervalSince1970: 100)
        let arrived = Date(timeIntervalSince1970: 101)
        facts.exchangeStarted(at: sent)
        facts.headersSent(["Accept": "application/json"])
        facts.responseArrived(at: arrived)
        let offer = try #require(facts.offer(of: response, to: URLRequest(url: url)))
        #expect(offer.requestSent == sent)
        #expect(offer.responseReceived == arrived)
        #expect(offer.sentHeaders.first(name: "Accept") == "application/json")
        #expect(offer.request.url == url)
        #expect(facts.offer(of: nil, to: URLRequest(url: url)) == nil)
    }

    @Test func anExemptResponseIsNotOfferedUntilTheNextExchange() {
        var facts = TaskCacheFacts()
        facts.exempt()
        #expect(facts.offer(of: response, to: URLRequest(url: url)) == nil)
        facts.exchangeStarted(at: Date())
        #expect(facts.offer(of: response, to: URLRequest(url: url)) != nil)
    }

    @Test func aRevalidationSendsItsValidatorsOnTheFirstHopAndIsTakenOnce() {
        var facts = TaskCacheFacts()
        let stored = CachedURLResponse(
            response: HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil)!, data: Data("x".utf8))
        facts.revalidate(stored, validators: [(name: "If-None-Match", value: "\"v1\"")])
        let sent = Date(timeIntervalSince1970: 7)
        facts.exchangeStarted(at: sent)
        #expect(facts.isRevalidating)
        #expect(facts.validators(forHop: 0).map { "\($0.name): \($0.value)" } == ["If-None-Match: \"v1\""])
        #expect(facts.validators(forHop: 1).isEmpty)
        let taken = facts.takeRevalidation()
        #expect(taken.revalidating?.entry.data == Data("x".utf8))
        #expect(taken.requestSent == sent)
        #expect(!facts.isRevalidating)
        #expect(facts.takeRevalidation().revalidating == nil)
    }
}
