import Testing

@testable import AlamofireNIOTransport

/// ``ExchangeRetryBudget`` as a value: one retry after a stale connection, up to 64 after GOAWAYs
/// by connections that answer, a few in a row by connections that answer nothing, three after
/// REFUSED_STREAM.
@Suite struct ExchangeRetryBudgetTests {
    @Test func aStaleConnectionIsRetriedOnce() throws {
        let once = try #require(ExchangeRetryBudget().retrying(after: .staleConnection))
        #expect(once.retrying(after: .staleConnection) == nil)
    }

    @Test func refusalsByAnsweringConnectionsAreRetriedUpToTheirCap() throws {
        var budget = ExchangeRetryBudget()
        for _ in 0..<ExchangeRetryBudget.unprocessedRetries {
            budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: true)))
        }
        #expect(ExchangeRetryBudget.unprocessedRetries == 64)
        #expect(budget.refusalsWithoutAnswerInARow == 0)
        #expect(budget.retrying(after: .unprocessed(connectionAnswered: true)) == nil)
        #expect(budget.retrying(after: .unprocessed(connectionAnswered: false)) == nil)
        // A stale connection's single retry is still there.
        #expect(budget.retrying(after: .staleConnection) != nil)
    }

    /// REFUSED_STREAM on a connection that stays open goes again three times, whatever the
    /// connection answered: a server may answer others and refuse this one for ever.
    @Test func aRefusedStreamGoesAgainThreeTimes() throws {
        var budget = ExchangeRetryBudget()
        for made in 1...3 {
            budget = try #require(budget.retrying(after: .refusedStream))
            #expect(budget.refusedStreamRetriesMade == made)
        }
        #expect(budget.retrying(after: .refusedStream) == nil)
        // The GOAWAY budget is separate.
        #expect(budget.retrying(after: .unprocessed(connectionAnswered: true))?.unprocessedRetriesMade == 1)
    }

    @Test func refusalsByConnectionsAnsweringNothingEndAfterThreeRetries() throws {
        var budget = ExchangeRetryBudget()
        for made in 1...ExchangeRetryBudget.refusalsWithoutAnswer {
            budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: false)))
            #expect(budget.refusalsWithoutAnswerInARow == made)
        }
        #expect(ExchangeRetryBudget.refusalsWithoutAnswer == 3)
        #expect(budget.retrying(after: .unprocessed(connectionAnswered: false)) == nil)
    }

    @Test func anAnsweringConnectionStartsTheCountAgain() throws {
        var budget = ExchangeRetryBudget()
        for _ in 0..<2 { budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: false))) }
        budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: true)))
        #expect(budget.refusalsWithoutAnswerInARow == 0)
        for _ in 0..<3 { budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: false))) }
        #expect(budget.retrying(after: .unprocessed(connectionAnswered: false)) == nil)
    }

    @Test func aStaleRetryDoesNotSpendTheRefusalBudget() throws {
        var budget = try #require(ExchangeRetryBudget().retrying(after: .staleConnection))
        for _ in 0..<3 { budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: false))) }
        #expect(budget.staleRetriesMade == 1)
    }
}
