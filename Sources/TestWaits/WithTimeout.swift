import AFSynchronization
import Dispatch
import Synchronization

// The tests' waits: every wait a test makes on something that may never happen has a deadline,
// so that a regression fails the test instead of hanging the suite.

/// Why a wait ended: its time was up.
public struct TimedOut: Error, CustomStringConvertible {
    public let seconds: Int
    public init(seconds: Int) { self.seconds = seconds }
    public var description: String { "timed out after \(seconds) s" }
}

/// Awaits `body`, failing instead of hanging when it takes longer than `seconds`.
///
/// `body` runs in a task of its own, cancelled when the time is up or the caller is cancelled. A
/// body that does not end when cancelled (a continuation that nothing resumes) is left behind, not
/// waited for, so the test fails with ``TimedOut`` instead of hanging.
public func withTimeout<T: Sendable>(seconds: Int = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task {
        do { outcome.settle(.success(try await body())) } catch { outcome.settle(.failure(error)) }
    }
    let timer = Task {
        // Cancelled once the outcome is in: no timeout then.
        guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
        outcome.settle(.failure(TimedOut(seconds: seconds)))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await withTaskCancellationHandler {
        try await outcome.value()
    } onCancel: {
        outcome.settle(.failure(CancellationError()))
    }
}

/// Waits for a completion-handler API, failing with ``TimedOut`` instead of hanging when it has not
/// called back within `seconds` (a later call is then ignored).
public func completion<T: Sendable>(within seconds: Int = 30, _ register: (@escaping @Sendable (T) -> Void) -> Void) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let pending = Mutex<CheckedContinuation<T, any Error>?>(continuation)
        let resume: @Sendable (Result<T, any Error>) -> Void = { result in pending.withLock { $0.take() }?.resume(with: result) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { resume(.failure(TimedOut(seconds: seconds))) }
        register { resume(.success($0)) }
    }
}

/// The first result settled, handed to the one waiter whenever it asks.
private final class FirstOutcome<T: Sendable>: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<T, any Error>)
        case settled(Result<T, any Error>)
    }

    private let state = Mutex<State>(.pending)

    /// Settles the outcome; only the first call counts.
    func settle(_ result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .waiting(let continuation):
                state = .settled(result)
                return continuation
            case .settled:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// The settled result, once there is one (one waiter).
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let settled: Result<T, any Error>? = state.withLock { state in
                if case .settled(let result) = state { return result }
                state = .waiting(continuation)
                return nil
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
