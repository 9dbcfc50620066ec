import AFSynchronization
import Synchronization
import TestWaits
import Testing

/// The tests' waiting helper fails a wait that does not end, whatever the wait is.
struct WithTimeoutTests {
    @Test func aWaitThatIgnoresCancellationFailsWithTimedOut() async throws {
        let parked = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await #expect(throws: TimedOut.self) {
            try await withTimeout(seconds: 1) {
                await withCheckedContinuation { continuation in parked.withLock { $0 = continuation } }
            }
        }
        // The abandoned wait ends too, so nothing is left suspended.
        parked.withLock { $0.take() }?.resume()
    }

    @Test func aWaitThatEndsGivesItsValueOrItsError() async throws {
        #expect(try await withTimeout(seconds: 5) { 42 } == 42)
        await #expect(throws: CancellationError.self) {
            try await withTimeout(seconds: 5) { () async throws -> Int in throw CancellationError() }
        }
    }

    @Test func aCompletionNeverCalledFailsWithTimedOutAndALateCallIsIgnored() async throws {
        let handler = Mutex<(@Sendable (Int) -> Void)?>(nil)
        await #expect(throws: TimedOut.self) {
            try await completion(within: 1) { done in handler.withLock { $0 = done } }
        }
        // Called after the deadline: nothing is resumed twice.
        handler.withLock { $0.take() }?(7)
        #expect(try await completion { done in done(42) } == 42)
    }
}
