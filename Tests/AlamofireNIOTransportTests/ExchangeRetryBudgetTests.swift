import Testing

@testable import AlamofireNIOTransport

/// ``ExchangeRetryBudget`` as a value: one retry after a stale connection, any number after
/// refusals by connections that answer, a few in a row by connections that answer nothing.
@Suite struct ExchangeRetryBudgetTests {
    @Test func aStaleConnectionIsRetriedOnce() throws {
        let once = try #require(ExchangeRetryBudget().retrying(after: .staleConnection))
        #expect(once.retrying(after: .staleConnection) == nil)
    }

    @Test func refusalsByAnsweringConnectionsAreRetriedWithoutEnd() throws {
        var budget = ExchangeRetryBudget()
        for _ in 0..<1_000 {
            budget = try #require(budget.retrying(after: .unprocessed(connectionAnswered: true)))
        }
        #expect(budget.refusalsWithoutAnswerInARow == 0)
        // A stale connection's single retry is still there.
        #expect(budget.retrying(after: .staleConnection) != nil)
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
