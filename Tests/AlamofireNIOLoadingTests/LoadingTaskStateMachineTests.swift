import Foundation
import NIOCore
import Testing

@testable import AlamofireNIOLoading

/// The loading task's life as a plain value: every event in every state.
@Suite struct LoadingTaskStateMachineTests {
    typealias Machine = LoadingTaskStateMachine
    static let lost = URLError(.networkConnectionLost)
    /// When the tests' machines are resumed.
    static let start = NIODeadline.uptimeNanoseconds(1_000)

    /// A machine driven to `state` through its events.
    static func machine(in state: Machine.State) -> Machine {
        var machine = Machine()
        switch state {
        case .initialized: break
        case .lookingUpCache: _ = machine.resume(at: Self.start)
        case .exchanging: (_, _) = (machine.resume(at: Self.start), machine.cacheMissed())
        case .waitingForConnectivity: (_, _, _) = (machine.resume(at: Self.start), machine.cacheMissed(), machine.exchangeFoundNoRoute())
        case .awaitingRedirect: (_, _, _) = (machine.resume(at: Self.start), machine.cacheMissed(), machine.responseReceived(.redirect))
        case .awaitingBodyStream:
            (_, _, _, _) = (
                machine.resume(at: Self.start), machine.cacheMissed(), machine.responseReceived(.redirect),
                machine.redirectDecided(follow: true, needsBodyStream: true, leavesOrigin: false)
            )
        case .awaitingChallenge: (_, _, _) = (machine.resume(at: Self.start), machine.cacheMissed(), machine.responseReceived(.challenge))
        case .awaitingDisposition: (_, _, _) = (machine.resume(at: Self.start), machine.cacheMissed(), machine.responseReceived(.final))
        case .receivingBody:
            (_, _, _, _) = (
                machine.resume(at: Self.start), machine.cacheMissed(), machine.responseReceived(.final),
                machine.dispositionDecided(allow: true)
            )
        case .completed: _ = machine.cancel()
        }
        return machine
    }

    static let allStates: [Machine.State] = [
        .initialized, .lookingUpCache, .exchanging(hop: 0), .waitingForConnectivity(hop: 0), .awaitingRedirect(hop: 0),
        .awaitingBodyStream(hop: 0),
        .awaitingChallenge(hop: 0), .awaitingDisposition(hop: 0), .receivingBody(hop: 0), .completed,
    ]

    @Test func suspendingMarksEveryStateButCompletedAndResumingClearsTheMark() {
        for state in Self.allStates {
            var machine = Self.machine(in: state)
            machine.suspend()
            #expect(machine.isSuspended == (state != .completed), "\(state)")
            // A suspended task not started yet starts when resumed; a started one just goes on.
            #expect(machine.resume(at: Self.start) == (state == .initialized ? .lookUpCache : .none), "\(state)")
            #expect(!machine.isSuspended, "\(state)")
        }
    }

    @Test func aPlainLoadGoesThroughEveryStepOnce() {
        var machine = Machine()
        #expect(machine.resume(at: Self.start) == .lookUpCache)
        #expect(machine.resume(at: Self.start) == .none)
        #expect(machine.cacheMissed() == .startExchange(hop: 0))
        #expect(machine.responseReceived(.final) == .deliverResponse)
        #expect(machine.dispositionDecided(allow: true) == .receiveBody)
        #expect(machine.bodyReceived() == .complete(nil))
        #expect(machine.state == .completed)
        #expect(machine.cancel() == .none)
    }

    @Test func followedRedirectsAddHopsUntilTheLimit() {
        var machine = Self.machine(in: .exchanging(hop: 0))
        for hop in 1...Machine.maximumRedirects {
            #expect(machine.responseReceived(.redirect) == .askRedirect)
            #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .startExchange(hop: hop))
        }
        #expect(machine.responseReceived(.redirect) == .complete(.tooManyRedirects))
    }

    @Test func aDeclinedRedirectIsTheResponse() {
        var machine = Self.machine(in: .awaitingRedirect(hop: 0))
        #expect(machine.redirectDeclined() == .deliverResponse)
        #expect(machine.state == .awaitingDisposition(hop: 0))
    }

    @Test func aRedirectRepeatingAStreamAsksForANewOne() {
        var provided = Self.machine(in: .awaitingBodyStream(hop: 0))
        #expect(provided.bodyStreamProvided(true) == .startExchange(hop: 1))
        var missing = Self.machine(in: .awaitingBodyStream(hop: 0))
        #expect(missing.bodyStreamProvided(false) == .complete(.bodyStreamExhausted))
    }

    @Test func aChallengeIsRetriedOrBecomesTheResponse() {
        var retried = Self.machine(in: .awaitingChallenge(hop: 0))
        #expect(retried.challengeDecided(retry: true) == .startExchange(hop: 1))
        var declined = Self.machine(in: .awaitingChallenge(hop: 0))
        #expect(declined.challengeDecided(retry: false) == .deliverResponse)
    }

    @Test func answeredChallengesAreLimitedSoNoDelegateLoopsForever() {
        var machine = Self.machine(in: .exchanging(hop: 0))
        for hop in 1...Machine.maximumChallenges {
            #expect(machine.responseReceived(.challenge) == .askChallenge)
            #expect(machine.challengeDecided(retry: true) == .startExchange(hop: hop))
        }
        #expect(machine.challengesAnswered == Machine.maximumChallenges)
        // The next challenge is not asked about: the 401 is the response.
        #expect(machine.responseReceived(.challenge) == .deliverResponse)
    }

    @Test func aChallengeRepeatingAStreamAsksForANewOne() {
        var machine = Self.machine(in: .awaitingChallenge(hop: 0))
        #expect(machine.challengeDecided(retry: true, needsBodyStream: true) == .askBodyStream)
        #expect(machine.bodyStreamProvided(true) == .startExchange(hop: 1))
        var exhausted = Self.machine(in: .awaitingChallenge(hop: 0))
        _ = exhausted.challengeDecided(retry: true, needsBodyStream: true)
        #expect(exhausted.bodyStreamProvided(false) == .complete(.bodyStreamExhausted))
    }

    @Test func aCancellingDispositionEndsTheTaskAsCancelled() {
        var machine = Self.machine(in: .awaitingDisposition(hop: 0))
        #expect(machine.dispositionDecided(allow: false) == .complete(.cancelled))
    }

    @Test func failuresCompleteOnlyWhileSomethingRuns() {
        for state in Self.allStates {
            var machine = Self.machine(in: state)
            let expected: Machine.Action
            switch state {
            case .exchanging, .waitingForConnectivity, .receivingBody: expected = .complete(.exchangeFailed)
            default: expected = .none
            }
            #expect(machine.exchangeFailed(Self.lost) == expected, "in \(state)")
        }
    }

    @Test func cancelStopsRunningWorkOrCompletesAtOnce() {
        for state in Self.allStates {
            var machine = Self.machine(in: state)
            let expected: Machine.Action
            switch state {
            case .initialized, .awaitingRedirect, .awaitingBodyStream, .awaitingChallenge, .awaitingDisposition:
                expected = .complete(.cancelled)
            case .exchanging, .waitingForConnectivity, .receivingBody: expected = .cancelExchange
            case .lookingUpCache, .completed: expected = .none
            }
            #expect(machine.cancel() == expected, "in \(state)")
            #expect(machine.cancel() == .none, "a second cancel in \(state)")
        }
    }

    @Test func whatRunsWhenCancelledReportsCancellation() {
        var lookup = Self.machine(in: .lookingUpCache)
        _ = lookup.cancel()
        #expect(lookup.cacheMissed() == .complete(.cancelled))

        var exchange = Self.machine(in: .exchanging(hop: 0))
        _ = exchange.cancel()
        #expect(exchange.responseReceived(.final) == .complete(.cancelled))

        var failing = Self.machine(in: .exchanging(hop: 0))
        _ = failing.cancel()
        #expect(failing.exchangeFailed(Self.lost) == .complete(.cancelled))

        var body = Self.machine(in: .receivingBody(hop: 0))
        _ = body.cancel()
        #expect(body.bodyReceived() == .complete(.cancelled))

        var waiting = Self.machine(in: .waitingForConnectivity(hop: 0))
        _ = waiting.cancel()
        #expect(waiting.connectivityChanged() == .complete(.cancelled))
    }

    /// With `waitsForConnectivity`, an exchange that finds no route waits, telling the delegate only
    /// the first time, and the same hop goes again once the network changes.
    @Test func noRouteWaitsForConnectivityAndSendsTheSameHopAgain() {
        var machine = Self.machine(in: .exchanging(hop: 0))
        #expect(machine.responseReceived(.redirect) == .askRedirect)
        #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .startExchange(hop: 1))
        #expect(machine.exchangeFoundNoRoute() == .waitForConnectivity(tellDelegate: true))
        #expect(machine.state == .waitingForConnectivity(hop: 1))
        #expect(machine.hasWaitedForConnectivity)
        // Only a waiting task hears of a change; a second one does nothing.
        #expect(machine.connectivityChanged() == .startExchange(hop: 1))
        #expect(machine.connectivityChanged() == .none)
        #expect(machine.state == .exchanging(hop: 1))
        #expect(machine.exchangeFoundNoRoute() == .waitForConnectivity(tellDelegate: false))
        // The wait ending without a change (the resource timeout) fails the task with the task's error.
        #expect(machine.exchangeFailed(Self.lost) == .complete(.exchangeFailed))
        #expect(machine.exchangeFoundNoRoute() == .none)
        #expect(machine.redirects == 1)
    }

    @Test func onlyAnExchangeFindsNoRoute() {
        for state in Self.allStates {
            var machine = Self.machine(in: state)
            let expected: Machine.Action =
                switch state {
                case .exchanging: .waitForConnectivity(tellDelegate: true)
                default: .none
                }
            #expect(machine.exchangeFoundNoRoute() == expected, "in \(state)")
            var another = Self.machine(in: state)
            #expect(
                another.connectivityChanged() == (state == .waitingForConnectivity(hop: 0) ? .startExchange(hop: 0) : .none), "in \(state)")
        }
        var cancelled = Self.machine(in: .exchanging(hop: 0))
        _ = cancelled.cancel()
        #expect(cancelled.exchangeFoundNoRoute() == .complete(.cancelled))
    }

    @Test func lateDecisionsAfterCompletionAreIgnored() {
        for state in [Machine.State.awaitingRedirect(hop: 0), .awaitingChallenge(hop: 0), .awaitingDisposition(hop: 0)] {
            var machine = Self.machine(in: state)
            #expect(machine.cancel() == .complete(.cancelled))
            #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .none)
            #expect(machine.challengeDecided(retry: true) == .none)
            #expect(machine.dispositionDecided(allow: true) == .none)
            #expect(machine.bodyStreamProvided(true) == .none)
            #expect(machine.responseReceived(.final) == .none)
            #expect(machine.bodyReceived() == .none)
            #expect(machine.state == .completed)
        }
    }

    @Test func eventsOutOfOrderDoNothing() {
        for state in Self.allStates {
            var machine = Self.machine(in: state)
            if state != .lookingUpCache { #expect(machine.cacheMissed() == .none, "cacheMissed in \(state)") }
            if state != .initialized { #expect(machine.resume(at: Self.start) == .none, "resume in \(state)") }
            if case .receivingBody = state {} else { #expect(machine.bodyReceived() == .none, "bodyReceived in \(state)") }
            if case .awaitingRedirect = state {
            } else {
                #expect(
                    machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .none,
                    "redirectDecided in \(state)")
            }
            if case .exchanging = state {} else { #expect(machine.responseReceived(.final) == .none, "responseReceived in \(state)") }
        }
    }

    /// The first error reported is the task's: a later one (the cancel that stops an exchange after a
    /// missed pong, or a second failure) does not replace it; a failure reported while nothing runs
    /// is stale and is not kept.
    @Test func theFirstErrorIsTheTasks() {
        let missedPong = URLError(.timedOut)
        var machine = Self.machine(in: .receivingBody(hop: 0))
        #expect(machine.exchangeError == nil)
        machine.recordError(missedPong)
        #expect(machine.exchangeError == missedPong)
        #expect(machine.cancel() == .cancelExchange)
        #expect(machine.exchangeFailed(URLError(.cancelled)) == .complete(.cancelled))
        #expect(machine.exchangeError == missedPong)

        for state in Self.allStates {
            var failing = Self.machine(in: state)
            _ = failing.exchangeFailed(Self.lost)
            _ = failing.exchangeFailed(URLError(.cannotConnectToHost))
            let runs: Bool
            switch state {
            case .exchanging, .waitingForConnectivity, .receivingBody: runs = true
            default: runs = false
            }
            #expect(failing.exchangeError == (runs ? Self.lost : nil), "in \(state)")
        }
    }

    /// A redirect to another origin is remembered for the rest of the task, through later hops that
    /// stay or come back; one not followed, or an answer out of turn, changes nothing.
    @Test func leavingTheOriginStaysForTheRestOfTheTask() {
        var machine = Self.machine(in: .exchanging(hop: 0))
        _ = machine.responseReceived(.redirect)
        #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .startExchange(hop: 1))
        #expect(!machine.hasLeftOrigin)
        _ = machine.responseReceived(.redirect)
        #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: true) == .startExchange(hop: 2))
        #expect(machine.hasLeftOrigin)
        _ = machine.responseReceived(.redirect)
        #expect(machine.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: false) == .startExchange(hop: 3))
        #expect(machine.hasLeftOrigin)

        var declined = Self.machine(in: .awaitingRedirect(hop: 0))
        #expect(declined.redirectDecided(follow: false, needsBodyStream: false, leavesOrigin: true) == .deliverResponse)
        #expect(!declined.hasLeftOrigin)
        for state in Self.allStates where state != .awaitingRedirect(hop: 0) {
            var outOfTurn = Self.machine(in: state)
            _ = outOfTurn.redirectDecided(follow: true, needsBodyStream: false, leavesOrigin: true)
            #expect(!outOfTurn.hasLeftOrigin, "in \(state)")
        }
    }
}
