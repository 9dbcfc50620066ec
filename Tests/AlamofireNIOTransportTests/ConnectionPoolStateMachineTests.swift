import Testing

@testable import AlamofireNIOTransport

@Suite struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine

    @Test func firstRequestOpensAConnectionThenLeasesIt() {
        var machine = Machine(maximumConnections: 2)
        #expect(machine.requestLease(1) == [.createConnection(0)])
        #expect(machine.connectionEstablished(0) == [.lease(connection: 0, request: 1)])
        #expect(machine.connections == [0: .leased])
        #expect(machine.waiters.isEmpty)
    }

    @Test func idleConnectionIsReused() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        #expect(machine.exchangeFinished(on: 0, reusable: true) == [.scheduleIdleTimeout(0)])
        #expect(machine.requestLease(2) == [.lease(connection: 0, request: 2)])
    }

    @Test func limitIsNeverExceededAndWaitersAreFIFO() {
        var machine = Machine(maximumConnections: 2)
        #expect(machine.requestLease(1) == [.createConnection(0)])
        #expect(machine.requestLease(2) == [.createConnection(1)])
        #expect(machine.requestLease(3) == [])
        #expect(machine.requestLease(4) == [])
        #expect(machine.connections.count == 2)
        #expect(machine.connectionEstablished(1) == [.lease(connection: 1, request: 1)])
        #expect(machine.connectionEstablished(0) == [.lease(connection: 0, request: 2)])
        #expect(machine.exchangeFinished(on: 0, reusable: true) == [.lease(connection: 0, request: 3)])
        #expect(machine.exchangeFinished(on: 1, reusable: true) == [.lease(connection: 1, request: 4)])
    }

    @Test func closingConnectionsCountUntilClosed() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        _ = machine.requestLease(2)
        #expect(machine.exchangeFinished(on: 0, reusable: false) == [.closeConnection(0)])
        #expect(machine.connections == [0: .closing])
        #expect(machine.connectionClosed(0) == [.createConnection(1)])
        #expect(machine.connectionEstablished(1) == [.lease(connection: 1, request: 2)])
    }

    @Test func failedConnectionFailsTheOldestWaiterAndRetriesForOthers() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.requestLease(2)
        #expect(machine.connectionFailed(0) == [.failRequest(1, .connectionFailed), .createConnection(1)])
        #expect(machine.connectionFailed(1) == [.failRequest(2, .connectionFailed)])
        #expect(machine.isEmpty)
    }

    @Test func cancelledWaiterLeavesTheQueue() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.requestLease(2)
        #expect(machine.cancelRequest(1) == [.failRequest(1, .cancelled)])
        #expect(machine.cancelRequest(1) == [])
        #expect(machine.connectionEstablished(0) == [.lease(connection: 0, request: 2)])
    }

    @Test func connectionWithNoWaiterLeftBecomesIdle() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.cancelRequest(1)
        #expect(machine.connectionEstablished(0) == [.scheduleIdleTimeout(0)])
        #expect(machine.idleTimeoutFired(0) == [.closeConnection(0)])
        #expect(machine.idleTimeoutFired(0) == [])
        #expect(machine.connectionClosed(0) == [])
        #expect(machine.isEmpty)
    }

    @Test func serverClosingAnIdleConnectionRemovesIt() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        _ = machine.exchangeFinished(on: 0, reusable: true)
        #expect(machine.connectionClosed(0) == [])
        #expect(machine.requestLease(2) == [.createConnection(1)])
    }

    @Test func freshConnectionWaiterSkipsIdleOnes() {
        var machine = Machine(maximumConnections: 2)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        _ = machine.exchangeFinished(on: 0, reusable: true)
        #expect(machine.requestLease(2, needsFreshConnection: true) == [.createConnection(1)])
        #expect(machine.connectionEstablished(1) == [.lease(connection: 1, request: 2)])
    }

    @Test func freshConnectionWaiterAtTheLimitClosesAnIdleOne() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        _ = machine.exchangeFinished(on: 0, reusable: true)
        #expect(machine.requestLease(2, needsFreshConnection: true) == [.closeConnection(0)])
        #expect(machine.connectionClosed(0) == [.createConnection(1)])
    }

    @Test func releasedConnectionMakesRoomForFreshWaiter() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        _ = machine.connectionEstablished(0)
        #expect(machine.requestLease(2, needsFreshConnection: true) == [])
        #expect(machine.exchangeFinished(on: 0, reusable: true) == [.closeConnection(0)])
        #expect(machine.connectionClosed(0) == [.createConnection(1)])
    }

    @Test func shutDownFailsWaitersAndClosesIdleConnections() {
        var machine = Machine(maximumConnections: 3)
        _ = machine.requestLease(1)
        _ = machine.requestLease(2)
        _ = machine.connectionEstablished(0)
        _ = machine.exchangeFinished(on: 0, reusable: true)  // serves request 2
        _ = machine.requestLease(3)  // waits for connection 1, still opening
        let actions = machine.shutDown()
        #expect(actions == [.failRequest(3, .shutDown)])
        #expect(machine.requestLease(4) == [.failRequest(4, .shutDown)])
        #expect(machine.connectionEstablished(1) == [.closeConnection(1)])
        #expect(machine.exchangeFinished(on: 0, reusable: true) == [.closeConnection(0)])
    }

    @Test func onlyAnEmptyPoolRetiresAndThenTurnsRequestsAway() {
        var machine = Machine(maximumConnections: 1)
        _ = machine.requestLease(1)
        let retiredWhileWaiting = machine.retireIfEmpty()
        _ = machine.connectionEstablished(0)
        _ = machine.exchangeFinished(on: 0, reusable: true)
        let retiredWhileIdle = machine.retireIfEmpty()
        _ = machine.idleTimeoutFired(0)
        _ = machine.connectionClosed(0)
        let retiredWhenEmpty = machine.retireIfEmpty()
        #expect(!retiredWhileWaiting && !retiredWhileIdle && retiredWhenEmpty)
        #expect(machine.requestLease(2) == [.failRequest(2, .retired)])
        #expect(machine.isEmpty)
    }
}
