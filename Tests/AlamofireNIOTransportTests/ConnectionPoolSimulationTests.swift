import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// Whole pool runs without a socket or a real clock: a ``ScriptedConnectionFactory`` opens (or
/// fails) each connection when the test says, its connections are `NIOAsyncTestingChannel`s, and
/// the pool's timers run on a `NIOAsyncTestingEventLoop` whose time only the test advances. So the
/// idle timeout, a queued request's deadline and the backoff are tested at their exact instants.
@Suite struct ConnectionPoolSimulationTests {
    /// The factory's loop is the pool's clock; the leases report to `leases`.
    struct Run {
        let loop = NIOAsyncTestingEventLoop()
        let factory: ScriptedConnectionFactory
        let pool: ConnectionPool
        let leases = Arrivals<LeaseOutcome>()

        init(maximumConnections: Int, idleTimeout: TimeAmount = .seconds(60), tls: Bool = false) throws {
            factory = ScriptedConnectionFactory(loop: loop)
            pool = ConnectionPool(
                origin: try Origin(url: URL(string: tls ? "https://example.test" : "http://example.test")!), factory: factory,
                maximumConnections: maximumConnections, idleTimeout: idleTimeout, logger: Logger(label: "test"))
        }

        /// Asks for a connection for `request` (a fresh one when `fresh`: a retry after a reused
        /// connection died), waiting at most `wait` on the test clock (or for ever).
        func lease(_ request: Int, fresh: Bool = false, within wait: TimeAmount? = nil) {
            let leases = self.leases
            pool.lease(request: request, needsFreshConnection: fresh, deadline: wait.map { loop.now + $0 }) { result in
                leases.record(LeaseOutcome(request: request, result: result))
            }
        }

        /// Lets the loop run what it was handed (timers armed, closes) without moving its time.
        func settle() async { await loop.run() }

        /// Leases a first connection to `request` and opens it: the connection, once leased.
        func leaseFirstConnection(to request: Int) async throws -> ScriptedConnection {
            lease(request)
            let connection = factory.open(try await factory.nextAttempt())
            let leased = try await leases.next()
            #expect(leased.request == request && leased.connectionID == connection.id)
            return connection
        }

        /// A first connection, opened for request 1 and idle again once its exchange finished.
        func idleConnection() async throws -> ScriptedConnection {
            let connection = try await leaseFirstConnection(to: 1)
            pool.exchangeFinished(connectionID: connection.id, reusable: true)
            return connection
        }

        /// Asks for a fresh connection for `request` while `idle` is idle, opens the attempt the pool
        /// makes for it, and checks that connection is leased to `request`.
        func leaseFreshConnection(to request: Int, besides idle: ScriptedConnection) async throws {
            lease(request, fresh: true)
            let fresh = try await factory.nextAttempt()
            #expect(fresh != idle.id)
            factory.open(fresh)
            let leased = try await leases.next()
            #expect(leased.request == request && leased.connectionID == fresh)
        }

        /// Ends the run: the pool shut down, every scripted connection closed, the loop stopped.
        func finish() async {
            pool.shutDown()
            for connection in factory.connections { connection.close() }
            await loop.run()
            await loop.shutdownGracefully()
        }
    }

    @Test func anIdleConnectionClosesExactlyAtItsIdleTimeout() async throws {
        let run = try Run(maximumConnections: 1, idleTimeout: .seconds(60))
        let connection = try await run.idleConnection()
        #expect(run.pool.connectionCounts == (active: 0, idle: 1))
        await run.settle()
        await run.loop.advanceTime(by: .seconds(60) - .nanoseconds(1))
        #expect(!connection.isClosed && run.pool.connectionCounts == (active: 0, idle: 1))
        await run.loop.advanceTime(by: .nanoseconds(1))
        try await withTimeout { try await connection.channel.closeFuture.get() }
        await run.settle()
        #expect(run.pool.connectionCounts == (active: 0, idle: 0))
        #expect(run.pool.scheduledTimerCount == 0)
        await run.finish()
    }

    /// A connection used again restarts its idle period: the timer armed at the first idle moment
    /// finds it used since, and waits for the rest of the new period.
    @Test func aConnectionUsedAgainWaitsAWholeNewIdlePeriod() async throws {
        let run = try Run(maximumConnections: 1, idleTimeout: .seconds(10))
        let connection = try await run.idleConnection()
        await run.settle()
        await run.loop.advanceTime(by: .seconds(6))
        run.lease(2)
        #expect(try await run.leases.next().connectionID == connection.id)
        run.pool.exchangeFinished(connectionID: connection.id, reusable: true)
        // The first timer fires at 10 s, 4 s into the second idle period, which ends at 16 s.
        await run.loop.advanceTime(by: .seconds(10) - .nanoseconds(1))
        #expect(!connection.isClosed)
        await run.loop.advanceTime(by: .nanoseconds(1))
        try await withTimeout { try await connection.channel.closeFuture.get() }
        await run.finish()
    }

    @Test func aQueuedRequestFailsExactlyAtItsDeadlineAndLeavesNoTimer() async throws {
        let run = try Run(maximumConnections: 1)
        _ = try await run.leaseFirstConnection(to: 1)
        run.lease(2, within: .seconds(30))
        await run.settle()
        #expect(run.pool.scheduledTimerCount == 1 && run.pool.waitingRequestCount == 1)
        await run.loop.advanceTime(by: .seconds(30) - .nanoseconds(1))
        #expect(run.leases.count == 1 && run.pool.waitingRequestCount == 1)
        await run.loop.advanceTime(by: .nanoseconds(1))
        let outcome = try await run.leases.next()
        #expect(outcome.request == 2 && outcome.transportError?.code == .timedOut)
        #expect(run.pool.scheduledTimerCount == 0 && run.pool.waitingRequestCount == 0)
        await run.finish()
    }

    /// Two connections at most; five requests. Two connections are opened, never a third, and
    /// each connection that frees serves the oldest waiter.
    @Test func requestsBeyondThePerHostLimitWaitAndAreServedInArrivalOrder() async throws {
        let run = try Run(maximumConnections: 2)
        for request in 1...5 { run.lease(request) }
        let first = try await run.factory.nextAttempt()
        let second = try await run.factory.nextAttempt()
        run.factory.open(first)
        run.factory.open(second)
        let leased = [try await run.leases.next(), try await run.leases.next()]
        #expect(Set(leased.map(\.request)) == [1, 2])
        #expect(run.pool.waitingRequestCount == 3)
        var served: [Int] = []
        for connection in [first, second, first] {
            run.pool.exchangeFinished(connectionID: connection, reusable: true)
            // Decided in the call: a connection being opened would count at once.
            #expect(run.pool.connectingCount == 0)
            let next = try await run.leases.next()
            #expect(next.connectionID == connection)
            served.append(next.request)
        }
        #expect(served == [3, 4, 5])
        #expect(run.factory.attemptCount == 2 && run.pool.connectingCount == 0)
        await run.finish()
    }

    /// A failed attempt, with no other connection open or opening, fails every waiter with its
    /// error; a request that comes during the backoff (25 ms after one failure) waits for it, to
    /// the nanosecond on the test clock, before the next attempt.
    @Test func aFailedAttemptFailsItsWaitersAndTheNextAttemptWaitsForTheBackoff() async throws {
        let run = try Run(maximumConnections: 1)
        run.lease(1)
        run.lease(2)
        run.factory.fail(try await run.factory.nextAttempt(), with: TransportError(.cannotConnectToHost, "refused by the script"))
        let failed = [try await run.leases.next(), try await run.leases.next()]
        #expect(failed.map(\.request) == [1, 2])
        #expect(failed.map { $0.transportError?.code } == [.cannotConnectToHost, .cannotConnectToHost])
        run.lease(3)
        await run.settle()
        #expect(run.pool.connectingCount == 0 && run.pool.waitingRequestCount == 1)
        await run.loop.advanceTime(by: ConnectionPoolStateMachine.firstBackoff - .nanoseconds(1))
        #expect(run.pool.connectingCount == 0 && run.factory.attemptCount == 1)
        await run.loop.advanceTime(by: .nanoseconds(1))
        let retry = try await run.factory.nextAttempt()
        run.factory.open(retry)
        let served = try await run.leases.next()
        #expect(served.request == 3 && served.connectionID == retry)
        await run.finish()
    }

    /// A request retried because its reused connection died needs a fresh connection: below the
    /// limit the pool opens one for it and leaves the idle connection to the next request.
    @Test func aRetryOnAFreshConnectionIsNotGivenTheIdleOne() async throws {
        let run = try Run(maximumConnections: 2)
        let idle = try await run.idleConnection()
        try await run.leaseFreshConnection(to: 2, besides: idle)
        #expect(!idle.isClosed)
        run.lease(3)
        let next = try await run.leases.next()
        #expect(next.request == 3 && next.connectionID == idle.id)
        #expect(run.factory.attemptCount == 2)
        await run.finish()
    }

    /// At the per-host limit, the pool closes the idle connection to make room for the retry's fresh
    /// one, which then serves it (the attempt comes only once the idle one is closed).
    @Test func aRetryOnAFreshConnectionAtTheLimitClosesTheIdleOneToMakeRoom() async throws {
        let run = try Run(maximumConnections: 1)
        let idle = try await run.idleConnection()
        try await run.leaseFreshConnection(to: 2, besides: idle)
        #expect(idle.isClosed)
        #expect(run.pool.connectionCounts == (active: 1, idle: 0))
        await run.finish()
    }

    /// An HTTP/2 connection carries as many exchanges as its server allows; a request beyond that
    /// waits for a stream rather than a second connection, and GOAWAY sends new requests to a new one.
    @Test func anHTTP2ConnectionIsSharedUpToItsStreamLimitAndReplacedAfterGoAway() async throws {
        let run = try Run(maximumConnections: 4, tls: true)
        for request in 1...3 { run.lease(request) }
        let first = try await run.factory.nextAttempt()
        run.factory.open(first, version: .http2, streams: 2)
        let leased = [try await run.leases.next(), try await run.leases.next()]
        #expect(leased.map(\.connectionID) == [first, first])
        await run.settle()
        #expect(run.pool.connectingCount == 0 && run.pool.waitingRequestCount == 1)
        run.pool.exchangeFinished(connectionID: first, reusable: true)
        #expect(try await run.leases.next().connectionID == first)
        run.pool.http2ConnectionGoingAway(first)
        run.lease(4)
        let second = try await run.factory.nextAttempt()
        run.factory.open(second, version: .http2, streams: 100)
        let afterGoAway = try await run.leases.next()
        #expect(afterGoAway.request == 4 && afterGoAway.connectionID == second && second != first)
        await run.finish()
    }

    /// A cancel that comes between the exchange's decision to wait and its registration with the
    /// pool finds nothing there to end, and the pool keeps nothing of it: the exchange's controller,
    /// which holds the cancellation, ends the wait once it is registered.
    @Test func aCancelThatOvertakesItsRegistrationEndsTheWaitOnceRegistered() async throws {
        let run = try Run(maximumConnections: 1)
        _ = try await run.leaseFirstConnection(to: 1)
        let controller = ExchangeController()
        try controller.waitForConnection(pool: run.pool, request: 2)
        controller.cancel(with: .cancelled)
        #expect(run.pool.waitingRequestCount == 0)
        run.lease(2)
        #expect(run.pool.waitingRequestCount == 1)
        controller.leaseRequested(pool: run.pool, request: 2)
        let ended = try await run.leases.next()
        #expect(ended.request == 2 && ended.connectionID == nil)
        #expect(ended.transportError?.code == .cancelled)
        #expect(run.pool.waitingRequestCount == 0)
        // A registration the cancel came after is not ended twice, and a later attempt fails at once.
        controller.leaseRequested(pool: run.pool, request: 2)
        #expect(throws: TransportError.self) { try controller.waitForConnection(pool: run.pool, request: 3) }
        await run.finish()
    }
}

/// Opens connections when the test says: each attempt waits until ``open(_:version:streams:)`` or
/// ``fail(_:with:)`` names it.
final class ScriptedConnectionFactory: ConnectionEstablishing {
    let loop: NIOAsyncTestingEventLoop
    var eventLoopGroup: any EventLoopGroup { loop }
    let offersHTTP2 = true
    private let pending = NIOLockedValueBox<[Int: CheckedContinuation<EstablishedConnection, any Error>]>([:])
    private let attempts = Arrivals<Int>()

    init(loop: NIOAsyncTestingEventLoop) {
        self.loop = loop
    }

    /// How many connections the pool has asked for.
    var attemptCount: Int { attempts.count }

    func makeConnection(
        id: Int, origin: Origin, deadline: NIODeadline?, eventLoop: any EventLoop,
        delegate: any ExchangeHandlerDelegate & HTTP2ConnectionDelegate
    ) async throws -> EstablishedConnection {
        try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0[id] = continuation }
            attempts.record(id)
        }
    }

    /// The next connection the pool asks for (its id), within 10 s.
    func nextAttempt() async throws -> Int { try await attempts.next() }

    /// The connections opened so far.
    var connections: [ScriptedConnection] { opened.withLockedValue { $0 } }
    private let opened = NIOLockedValueBox<[ScriptedConnection]>([])

    /// Lets attempt `id` succeed with a connection of `version` carrying up to `streams` exchanges.
    @discardableResult
    func open(_ id: Int, version: ConnectionPoolStateMachine.HTTPVersion = .http1, streams: Int = 1) -> ScriptedConnection {
        let connection = ScriptedConnection(id: id, loop: loop)
        opened.withLockedValue { $0.append(connection) }
        pending.withLockedValue { $0.removeValue(forKey: id) }?.resume(
            returning: EstablishedConnection(connection: connection, version: version, maximumStreams: streams))
        return connection
    }

    /// Lets attempt `id` fail with `error`.
    func fail(_ id: Int, with error: any Error) {
        pending.withLockedValue { $0.removeValue(forKey: id) }?.resume(throwing: error)
    }
}

/// A connection that runs nothing: its channel is a `NIOAsyncTestingChannel` that `close()` closes.
final class ScriptedConnection: TransportConnection {
    let id: Int
    let channel: any Channel
    private let closed = NIOLockedValueBox(false)

    init(id: Int, loop: NIOAsyncTestingEventLoop) {
        self.id = id
        channel = NIOAsyncTestingChannel(loop: loop)
    }

    /// Whether the pool has closed it.
    var isClosed: Bool { closed.withLockedValue { $0 } }

    func start(_ exchange: ActiveExchange) {}

    func close() {
        closed.withLockedValue { $0 = true }
        channel.close(promise: nil)
    }

    func release() {}
}

/// What a lease ended with.
struct LeaseOutcome: Sendable {
    let request: Int
    let result: Result<any TransportConnection, any Error>

    var connectionID: Int? { try? result.get().id }
    var transportError: TransportError? {
        guard case .failure(let error as TransportError) = result else { return nil }
        return error
    }
}

/// Things that happen on other threads, awaited in order one after another by one test: one
/// `next()` at a time (a second at once would trap in `AsyncStream`).
final class Arrivals<Element: Sendable>: Sendable {
    private let arrived = NIOLockedValueBox<[Element]>([])
    private let read = NIOLockedValueBox(0)
    private let signals = AsyncStream.makeStream(of: Void.self)

    func record(_ element: Element) {
        arrived.withLockedValue { $0.append(element) }
        signals.continuation.yield()
    }

    /// How many have arrived so far.
    var count: Int { arrived.withLockedValue { $0.count } }

    /// The next one not yet returned, waiting at most 10 s for it.
    func next() async throws -> Element {
        try await withTimeout(seconds: 10) {
            while true {
                let index = self.read.withLockedValue { $0 }
                if let element = self.arrived.withLockedValue({ $0.count > index ? $0[index] : nil }) {
                    self.read.withLockedValue { $0 += 1 }
                    return element
                }
                // Each arrival yields a signal, buffered until read: one that comes between the
                // check above and this wait is not missed.
                for await _ in self.signals.stream { break }
                try Task.checkCancellation()
            }
        }
    }
}
