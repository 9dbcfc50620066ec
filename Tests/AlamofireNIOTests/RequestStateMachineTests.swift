import Foundation
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's life as a plain value: each event in each phase, with a stand-in loading task.
@Suite struct RequestStateMachineTests {
    final class StubTask: Sendable {}
    typealias Machine = RequestStateMachine<StubTask>

    static let failure = AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 500))

    enum Step: CaseIterable {
        case notStarted, creatingRequest, loading, validating, awaitingRetryDecision, waitingToRetry, finishing, finished
    }

    /// A resumed machine driven to `step` through its events; past `validating` the load failed
    /// when the step is about retrying.
    static func machine(at step: Step, task: StubTask = StubTask()) -> Machine {
        var machine = Machine()
        guard step != .notStarted else { return machine }
        _ = machine.resume()
        if step == .creatingRequest { return machine }
        _ = machine.taskCreated(task)
        if step == .loading { return machine }
        let loadError: AFError? = [.awaitingRetryDecision, .waitingToRetry].contains(step) ? failure : nil
        _ = machine.loadCompleted(error: loadError)
        if step == .validating { return machine }
        if step == .awaitingRetryDecision || step == .waitingToRetry {
            _ = machine.retryOrFinish()
            if step == .waitingToRetry { _ = machine.retryDecided(.retry) }
            return machine
        }
        _ = machine.retryOrFinish()
        _ = machine.finish()
        if step == .finished { _ = machine.nextSerializerStep() }
        return machine
    }

    @Test func aLazyRequestSetsUpOnItsFirstResumeAndGoesToFinished() throws {
        var machine = Machine()
        #expect(machine.state == .initialized)
        let resumedAction = machine.resume()
        let resumed = try #require(resumedAction)
        #expect(resumed.setUp && resumed.task == nil)
        let task = StubTask()
        let taskCreatedResult = machine.taskCreated(task)
        #expect(taskCreatedResult == .resume)
        #expect(machine.runningTask === task)
        let loadError = machine.loadCompleted(error: nil)
        #expect(loadError == nil)
        guard case .finish = machine.retryOrFinish() else { throw Failure("no error finishes") }
        let finishing = machine.finish()
        let finishingAgain = machine.finish()
        #expect(finishing && !finishingAgain)
        guard case .complete(let completions) = machine.nextSerializerStep(), completions.isEmpty else { throw Failure("completes") }
        #expect(machine.state == .finished)
    }

    @Test func anEagerRequestMakesItsTaskBeforeAResumeAndStartsItOnResume() throws {
        var machine = Machine()
        let setUpResult = machine.setUp()
        #expect(setUpResult)
        let setUpAgain = machine.setUp()
        #expect(!setUpAgain)
        let task = StubTask()
        let taskCreatedResult = machine.taskCreated(task)
        #expect(taskCreatedResult == .none)
        let resumedAction = machine.resume()
        let resumed = try #require(resumedAction)
        #expect(!resumed.setUp && resumed.task === task)
        let resumeResult = machine.resume()
        #expect(resumeResult == nil)
    }

    @Test func aTaskMadeWhileSuspendedIsSuspended() {
        var machine = Machine()
        _ = machine.setUp()
        let suspended = machine.suspend()
        #expect(suspended != nil)
        let taskCreatedResult = machine.taskCreated(StubTask())
        #expect(taskCreatedResult == .suspend)
    }

    @Test func suspendAndResumeFollowAlamofiresTransitions() throws {
        var machine = Machine()
        let suspendedAction = machine.suspend()
        let suspended = try #require(suspendedAction)
        #expect(suspended == nil)
        let suspendResult = machine.suspend()
        #expect(suspendResult == nil)
        let resumedAction = machine.resume()
        let resumed = try #require(resumedAction)
        #expect(resumed.setUp)
        let resumeResult = machine.resume()
        #expect(resumeResult == nil)
        let task = StubTask()
        _ = machine.taskCreated(task)
        let suspendedTaskAction = machine.suspend()
        let suspendedTask = try #require(suspendedTaskAction)
        #expect(suspendedTask === task)
        _ = machine.cancel()
        let suspendAfterCancel = machine.suspend()
        #expect(suspendAfterCancel == nil)
        let resumeAfterCancel = machine.resume()
        #expect(resumeAfterCancel == nil)
    }

    /// What `cancel()` asks for in each step: stop the running task, finish at once, or only notify.
    @Test func cancelInEveryStep() {
        for step in Step.allCases {
            let task = StubTask()
            var machine = Self.machine(at: step, task: task)
            let action = machine.cancel()
            switch (step, action) {
            case (.loading, .cancelTask(let cancelled)): #expect(cancelled === task)
            case (.finishing, .notify): break
            case (.finished, .none): break  // a finished request cannot be cancelled
            case (.notStarted, .finish), (.creatingRequest, .finish), (.validating, .finish), (.awaitingRetryDecision, .finish),
                (.waitingToRetry, .finish):
                break
            default: Issue.record("cancel in \(step) gave \(action)")
            }
            if step != .finished {
                #expect(machine.isCancelled, "in \(step)")
                // A cancel keeps an error the request already has, as Alamofire's does.
                let expectsCancellation = step != .awaitingRetryDecision && step != .waitingToRetry
                #expect(machine.error?.isExplicitlyCancelledError == expectsCancellation, "in \(step)")
            }
            if case .none = machine.cancel() {} else { Issue.record("a second cancel in \(step) did something") }
        }
    }

    @Test func eventsForAnAbandonedPipelineAreIgnoredAfterACancel() throws {
        var making = Self.machine(at: .creatingRequest)
        _ = making.cancel()
        let taskCreatedResult = making.taskCreated(StubTask())
        #expect(taskCreatedResult == .discard)
        let setUpResult = making.setUp()
        #expect(!setUpResult)

        var deciding = Self.machine(at: .awaitingRetryDecision)
        _ = deciding.cancel()
        guard case .none = deciding.retryDecided(.retry) else { throw Failure("retried after cancel") }
        #expect(deciding.retryCount == 0)
        #expect(deciding.error?.responseCode == 500)

        var waiting = Self.machine(at: .waitingToRetry)
        _ = waiting.cancel()
        let retriedAfterCancel = waiting.retryDelayElapsed()
        #expect(!retriedAfterCancel)
        #expect(waiting.retryCount == 0)
    }

    @Test func aResponseHandlersCancelCancelsWithoutACancelCall() {
        var machine = Self.machine(at: .loading)
        machine.responseDispositionCancelled()
        #expect(machine.state == .cancelled)
        #expect(machine.error?.isExplicitlyCancelledError == true)
        let loadError = machine.loadCompleted(error: .sessionTaskFailed(error: URLError(.cancelled)))
        #expect(loadError?.isExplicitlyCancelledError == true)
    }

    @Test func theFirstErrorWins() {
        var validating = Self.machine(at: .validating)
        _ = validating.cancel()
        validating.recordFailure(Self.failure)
        #expect(validating.error?.isExplicitlyCancelledError == true)

        var loading = Self.machine(at: .loading)
        _ = loading.cancel()
        let loadError = loading.loadCompleted(error: .sessionTaskFailed(error: URLError(.cancelled)))
        #expect(loadError?.isExplicitlyCancelledError == true)
    }

    /// The retry count grows and the error clears only when the delay has passed, as Alamofire's
    /// `prepareForRetry()` does; a resumed request then makes and starts its next task.
    @Test func retryDecisions() throws {
        var retried = Self.machine(at: .awaitingRetryDecision)
        guard case .retry(let delay) = retried.retryDecided(.retryWithDelay(2)) else { throw Failure("retries") }
        #expect(delay == 2)
        #expect(retried.retryCount == 0)
        #expect(retried.error?.responseCode == 500)
        let rebuilds = retried.retryDelayElapsed()
        #expect(rebuilds)
        #expect(retried.retryCount == 1)
        #expect(retried.error == nil)
        let taskCreatedResult = retried.taskCreated(StubTask())
        #expect(taskCreatedResult == .resume)

        var refused = Self.machine(at: .awaitingRetryDecision)
        let retryFailure = AFError.requestRetryFailed(retryError: URLError(.badURL), originalError: Self.failure)
        guard case .finish = refused.retryDecided(.doNotRetryWithError(retryFailure)) else { throw Failure("finishes") }
        guard case .requestRetryFailed(_, let original) = refused.error else { throw Failure("keeps the wrapped error") }
        #expect((original as? AFError)?.responseCode == 500)

        var declined = Self.machine(at: .awaitingRetryDecision)
        guard case .finish = declined.retryDecided(.doNotRetry) else { throw Failure("finishes") }
        #expect(declined.error?.responseCode == 500)
        guard case .none = declined.retryDecided(.retry) else { throw Failure("a second answer counts") }
    }

    @Test func creationFailuresGoToTheRetrier() throws {
        var machine = Machine()
        _ = machine.resume()
        let failure = AFError.invalidURL(url: "bad url")
        guard case .askRetrier(let error) = machine.retryOrFinish(creationFailure: failure), error.isInvalidURLError else {
            throw Failure("asks the retrier")
        }
    }

    /// A serializer that fails may start the request over: the serializers then all run again,
    /// the completions of the abandoned attempt dropped.
    @Test func aSerializerRetryStartsOverAndRunsEverySerializerAgain() throws {
        var machine = Self.machine(at: .finishing)
        _ = machine.appendSerializer {}
        _ = machine.appendSerializer {}
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the first") }
        machine.serializerCompleted {}
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the second") }
        let serializerRequestedRetryResult = machine.serializerRequestedRetry()
        #expect(serializerRequestedRetryResult)
        let retryDelayElapsedResult = machine.retryDelayElapsed()
        #expect(retryDelayElapsedResult)
        #expect(machine.retryCount == 1)
        _ = machine.taskCreated(StubTask())
        _ = machine.loadCompleted(error: nil)
        _ = machine.retryOrFinish()
        let finishResult = machine.finish()
        #expect(finishResult)
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the first again") }
        machine.serializerCompleted {}
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the second again") }
        machine.serializerCompleted {}
        guard case .complete(let completions) = machine.nextSerializerStep(), completions.count == 2 else { throw Failure("completes") }

        var cancelled = Self.machine(at: .finishing)
        _ = cancelled.cancel()
        let cancelledRetry = cancelled.serializerRequestedRetry()
        #expect(!cancelledRetry)
    }

    @Test func serializersRunInOrderAndOneAddedAfterTheEndRestartsProcessing() throws {
        var machine = Self.machine(at: .finishing)
        let first: @Sendable () -> Void = {}
        let appendSerializerResult = machine.appendSerializer(first)
        #expect(!appendSerializerResult)
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the first") }
        machine.serializerCompleted {}
        guard case .complete(let completions) = machine.nextSerializerStep(), completions.count == 1 else { throw Failure("completes") }
        #expect(machine.state == .finished)
        guard case .none = machine.nextSerializerStep() else { throw Failure("nothing left") }

        let lateRestarts = machine.appendSerializer {}
        #expect(lateRestarts)
        #expect(machine.state == .resumed)
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the late one") }
        machine.serializerCompleted {}
        guard case .complete(let again) = machine.nextSerializerStep(), again.count == 1 else { throw Failure("completes again") }
        #expect(machine.state == .finished)
    }

    @Test func aCancelledRequestStaysCancelledWhenItsSerializersEnd() throws {
        var machine = Self.machine(at: .loading)
        _ = machine.cancel()
        _ = machine.loadCompleted(error: nil)
        guard case .finish = machine.retryOrFinish() else { throw Failure("finishes") }
        _ = machine.finish()
        _ = machine.nextSerializerStep()
        #expect(machine.state == .cancelled)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
