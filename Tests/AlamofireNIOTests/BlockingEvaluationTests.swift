import Foundation
import TestWaits
import Testing

@testable import AlamofireNIO

/// `SecTrust`'s synchronous evaluation waits for swift-certificates' async verifier; the verifier's
/// task must not need a thread of the concurrency pool, where the waiting callers may sit.
@Suite struct BlockingEvaluationTests {
    @Test func theChecksRunOnTheirOwnExecutorBeforeAndAfterASuspension() throws {
        let placement = try BlockingEvaluation.run { () -> [Bool] in
            let before = TrustCheckExecutor.isCurrent
            await Task.yield()
            return [before, TrustCheckExecutor.isCurrent]
        }
        #expect(placement == [true, true])
        #expect(!TrustCheckExecutor.isCurrent)
    }

    @Test func callersBlockingMoreThreadsThanThePoolHasAllGetTheirAnswers() async throws {
        let callers = 2 * ProcessInfo.processInfo.activeProcessorCount
        let answers = try await withTimeout(seconds: 10) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<callers {
                    group.addTask {
                        try BlockingEvaluation.run {
                            await Task.yield(); return index
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }.sorted()
            }
        }
        #expect(answers == Array(0..<callers))
    }

    @Test func aThrownCheckIsRethrownToTheCaller() {
        struct Refused: Error, Equatable {}
        #expect(throws: Refused()) { try BlockingEvaluation.run { () async throws -> Int in throw Refused() } }
    }
}
