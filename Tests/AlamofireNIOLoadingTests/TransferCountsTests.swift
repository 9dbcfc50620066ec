import Testing

@testable import AlamofireNIOLoading

/// ``TransferCounts`` as a value: running totals in, what each adds out, reset per exchange.
@Suite struct TransferCountsTests {
    @Test func eachReportReturnsWhatItAddsAndKeepsTheTotals() {
        var counts = TransferCounts()
        #expect(counts.expectedToReceive == -1)
        #expect(counts.expectedToSend == 0)
        #expect(counts.sent(total: 100, expected: 300) == 100)
        #expect(counts.sent(total: 300, expected: 300) == 200)
        #expect(counts.received(total: 10, expected: nil) == 10)
        #expect(counts.received(total: 25, expected: 40) == 15)
        // A report without a length keeps the one known.
        #expect(counts.received(total: 40, expected: nil) == 15)
        #expect(counts == Self.counts(sent: 300, expectedToSend: 300, received: 40, expectedToReceive: 40))
    }

    /// A redirect's or a retry's exchange starts from nothing received, its length unknown; the
    /// body's length stays.
    @Test func aNewExchangeStartsFromNothingButKeepsTheBodysLength() {
        var counts = Self.counts(sent: 300, expectedToSend: 300, received: 40, expectedToReceive: 40)
        counts.exchangeStarted()
        #expect(counts == Self.counts(sent: 0, expectedToSend: 300, received: 0, expectedToReceive: -1))
        #expect(counts.received(total: 5, expected: nil) == 5)
    }

    /// A resumed download's bytes already on disk count as received; the first report adds only
    /// what follows them.
    @Test func aResumedDownloadCountsFromItsOffset() {
        var counts = TransferCounts()
        counts.resumed(at: 1_000)
        #expect(counts.received == 1_000)
        #expect(counts.received(total: 1_500, expected: 2_000) == 500)
    }

    static func counts(sent: Int64, expectedToSend: Int64, received: Int64, expectedToReceive: Int64) -> TransferCounts {
        var counts = TransferCounts()
        _ = counts.sent(total: sent, expected: expectedToSend)
        _ = counts.received(total: received, expected: expectedToReceive)
        return counts
    }
}
