import AFCollections
import NIOCore
import NIOPosix
import Testing

@testable import AlamofireNIOTransport

/// How an origin's HTTP/2 streams spread over a second connection (on another event loop) once one
/// connection carries ``ConnectionPoolStateMachine/streamsBeforeSpreading`` of them, as values.
@Suite struct HTTP2SpreadingTests {
    typealias Machine = ConnectionPoolStateMachine
    private let now = NIODeadline.uptimeNanoseconds(1_000_000_000)

    /// A machine whose connection 0 is open with HTTP/2 and carries `leased` streams (requests 1...leased).
    private func machine(
        leased: Int, capacity: Int = 100, maximumConnections: Int = 6, maximumHTTP2Connections: Int = 2
    ) -> Machine {
        var machine = Machine(
            maximumConnections: maximumConnections, maximumHTTP2Connections: maximumHTTP2Connections, mayNegotiateHTTP2: true)
        _ = machine.requestLease(1, now: now)
        _ = machine.connectionEstablished(0, version: .http2, capacity: capacity, now: now)
        for request in stride(from: 2, through: leased, by: 1) { _ = machine.requestLease(request, now: now) }
        return machine
    }

    @Test func theLeaseThatBringsAConnectionToEightStreamsOpensASecond() {
        var machine = machine(leased: 6)
        #expect(machine.requestLease(7, now: now) == [.lease(connection: 0, request: 7)])
        #expect(machine.requestLease(8, now: now) == [.lease(connection: 0, request: 8), .createConnection(1)])
        // Opening: no third, and streams stay on the open one meanwhile.
        #expect(machine.requestLease(9, now: now) == [.lease(connection: 0, request: 9)])
        #expect(machine.connections == [0: .open(.http2, leased: 9, capacity: 100), 1: .connecting])
    }

    @Test func newStreamsGoToTheConnectionCarryingTheFewestAndNoThirdOpens() {
        var machine = machine(leased: 8)
        #expect(
            machine.connectionEstablished(1, version: .http2, capacity: 100, now: now) == [
                .schedule(.idle(connection: 1), at: now + .seconds(60))
            ])
        for request in 9...16 { #expect(machine.requestLease(request, now: now) == [.lease(connection: 1, request: request)]) }
        // Equal at 8 each: the lower id first, then the other; never a third connection.
        #expect(machine.requestLease(17, now: now) == [.lease(connection: 0, request: 17)])
        #expect(machine.requestLease(18, now: now) == [.lease(connection: 1, request: 18)])
        #expect(machine.connections.count == 2)
    }

    @Test func aFullConnectionBelowEightStreamsOpensASecondForItsWaiters() {
        var machine = machine(leased: 3, capacity: 4)
        #expect(machine.requestLease(4, now: now) == [.lease(connection: 0, request: 4), .createConnection(1)])
        #expect(machine.requestLease(5, now: now) == [])
        #expect(machine.connectionEstablished(1, version: .http2, capacity: 4, now: now) == [.lease(connection: 1, request: 5)])
    }

    @Test func waitersBeyondTheFirstConnectionsStreamsOpenTheSecondAsItIsEstablished() {
        var machine = Machine(maximumConnections: 6, maximumHTTP2Connections: 2, mayNegotiateHTTP2: true)
        for request in 1...5 { _ = machine.requestLease(request, now: now) }
        let leases = Machine.Actions(contentsOf: (1...4).map { Machine.Action.lease(connection: 0, request: $0) })
        #expect(machine.connectionEstablished(0, version: .http2, capacity: 4, now: now) == leases + [.createConnection(1)])
        #expect(machine.connectionEstablished(1, version: .http2, capacity: 4, now: now) == [.lease(connection: 1, request: 5)])
    }

    /// The second connection is a guess, opened for no one: when it fails, the waiters wait on for
    /// the open connection's streams, and only a waiter that needs a fresh connection hears of it.
    @Test func aFailedSecondConnectionFailsNoWaiterTheOpenOneServes() {
        var machine = machine(leased: 3, capacity: 4)
        _ = machine.requestLease(4, now: now)
        _ = machine.requestLease(5, now: now)
        _ = machine.requestLease(6, needsFreshConnection: true, now: now)
        #expect(
            machine.connectionFailed(1, now: now) == [.failRequest(6, .connectionFailed), .schedule(.backoff, at: now + .milliseconds(25))])
        #expect(machine.waiters.map(\.id) == [5])
        #expect(machine.exchangeFinished(on: 0, reusable: true, now: now) == [.lease(connection: 0, request: 5)])
        var timedOut = self.machine(leased: 4, capacity: 4)
        _ = timedOut.requestLease(5, now: now)
        #expect(timedOut.connectionFailed(1, timedOut: true, now: now) == [.schedule(.backoff, at: now + .milliseconds(25))])
        #expect(timedOut.waiters.map(\.id) == [5])
    }

    @Test func thePerHostLimitHolds() {
        var machine = machine(leased: 4, capacity: 4, maximumConnections: 1)
        #expect(machine.requestLease(5, now: now) == [])
        #expect(machine.connections.count == 1)
        #expect(machine.waiters.map(\.id) == [5])
    }

    @Test func oneEventLoopOrHTTP1NeverSpreads() {
        var oneLoop = machine(leased: 7, maximumHTTP2Connections: 1)
        #expect(oneLoop.requestLease(8, now: now) == [.lease(connection: 0, request: 8)])
        var http1 = Machine(maximumConnections: 6, maximumHTTP2Connections: 2)
        _ = http1.requestLease(1, now: now)
        _ = http1.connectionEstablished(0, version: .http1, capacity: 1, now: now)
        #expect(http1.connections == [0: .open(.http1, leased: 1, capacity: 1)])
    }

    /// A new connection opens on a loop none of the pool's connections is on, while there is one.
    @Test func aNewConnectionAvoidsTheLoopsThePoolsConnectionsAreOn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 3)
        let loops = Array(group.makeIterator())
        for used in [[loops[0]], [loops[1]], [loops[0], loops[2]]] {
            for _ in 0..<6 {
                let chosen = ConnectionPool.eventLoop(in: group, count: 3, avoiding: used)
                #expect(!used.contains { $0 === chosen })
            }
        }
        // Every loop used: the group's next, whichever it is.
        let anyLoop = ConnectionPool.eventLoop(in: group, count: 3, avoiding: loops)
        #expect(loops.contains { $0 === anyLoop })
        try await group.shutdownGracefully()
    }
}
