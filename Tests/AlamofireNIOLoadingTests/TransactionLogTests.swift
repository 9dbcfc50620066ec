import Foundation
import NIOHTTP1
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``TransactionLog`` as a value: every exchange counts once, an unfinished one with its start and
/// the response it got.
@Suite struct TransactionLogTests {
    static let url = URL(string: "http://example.test/a")!
    static let request = URLRequest(url: url)
    static let start = Date(timeIntervalSince1970: 1_000)
    static let end = Date(timeIntervalSince1970: 1_002)

    static func transaction(_ path: String) -> TransactionMetrics {
        TransactionMetrics(
            request: URLRequest(url: url.appendingPathComponent(path)), response: nil, fetchStart: start, end: end,
            fetchType: .networkLoad)
    }

    @Test func anExchangeThatEndsEarlyWithoutAResponseCountsOnceWithItsStartOnly() {
        var log = TransactionLog()
        log.exchangeStarted(at: Self.start)
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        #expect(log.transactions.count == 1)
        let only = log.transactions[0]
        #expect(only.request.url == Self.url)
        #expect(only.fetchStartDate == Self.start)
        #expect(only.requestStartDate == nil)
        #expect(only.responseEndDate == nil)
        #expect(only.response == nil)
    }

    @Test func anExchangeThatEndsAfterItsResponseCountsWithTheResponseEndingNow() throws {
        var log = TransactionLog()
        log.exchangeStarted(at: Self.start)
        log.responseArrived(ReceivedResponse(head: HTTPResponseHead(version: .http1_1, status: .ok), url: Self.url))
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        let only = try #require(log.transactions.first)
        #expect((only.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(only.responseEndDate == Self.end)
    }

    /// A recorded exchange is not counted again; the next exchange is, once it has started.
    @Test func aRecordedExchangeIsNotCountedAgainButTheNextOneIs() {
        var log = TransactionLog()
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        #expect(log.transactions.isEmpty)
        log.exchangeStarted(at: Self.start)
        log.record(Self.transaction("first"))
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        #expect(log.transactions.map(\.request.url?.lastPathComponent) == ["first"])
        log.exchangeStarted(at: Self.end)
        log.recordUnfinishedExchange(request: Self.request, now: Self.end)
        #expect(log.transactions.map(\.request.url?.lastPathComponent) == ["first", "a"])
        #expect(log.transactions[1].fetchStartDate == Self.end)
    }
}
