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

    static let urlRequest = URLRequest(url: URL(string: "http://127.0.0.1:1/get")!)
    static let failure = AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 500))

    enum Step: CaseIterable {
        case creatingRequest, waitingForResume, creatingTask, loading, validating, awaitingRetryDecision, waitingToRetry, finishing,
            finished
    }

    /// A resumed machine driven to `step` through its events; `failed` makes the load fail.
    static func machine(at step: Step, task: StubTask = StubTask()) -> Machine {
        var machine = Machine()
        guard step != .creatingRequest else { return machine }
        if step == .waitingForResume {
            _ = machine.urlRequestCreated(urlRequest)
            return machine
        }
        _ = machine.resume()
        _ = machine.urlRequestCreated(urlRequest)
        if step == .creatingTask { return machine }
        _ = machine.loadingTaskCreated(task)
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

    @Test func aRequestGoesFromCreationToFinished() throws {
        var machine = Machine()
        #expect(machine.state == .initialized)
        guard case .waitForResume = machine.urlRequestCreated(Self.urlRequest) else { throw Failure("created before resume") }
        guard case .resumed(let load) = machine.resume(), load == Self.urlRequest else { throw Failure("resume loads") }
        let task = StubTask()
        guard case .resume(let resumed) = machine.loadingTaskCreated(task), resumed === task else { throw Failure("task resumed") }
        let loadError = machine.loadCompleted(error: nil)
        #expect(loadError == nil)
        guard case .finish = machine.retryOrFinish() else { throw Failure("no error finishes") }
        let finishing = machine.finish()
        let finishingAgain = machine.finish()
        #expect(finishing && !finishingAgain)
        guard case .complete(let completions) = machine.nextSerializerStep(), completions.isEmpty else { throw Failure("completes") }
        #expect(machine.state == .finished)
    }

    @Test func resumedBeforeTheRequestExistsLoadsItOnceCreated() throws {
        var machine = Machine()
        guard case .resumed(nil) = machine.resume() else { throw Failure("nothing to load yet") }
        guard case .load(let urlRequest) = machine.urlRequestCreated(Self.urlRequest), urlRequest == Self.urlRequest else {
            throw Failure("loads")
        }
    }

    @Test func suspendAndResumeFollowAlamofiresTransitions() {
        var machine = Machine()
        let suspended = machine.suspend()
        let suspendedAgain = machine.suspend()
        #expect(suspended && !suspendedAgain)
        guard case .resumed = machine.resume() else { return #expect(Bool(false)) }
        guard case .none = machine.resume() else { return #expect(Bool(false)) }
        _ = machine.cancel()
        let suspendedWhenCancelled = machine.suspend()
        #expect(!suspendedWhenCancelled)
        guard case .none = machine.resume() else { return #expect(Bool(false)) }
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
            case (.creatingRequest, .finish), (.waitingForResume, .finish), (.creatingTask, .finish), (.validating, .finish),
                (.awaitingRetryDecision, .finish), (.waitingToRetry, .finish):
                break
            default: Issue.record("cancel in \(step) gave \(action)")
            }
            if step != .finished {
                #expect(machine.isCancelled, "in \(step)")
                // A cancel keeps an error the request already has, as Alamofire's does.
                let expectsCancellation = step != .awaitingRetryDecision
                #expect(machine.error?.isExplicitlyCancelledError == expectsCancellation, "in \(step)")
            }
            if case .none = machine.cancel() {} else { Issue.record("a second cancel in \(step) did something") }
        }
    }

    @Test func eventsForAnAbandonedPipelineAreIgnoredAfterACancel() throws {
        var created = Self.machine(at: .creatingRequest)
        _ = created.cancel()
        guard case .none = created.urlRequestCreated(Self.urlRequest) else { throw Failure("built after cancel") }

        var making = Self.machine(at: .creatingTask)
        _ = making.cancel()
        guard case .discard = making.loadingTaskCreated(StubTask()) else { throw Failure("task made after cancel") }

        var deciding = Self.machine(at: .awaitingRetryDecision)
        _ = deciding.cancel()
        guard case .none = deciding.retryDecided(.retry) else { throw Failure("retried after cancel") }
        #expect(deciding.retryCount == 0)
        #expect(deciding.error?.responseCode == 500)

        var waiting = Self.machine(at: .waitingToRetry)
        _ = waiting.cancel()
        let retriedAfterCancel = waiting.retryDelayElapsed()
        #expect(!retriedAfterCancel)
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

    @Test func retryDecisions() throws {
        var retried = Self.machine(at: .awaitingRetryDecision)
        guard case .retry(let delay) = retried.retryDecided(.retryWithDelay(2)) else { throw Failure("retries") }
        #expect(delay == 2)
        #expect(retried.retryCount == 1)
        #expect(retried.error == nil)
        let rebuilds = retried.retryDelayElapsed()
        #expect(rebuilds)
        guard case .waitForResume = retried.urlRequestCreated(Self.urlRequest) else { return }
        Issue.record("a resumed request waited")

        var refused = Self.machine(at: .awaitingRetryDecision)
        guard case .finish = refused.retryDecided(.doNotRetryWithError(URLError(.badURL))) else { throw Failure("finishes") }
        guard case .requestRetryFailed(_, let original) = refused.error else { throw Failure("wraps the error") }
        #expect((original as? AFError)?.responseCode == 500)

        var declined = Self.machine(at: .awaitingRetryDecision)
        guard case .finish = declined.retryDecided(.doNotRetry) else { throw Failure("finishes") }
        #expect(declined.error?.responseCode == 500)
        guard case .none = declined.retryDecided(.retry) else { throw Failure("a second answer counts") }
    }

    @Test func creationFailuresGoToTheRetrier() throws {
        var machine = Machine()
        let failure = AFError.invalidURL(url: "bad url")
        guard case .askRetrier(let error) = machine.retryOrFinish(creationFailure: failure), error.isInvalidURLError else {
            throw Failure("asks the retrier")
        }
    }

    @Test func serializersRunInOrderAndOneAddedAfterTheEndRestartsProcessing() throws {
        var machine = Self.machine(at: .finishing)
        let first: @Sendable () -> Void = {}
        let append = machine.appendSerializer(first)
        #expect(!append.processNow && !append.resumeNow)
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the first") }
        machine.serializerCompleted {}
        guard case .complete(let completions) = machine.nextSerializerStep(), completions.count == 1 else { throw Failure("completes") }
        #expect(machine.state == .finished)
        guard case .none = machine.nextSerializerStep() else { throw Failure("nothing left") }

        let late = machine.appendSerializer {}
        #expect(late.processNow)
        #expect(machine.state == .resumed)
        guard case .run = machine.nextSerializerStep() else { throw Failure("runs the late one") }
        machine.serializerCompleted {}
        guard case .complete(let again) = machine.nextSerializerStep(), again.count == 1 else { throw Failure("completes again") }
        #expect(machine.state == .finished)
    }

    @Test func aSerializerOnANewRequestAsksForResume() {
        var machine = Machine()
        let first = machine.appendSerializer {}
        _ = machine.resume()
        let second = machine.appendSerializer {}
        #expect(first.resumeNow && !second.resumeNow)
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
