import AFSynchronization
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the loading task's machine holds besides its state: a response's proposed request,
/// challenge and body from the response until the decision that uses them, the task's status, when
/// it was resumed, and how it ended.
@Suite struct LoadingTaskHeldResponseTests {
    typealias Machine = LoadingTaskStateMachine
    static let body = ByteBuffer(string: "the response's body")
    static let next = URLRequest(url: URL(string: "http://127.0.0.1/next")!)
    static let challenge = LoadingChallenge(
        protectionSpace: URLProtectionSpace(host: "127.0.0.1", port: 80, protocol: "http", realm: "r", authenticationMethod: nil),
        previousFailureCount: 0,
        failureResponse: HTTPURLResponse(url: URL(string: "http://127.0.0.1/")!, statusCode: 401, httpVersion: nil, headerFields: nil)!,
        offer: AuthenticationChallengeOffer(scheme: "basic", parameters: ["realm": "r"]))

    /// A machine whose first exchange produced a response of `verdict`, holding `held`.
    static func machine(received verdict: Machine.ResponseVerdict, holding held: HeldResponse) -> Machine {
        var machine = Machine()
        _ = machine.resume(at: LoadingTaskStateMachineTests.start)
        _ = machine.cacheMissed()
        _ = machine.responseReceived(verdict, holding: held)
        return machine
    }

    @Test func aFollowedRedirectLetsGoOfItsBodyAndTheNextExchangeStartsWithNothingHeld() {
        var machine = Self.machine(received: .redirect, holding: HeldResponse(proposedRequest: Self.next, body: .collected(Self.body)))
        #expect(machine.held.proposedRequest == Self.next)
        #expect(machine.held.body.collected == Self.body)
        #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .startExchange(hop: 1))
        #expect(machine.held.proposedRequest == nil)
        #expect(machine.held.body.collected == nil)
    }

    @Test func aDeclinedRedirectsBodyIsTheResultAndIsTakenOnceAllowed() {
        var machine = Self.machine(received: .redirect, holding: HeldResponse(proposedRequest: Self.next, body: .collected(Self.body)))
        #expect(machine.redirectDeclined() == .deliverResponse)
        #expect(machine.held.proposedRequest == nil)
        // Nothing is handed over before the delegate allows the response.
        #expect(machine.takeHeldBody().collected == nil)
        #expect(machine.held.body.collected == Self.body)
        #expect(machine.dispositionDecided(allow: true) == .receiveBody)
        #expect(machine.takeHeldBody().collected == Self.body)
        // Taken once.
        #expect(machine.takeHeldBody().collected == nil)
        #expect(machine.bodyReceived() == .complete(nil))
    }

    @Test func anAnsweredChallengeLetsGoOfItsResponseAndAnUnansweredOneKeepsItsBody() {
        let held = HeldResponse(challenge: Self.challenge, body: .collected(Self.body))
        var answered = Self.machine(received: .challenge, holding: held)
        #expect(answered.held.challenge?.protectionSpace.realm == "r")
        #expect(answered.challengeDecided(retry: true) == .startExchange(hop: 1))
        #expect(answered.held.challenge == nil)
        #expect(answered.held.body.collected == nil)
        var unanswered = Self.machine(received: .challenge, holding: held)
        #expect(unanswered.challengeDecided(retry: false) == .deliverResponse)
        #expect(unanswered.held.challenge == nil)
        #expect(unanswered.held.body.collected == Self.body)
    }

    @Test func completingLetsGoOfABodyNotRead() {
        var refused = Self.machine(received: .final, holding: HeldResponse(body: .collected(Self.body)))
        #expect(refused.dispositionDecided(allow: false) == .complete(.cancelled))
        #expect(refused.held.body.collected == nil)
        var cancelled = Self.machine(received: .final, holding: HeldResponse(body: .collected(Self.body)))
        #expect(cancelled.cancel() == .complete(.cancelled))
        #expect(cancelled.held.body.collected == nil)
        var failed = Self.machine(received: .final, holding: HeldResponse(body: .collected(Self.body)))
        _ = failed.dispositionDecided(allow: true)
        #expect(failed.exchangeFailed(URLError(.networkConnectionLost)) == .complete(.exchangeFailed))
        #expect(failed.held.body.collected == nil)
    }

    @Test func aResponseAfterACancelHoldsNothing() {
        var machine = Machine()
        _ = machine.resume(at: LoadingTaskStateMachineTests.start)
        _ = machine.cacheMissed()
        #expect(machine.cancel() == .cancelExchange)
        #expect(machine.responseReceived(.final, holding: HeldResponse(body: .collected(Self.body))) == .complete(.cancelled))
        #expect(machine.held.body.collected == nil)
    }

    @Test func aStoredRedirectIsAskedAboutWithItsProposedRequest() {
        var redirect = Machine()
        _ = redirect.resume(at: LoadingTaskStateMachineTests.start)
        #expect(redirect.cacheHit(holding: HeldResponse(proposedRequest: Self.next, body: .collected(Self.body))) == .askRedirect)
        #expect(redirect.state == .awaitingRedirect(hop: 0))
        #expect(redirect.held.proposedRequest == Self.next)
        var stored = Machine()
        _ = stored.resume(at: LoadingTaskStateMachineTests.start)
        #expect(stored.cacheHit(holding: HeldResponse(body: .collected(Self.body))) == .deliverResponse)
        #expect(stored.held.body.collected == Self.body)
    }

    @Test func theResourceTimeoutCountsFromTheFirstResume() {
        var machine = Machine()
        #expect(machine.resumedAt == nil)
        _ = machine.resume(at: .uptimeNanoseconds(5))
        machine.suspend()
        _ = machine.resume(at: .uptimeNanoseconds(9))
        #expect(machine.resumedAt == .uptimeNanoseconds(5))
    }

    @Test func theStatusReadsCompletedOnlyOnceTheEndIsSettled() {
        var machine = Machine()
        #expect(machine.status == .suspended)
        _ = machine.resume(at: LoadingTaskStateMachineTests.start)
        #expect(machine.status == .running)
        machine.suspend()
        #expect(machine.status == .suspended)
        #expect(machine.cacheUnavailable() == .complete(.resourceUnavailable))
        // Its end is not settled yet (a download's file is kept or removed first).
        #expect(machine.status == .suspended)
        #expect(machine.completionError == nil)
        machine.settled(error: URLError(.resourceUnavailable))
        #expect(machine.status == .completed)
        #expect(machine.completionError?.code == .resourceUnavailable)
        // Settled once.
        machine.settled(error: nil)
        #expect(machine.completionError?.code == .resourceUnavailable)

        var cancelled = Machine()
        _ = cancelled.resume(at: LoadingTaskStateMachineTests.start)
        _ = cancelled.cacheMissed()
        _ = cancelled.cancel()
        #expect(cancelled.status == .canceling)
        // Nothing settles a task still running.
        cancelled.settled(error: nil)
        #expect(cancelled.status == .canceling)
        _ = cancelled.exchangeFailed(URLError(.cancelled))
        #expect(cancelled.status == .canceling)
        cancelled.settled(error: URLError(.cancelled))
        #expect(cancelled.status == .completed)
    }

    @Test func aCancelsResumeDataHandlerIsKeptUntilTakenUnlessTheTaskHadEnded() {
        let heard = Mutex<[Int]>([])
        var machine = Machine()
        _ = machine.resume(at: LoadingTaskStateMachineTests.start)
        _ = machine.cacheMissed()
        #expect(machine.cancel(resumeDataHandler: { _ in heard.withLock { $0.append(1) } }) == .cancelExchange)
        // A second cancel replaces nothing.
        #expect(machine.cancel(resumeDataHandler: { _ in heard.withLock { $0.append(2) } }) == .none)
        machine.takeResumeDataHandler()?(nil)
        #expect(machine.takeResumeDataHandler() == nil)
        #expect(heard.withLock { $0 } == [1])

        // A task that completed (here: nothing stored, and it may not load) is not cancelled after.
        var completed = Machine()
        _ = completed.resume(at: LoadingTaskStateMachineTests.start)
        #expect(completed.cacheUnavailable() == .complete(.resourceUnavailable))
        #expect(completed.cancel(resumeDataHandler: { _ in heard.withLock { $0.append(3) } }) == .none)
        #expect(completed.takeResumeDataHandler() == nil)
        #expect(!completed.isCancelled)
        #expect(completed.status == .running)
    }
}
