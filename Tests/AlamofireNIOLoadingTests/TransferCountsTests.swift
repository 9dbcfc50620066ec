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

    /// Held bytes are counted at once (`countOfBytesReceived`) but reported when released, in one
    /// report of all of them; later reports add only what follows.
    @Test func heldBytesAreCountedAtOnceAndReportedTogetherWhenReleased() {
        var counts = TransferCounts()
        #expect(counts.releaseHeldReceived() == nil)
        #expect(counts.received(total: 100, expected: nil, reporting: false) == nil)
        #expect(counts.received(total: 250, expected: 1_000, reporting: false) == nil)
        #expect(counts.received == 250)
        #expect(counts.releaseHeldReceived() == ReceivedReport(added: 250, total: 250, expected: 1_000))
        #expect(counts.releaseHeldReceived() == nil)
        #expect(counts.received(total: 400, expected: nil) == 150)
        // A redirect's body, held, is never reported: the next exchange starts from nothing.
        _ = counts.received(total: 600, expected: nil, reporting: false)
        counts.exchangeStarted()
        #expect(counts.releaseHeldReceived() == nil)
        #expect(counts.received(total: 30, expected: nil) == 30)
    }

    /// A streamed body's bytes are reported after their data is handed on: never more than was
    /// delivered, and nothing when nothing new was.
    @Test func heldBytesAreReleasedNoFurtherThanTheDataDelivered() {
        var counts = TransferCounts()
        _ = counts.received(total: 300, expected: 1_000, reporting: false)
        #expect(counts.releaseHeldReceived(upTo: 100) == ReceivedReport(added: 100, total: 100, expected: 1_000))
        #expect(counts.releaseHeldReceived(upTo: 100) == nil)
        _ = counts.received(total: 500, expected: nil, reporting: false)
        #expect(counts.releaseHeldReceived(upTo: 500) == ReceivedReport(added: 400, total: 500, expected: 1_000))
        #expect(counts.releaseHeldReceived() == nil)
        // An empty body's one report.
        var empty = TransferCounts()
        _ = empty.received(total: 0, expected: 0, reporting: false)
        #expect(empty.releaseHeldReceived() == ReceivedReport(added: 0, total: 0, expected: 0))
    }

    static func counts(sent: Int64, expectedToSend: Int64, received: Int64, expectedToReceive: Int64) -> TransferCounts {
        var counts = TransferCounts()
        _ = counts.sent(total: sent, expected: expectedToSend)
        _ = counts.received(total: received, expected: expectedToReceive)
        return counts
    }
}
