import AFCollections
import NIOCore
import Testing

@testable import AlamofireNIOTransport

/// The moment every event happens at unless a test says otherwise.
private let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
private let idle = TimeAmount.seconds(60)

/// Shorthands with the clock at `t0` unless given.
extension ConnectionPoolStateMachine {
    fileprivate mutating func request(_ id: Int, fresh: Bool = false, deadline: NIODeadline? = nil, at now: NIODeadline = t0) -> Actions {
        requestLease(id, needsFreshConnection: fresh, deadline: deadline, now: now)
    }

    fileprivate mutating func established(
        _ id: Int, _ version: HTTPVersion = .http1, capacity: Int = 1, at now: NIODeadline = t0
    ) -> Actions {
        connectionEstablished(id, version: version, capacity: capacity, now: now)
    }

    fileprivate mutating func finished(_ id: Int, reusable: Bool = true, at now: NIODeadline = t0) -> Actions {
        exchangeFinished(on: id, reusable: reusable, now: now)
    }

    fileprivate mutating func failed(_ id: Int, at now: NIODeadline = t0) -> Actions { connectionFailed(id, now: now) }
    fileprivate mutating func closed(_ id: Int, at now: NIODeadline = t0) -> Actions { connectionClosed(id) }
}

@Suite struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine

    @Test func firstRequestOpensAConnectionThenLeasesIt() {
        var machine = Machine(maximumConnections: 2)
        #expect(machine.request(1) == [.createConnection(0)])
        #expect(machine.established(0) == [.lease(connection: 0, request: 1)])
        #expect(machine.connections == [0: .open(.http1, leased: 1, capacity: 1)])
        #expect(machine.waiters.isEmpty)
    }

    @Test func connectionCountsSayWhichOpenConnectionsAreActiveAndWhichIdle() {
        var machine = Machine(maximumConnections: 3)
        _ = machine.request(1)
        _ = machine.request(2)
        #expect(machine.connectionCounts == (0, 0))
        _ = machine.established(0)
        #expect(machine.connectionCounts == (1, 0))
        _ = machine.established(1)
        _ = machine.finished(0)
        #expect(machine.connectionCounts == (1, 1))
        _ = machine.finished(1)
        #expect(machine.connectionCounts == (0, 2))
        _ = machine.closed(0)
        #expect(machine.connectionCounts == (0, 1))
    }

    @Test func idleConnectionIsReusedAndArmsItsTimerOnce() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.request(1)
        _ = machine.established(0)
        #expect(machine.finished(0) == [.schedule(.idle(connection: 0), at: t0 + idle)])
        #expect(machine.request(2) == [.lease(connection: 0, request: 2)])
        // Idle again while its timer is still armed: no second timer.
        #expect(machine.finished(0, at: t0 + .seconds(10)) == [])
        #expect(machine.idleSince == [0: t0 + .seconds(10)])
    }

    @Test func anIdleTimerThatFiresEarlyIsArmedForTheRestOfTheIdlePeriod() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.established(0)
        _ = machine.finished(0)
        _ = machine.request(2)
        _ = machine.finished(0, at: t0 + .seconds(10))
        #expect(machine.timerFired(.idle(connection: 0), now: t0 + idle) == [.schedule(.idle(connection: 0), at: t0 + .seconds(10) + idle)])
        #expect(machine.timerFired(.idle(connection: 0), now: t0 + .seconds(10) + idle) == [.closeConnection(0)])
        #expect(machine.connections == [0: .closing])
        #expect(machine.armedTimers.isEmpty)
    }

    @Test func limitIsNeverExceededAndWaitersAreFIFO() {
        var machine = Machine(maximumConnections: 2)
        #expect(machine.request(1) == [.createConnection(0)])
        #expect(machine.request(2) == [.createConnection(1)])
        #expect(machine.request(3) == [])
        #expect(machine.request(4) == [])
        #expect(machine.connections.count == 2)
        #expect(machine.established(1) == [.lease(connection: 1, request: 1)])
        #expect(machine.established(0) == [.lease(connection: 0, request: 2)])
        #expect(machine.finished(0) == [.lease(connection: 0, request: 3)])
        #expect(machine.finished(1) == [.lease(connection: 1, request: 4)])
    }

    @Test func closingConnectionsCountUntilClosed() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.established(0)
        _ = machine.request(2)
        #expect(machine.finished(0, reusable: false) == [.closeConnection(0)])
        #expect(machine.connections == [0: .closing])
        #expect(machine.closed(0) == [.createConnection(1)])
        #expect(machine.established(1) == [.lease(connection: 1, request: 2)])
    }

    @Test func aQueuedRequestWithADeadlineArmsAndCancelsItsWaitTimer() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        let deadline = t0 + .seconds(5)
        #expect(machine.request(2, deadline: deadline) == [.schedule(.wait(request: 2), at: deadline)])
        #expect(machine.established(0) == [.lease(connection: 0, request: 1)])
        #expect(machine.finished(0) == [.cancel(.wait(request: 2)), .lease(connection: 0, request: 2)])
    }

    /// The defect of the pool before its timers were the machine's: a cancelled waiter's timer
    /// stayed scheduled (URLSession's 7-day resource timeout kept the pool for 7 days).
    @Test func aCancelledQueuedRequestCancelsItsWaitTimer() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.request(2, deadline: t0 + .seconds(7 * 86_400))
        #expect(machine.cancelRequest(2) == [.cancel(.wait(request: 2)), .failRequest(2, .cancelled)])
        #expect(machine.cancelRequest(1) == [.failRequest(1, .cancelled)])
        #expect(machine.waiters.isEmpty)
    }

    @Test func aWaitTimerFiringFailsOnlyAWaitingRequest() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.request(2, deadline: t0 + .seconds(1))
        #expect(machine.timerFired(.wait(request: 2), now: t0) == [.failRequest(2, .timedOut)])
        #expect(machine.timerFired(.wait(request: 2), now: t0) == [])
        #expect(machine.timerFired(.wait(request: 1), now: t0) == [])
        #expect(machine.waiters.map(\.id) == [1])
    }

    /// The pool keeps nothing of a request that is not waiting: a cancel that overtakes its
    /// registration is the exchange controller's to apply once registered (`ConnectionPoolSimulationTests`).
    @Test func aCancelForARequestNotWaitingChangesNothing() {
        var machine = Machine(maximumConnections: 1)
        #expect(machine.cancelRequest(7) == [])
        #expect(machine.request(7) == [.createConnection(0)])
        #expect(machine.waiters.map(\.id) == [7])
        #expect(machine.cancelRequest(7) == [.failRequest(7, .cancelled)])
        #expect(machine.waiters.isEmpty)
        #expect(machine.cancelRequest(7) == [])
    }

    @Test func aFailedConnectionFailsTheOldestWaiterAndEveryOtherOnceNothingIsLeft() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.request(1)
        _ = machine.request(2)
        _ = machine.request(3)
        // Connection 1 may still serve the others; a third attempt waits for the backoff.
        #expect(machine.failed(0) == [.failRequest(1, .connectionFailed), .schedule(.backoff, at: t0 + .milliseconds(25))])
        #expect(machine.failed(1) == [.failRequest(2, .connectionFailed), .failRequest(3, .connectionFailed)])
        #expect(machine.isEmpty)
        #expect(machine.consecutiveFailures == 2)
    }

    /// One request's short timeout bounds its own wait, not another's: the attempt opened for it
    /// is bounded by the latest waiter's deadline, and when it runs out of time only the waiters
    /// whose deadline has passed fail; a later one gets a new attempt after the backoff.
    @Test func anAttemptThatRanOutOfTimeFailsOnlyTheWaitersWhoseDeadlinePassed() {
        var machine = Machine(maximumConnections: 1)
        let short = t0 + .microseconds(100)
        #expect(machine.request(1, deadline: short) == [.schedule(.wait(request: 1), at: short), .createConnection(0)])
        #expect(machine.deadlineForNewConnection == short)
        let long = t0 + .seconds(60)
        #expect(machine.request(2, deadline: long) == [.schedule(.wait(request: 2), at: long)])
        #expect(machine.deadlineForNewConnection == long)
        let backoff = short + Machine.backoff(afterFailures: 1)
        #expect(
            machine.connectionFailed(0, timedOut: true, now: short) == [
                .cancel(.wait(request: 1)), .failRequest(1, .connectionFailed), .schedule(.backoff, at: backoff),
            ])
        #expect(machine.waiters.map(\.id) == [2])
        #expect(machine.timerFired(.backoff, now: backoff) == [.createConnection(1)])
        #expect(machine.deadlineForNewConnection == long)
        #expect(machine.established(1, at: backoff) == [.cancel(.wait(request: 2)), .lease(connection: 1, request: 2)])
        // A waiter without a deadline leaves the bound to the factory.
        _ = machine.request(3)
        #expect(machine.deadlineForNewConnection == nil)
    }

    @Test func anAttemptThatRanOutOfTheFactorysBoundFailsTheWaitersWithoutADeadline() {
        var machine = Machine(maximumConnections: 1)
        #expect(machine.request(1) == [.createConnection(0)])
        let later = t0 + .seconds(120)
        #expect(machine.request(2, deadline: later) == [.schedule(.wait(request: 2), at: later)])
        let now = t0 + .seconds(60)
        #expect(
            machine.connectionFailed(0, timedOut: true, now: now) == [
                .failRequest(1, .connectionFailed), .schedule(.backoff, at: now + Machine.backoff(afterFailures: 1)),
            ])
        #expect(machine.waiters.map(\.id) == [2])
    }

    @Test func attemptsAfterAFailureBackOffUntilOneSucceeds() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        let first = t0 + Machine.backoff(afterFailures: 1)
        #expect(machine.failed(0) == [.failRequest(1, .connectionFailed), .schedule(.backoff, at: first)])
        #expect(machine.request(2) == [])
        #expect(machine.request(3) == [])
        #expect(machine.timerFired(.backoff, now: first) == [.createConnection(1)])
        let second = first + Machine.backoff(afterFailures: 2)
        #expect(
            machine.failed(1, at: first) == [
                .failRequest(2, .connectionFailed), .failRequest(3, .connectionFailed), .schedule(.backoff, at: second),
            ])
        #expect(machine.request(4, at: first) == [])
        #expect(machine.timerFired(.backoff, now: second) == [.createConnection(2)])
        #expect(machine.established(2) == [.lease(connection: 2, request: 4)])
        #expect(machine.consecutiveFailures == 0)
    }

    @Test func aFailureDuringTheBackoffPushesItBack() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.request(1)
        _ = machine.request(2)
        let first = t0 + Machine.backoff(afterFailures: 1)
        let later = t0 + .milliseconds(10) + Machine.backoff(afterFailures: 2)
        #expect(machine.failed(0) == [.failRequest(1, .connectionFailed), .schedule(.backoff, at: first)])
        #expect(machine.failed(1, at: t0 + .milliseconds(10)) == [.failRequest(2, .connectionFailed)])
        _ = machine.request(3)
        // The timer armed for the first failure fires early: it is armed again for the rest.
        #expect(machine.timerFired(.backoff, now: first) == [.schedule(.backoff, at: later)])
        #expect(machine.timerFired(.backoff, now: later) == [.createConnection(2)])
    }

    @Test func aPoolBackingOffIsNotRetired() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.failed(0)
        #expect(machine.isEmpty)
        let retiredWhileBackingOff = machine.retireIfEmpty()
        _ = machine.timerFired(.backoff, now: t0 + .seconds(1))
        let retiredAfter = machine.retireIfEmpty()
        #expect(!retiredWhileBackingOff && retiredAfter)
    }

    @Test func newsFromAnHTTP2ConnectionBeforeItIsRegisteredIsKept() {
        var machine = Machine(maximumConnections: 2, mayNegotiateHTTP2: true)
        _ = machine.request(1)
        _ = machine.request(2)
        #expect(machine.connectionCapacityChanged(0, capacity: 1, now: t0) == [])
        #expect(machine.established(0, .http2, capacity: 100) == [.lease(connection: 0, request: 1)])
        #expect(machine.connections[0] == .open(.http2, leased: 1, capacity: 1))

        var goingAway = Machine(maximumConnections: 2, mayNegotiateHTTP2: true)
        _ = goingAway.request(1)
        #expect(goingAway.connectionGoingAway(0) == [])
        // It takes no stream; the waiter gets a connection of its own.
        #expect(goingAway.established(0, .http2, capacity: 100) == [.createConnection(1)])
        #expect(goingAway.connections == [0: .closing, 1: .connecting])
    }

    @Test func backoffDoublesToItsLimit() {
        #expect(Machine.backoff(afterFailures: 1) == .milliseconds(25))
        #expect(Machine.backoff(afterFailures: 2) == .milliseconds(50))
        #expect(Machine.backoff(afterFailures: 4) == .milliseconds(200))
        #expect(Machine.backoff(afterFailures: 7) == .milliseconds(1600))
        #expect(Machine.backoff(afterFailures: 8) == Machine.longestBackoff)
        #expect(Machine.backoff(afterFailures: 1000) == Machine.longestBackoff)
    }

    @Test func connectionWithNoWaiterLeftBecomesIdle() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.cancelRequest(1)
        #expect(machine.established(0) == [.schedule(.idle(connection: 0), at: t0 + idle)])
        #expect(machine.timerFired(.idle(connection: 0), now: t0 + idle) == [.closeConnection(0)])
        #expect(machine.timerFired(.idle(connection: 0), now: t0 + idle) == [])
        #expect(machine.closed(0) == [])
        #expect(machine.isEmpty)
    }

    @Test func aClosedConnectionsArmedIdleTimerIsCancelled() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.established(0)
        _ = machine.finished(0)
        #expect(machine.closed(0) == [.cancel(.idle(connection: 0))])
        #expect(machine.request(2) == [.createConnection(1)])
    }

    @Test func freshConnectionWaiterSkipsIdleOnes() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.request(1)
        _ = machine.established(0)
        _ = machine.finished(0)
        #expect(machine.request(2, fresh: true) == [.createConnection(1)])
        #expect(machine.established(1) == [.lease(connection: 1, request: 2)])
    }

    @Test func freshConnectionWaiterAtTheLimitClosesAnIdleOne() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.established(0)
        _ = machine.finished(0)
        #expect(machine.request(2, fresh: true) == [.closeConnection(0)])
        #expect(machine.closed(0) == [.cancel(.idle(connection: 0)), .createConnection(1)])
    }

    @Test func releasedConnectionMakesRoomForFreshWaiter() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.established(0)
        #expect(machine.request(2, fresh: true) == [])
        #expect(machine.finished(0) == [.closeConnection(0)])
        #expect(machine.closed(0) == [.createConnection(1)])
    }

    @Test func shutDownFailsWaitersAndClosesIdleConnections() {
        var machine = Machine(maximumConnections: 3)
        _ = machine.request(1)
        _ = machine.request(2)
        _ = machine.established(0)
        _ = machine.finished(0)  // serves request 2
        _ = machine.request(3)  // waits for connection 1, still opening
        #expect(machine.shutDown() == [.failRequest(3, .shutDown)])
        #expect(machine.request(4) == [.failRequest(4, .shutDown)])
        #expect(machine.established(1) == [.closeConnection(1)])
        #expect(machine.finished(0) == [.closeConnection(0)])
    }

    @Test func onlyAnEmptyPoolRetiresAndThenTurnsRequestsAway() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        let retiredWhileWaiting = machine.retireIfEmpty()
        _ = machine.established(0)
        _ = machine.finished(0)
        let retiredWhileIdle = machine.retireIfEmpty()
        _ = machine.timerFired(.idle(connection: 0), now: t0 + idle)
        _ = machine.closed(0)
        let retiredWhenEmpty = machine.retireIfEmpty()
        #expect(!retiredWhileWaiting && !retiredWhileIdle && retiredWhenEmpty)
        #expect(machine.request(2) == [.failRequest(2, .retired)])
        #expect(machine.isEmpty)
    }

    // MARK: HTTP/2

    @Test func aTLSOriginOpensOneConnectionUntilItsProtocolIsKnown() {
        var machine = Machine(maximumConnections: 6, mayNegotiateHTTP2: true)
        #expect(machine.request(1) == [.createConnection(0)])
        #expect(machine.request(2) == [])
        #expect(machine.request(3) == [])
        // HTTP/1.1 after all: the others get connections of their own.
        #expect(machine.established(0) == [.lease(connection: 0, request: 1), .createConnection(1), .createConnection(2)])
        #expect(machine.httpVersion == .http1)
    }

    @Test func oneHTTP2ConnectionServesEveryWaiterUpToItsStreamLimitAndTheRestWaitForIt() {
        var machine = Machine(maximumConnections: 6, mayNegotiateHTTP2: true)
        for request in 1...5 { _ = machine.request(request) }
        #expect(
            machine.established(0, .http2, capacity: 3) == [
                .lease(connection: 0, request: 1), .lease(connection: 0, request: 2), .lease(connection: 0, request: 3),
            ])
        #expect(machine.connections == [0: .open(.http2, leased: 3, capacity: 3)])
        #expect(machine.finished(0) == [.lease(connection: 0, request: 4)])
        #expect(machine.finished(0) == [.lease(connection: 0, request: 5)])
        #expect(machine.finished(0) == [])
        #expect(machine.connections == [0: .open(.http2, leased: 2, capacity: 3)])
    }

    @Test func aKnownHTTP2OriginLeasesStreamsWithoutNewConnections() {
        var machine = Machine(maximumConnections: 6, mayNegotiateHTTP2: true)
        _ = machine.request(1)
        _ = machine.established(0, .http2, capacity: 100)
        for request in 2...100 { #expect(machine.request(request) == [.lease(connection: 0, request: request)]) }
        #expect(machine.request(101) == [])
        #expect(machine.waiters.map(\.id) == [101])
        #expect(machine.connections.count == 1)
    }

    @Test func shutDownCancelsAnArmedBackoff() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.request(1)
        _ = machine.failed(0)
        _ = machine.request(2)
        #expect(machine.armedTimers.contains(.backoff))
        #expect(machine.shutDown() == [.cancel(.backoff), .failRequest(2, .shutDown)])
        #expect(!machine.armedTimers.contains(.backoff))
    }

    @Test func aWaiterThatNeedsAFreshConnectionGetsOneBesideABusyHTTP2Connection() {
        var machine = Machine(maximumConnections: 2, mayNegotiateHTTP2: true)
        _ = machine.request(1)
        _ = machine.established(0, .http2, capacity: 10)
        #expect(machine.request(2, fresh: true) == [.createConnection(1)])
    }

    @Test func aRaisedStreamLimitServesWaiters() {
        var machine = Machine(maximumConnections: 1, mayNegotiateHTTP2: true)
        _ = machine.request(1)
        _ = machine.request(2)
        _ = machine.established(0, .http2, capacity: 1)
        #expect(machine.connectionCapacityChanged(0, capacity: 2, now: t0) == [.lease(connection: 0, request: 2)])
    }

    @Test func aConnectionGoingAwayTakesNoNewStreamAndLetsItsStreamsFinish() {
        var machine = Machine(maximumConnections: 2, mayNegotiateHTTP2: true)
        _ = machine.request(1)
        _ = machine.established(0, .http2, capacity: 10)
        _ = machine.request(2)
        #expect(machine.connectionGoingAway(0) == [])
        #expect(machine.connections[0] == .closing)
        #expect(machine.request(3) == [.createConnection(1)])
        #expect(machine.finished(0) == [])
        #expect(machine.closed(0) == [])
    }
}
