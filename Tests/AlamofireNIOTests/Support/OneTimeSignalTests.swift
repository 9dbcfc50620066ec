import TestWaits
import Testing

/// The tests' own waiting helper: a wait that is never ended fails by its timeout instead of hanging.
@Suite struct OneTimeSignalTests {
    @Test func aSignalFiredBeforeItsWaitEndsItAtOnce() async throws {
        let signal = OneTimeSignal()
        signal.fire()
        signal.fire()
        try await withTimeout(seconds: 5) { try await signal.wait() }
    }

    @Test func aWaitNeverEndedTimesOut() async {
        await #expect(throws: TimedOut.self) {
            try await withTimeout(seconds: 1) { try await OneTimeSignal().wait() }
        }
    }
}
