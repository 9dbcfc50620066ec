import AFSynchronization
import Foundation
import TestWaits

@testable import AlamofireNIO

/// A manual clock for delayed work: nothing scheduled runs until the test fires it, so a test of a
/// retry delay or a wait checks the delay asked for and never waits for real time to pass.
final class ManualScheduler: DelayedWorkScheduler {
    /// One piece of work waiting for its delay.
    /// Unchecked: Dispatch's work item is thread-safe but not marked `Sendable` on Linux.
    struct Pending: @unchecked Sendable {
        let delay: TimeInterval
        let queue: DispatchQueue
        let work: DispatchWorkItem

        /// Runs the work on its queue now, as if its delay had passed (nothing, if it was cancelled).
        func fire() { queue.async(execute: work) }
    }

    private struct State {
        var pending: [Pending] = []
        var waiters: [(id: Int, continuation: CheckedContinuation<Pending?, Never>)] = []
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: DispatchWorkItem) {
        let item = Pending(delay: delay, queue: queue, work: work)
        let waiter = state.withLock { state -> CheckedContinuation<Pending?, Never>? in
            guard !state.waiters.isEmpty else {
                state.pending.append(item)
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume(returning: item)
    }

    /// The next piece of work scheduled (in the order they were), waiting for one up to `seconds`.
    func next(within seconds: Int = 20) async throws -> Pending {
        try await withTimeout(seconds: seconds) {
            let id = self.state.withLock { state in
                defer { state.nextWaiterID += 1 }
                return state.nextWaiterID
            }
            let taken = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready = self.state.withLock { state -> Pending?? in
                        if let first = state.pending.first {
                            state.pending.removeFirst()
                            return .some(first)
                        }
                        if Task.isCancelled { return .some(nil) }
                        state.waiters.append((id, continuation))
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                let waiter = self.state.withLock { state in
                    state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
                }
                waiter?.resume(returning: nil)
            }
            guard let taken else { throw CancellationError() }
            return taken
        }
    }

    /// The first piece of work scheduled and not yet taken, taken now; nil when there is none.
    func takeNow() -> Pending? {
        state.withLock { state in state.pending.isEmpty ? nil : state.pending.removeFirst() }
    }

    /// How many pieces of work are scheduled and not yet taken.
    var pendingCount: Int { state.withLock { $0.pending.count } }
}
