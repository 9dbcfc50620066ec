import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// Whole transport runs without a socket or a real clock: the pool, the connection's set-up, the
/// HTTP/1.1 pipeline, the exchange and its retries are the real ones, but each TCP connection is a
/// `NIOAsyncTestingChannel` that ``ScriptedSockets`` connects when the test says, on a
/// `NIOAsyncTestingEventLoop` whose time only the test turns. The test reads what the client wrote
/// and writes what the server answers, so each timeout is checked at its exact instant.
@Suite struct TransportSimulationTests {
    /// A transport whose every loop, clock and socket is the test's.
    struct Run {
        let loop = NIOAsyncTestingEventLoop()
        let sockets: ScriptedSockets
        let transport: HTTPTransport

        init(maximumConnections: Int = 6, beforeLease: (@Sendable (ExchangeController) -> Void)? = nil) {
            sockets = ScriptedSockets(loop: loop)
            var configuration = HTTPTransport.Configuration()
            configuration.maximumConnectionsPerHost = maximumConnections
            configuration.connector = sockets.connector
            configuration.beforeLease = beforeLease
            transport = HTTPTransport(configuration: configuration, eventLoopGroup: loop)
        }

        /// Starts `method` `path` on `http://example.test`, collecting the response.
        func start(_ path: String, method: HTTPMethod = .GET, body: String? = nil, timeouts: TransportTimeouts = .init()) -> Exchange {
            let exchange = Exchange()
            var request = TransportRequest(method: method, url: URL(string: "http://example.test\(path)")!, timeouts: timeouts)
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            transport.execute(request, collectingUpTo: 1 << 20) { exchange.outcomes.record($0) }
            return exchange
        }

        /// Connects the transport's next connection attempt: the server's end of it.
        func acceptNextConnection() async throws -> NIOAsyncTestingChannel {
            try await sockets.accept(try await sockets.nextAttempt())
        }

        /// A first request served on a new connection, which is idle again: its server end.
        func connectionServingAFirstRequest() async throws -> NIOAsyncTestingChannel {
            let first = start("/first")
            let server = try await acceptNextConnection()
            _ = try await server.readRequestHead()
            try await server.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            #expect(try await first.response() == "200 ok")
            return server
        }

        /// Checks that `exchange` still runs, its connection open, 1 ms before `deadline`, and that
        /// it fails as `.timedOut` (its message saying `why`), its connection closed, once it passes.
        func expectTimedOut(
            _ exchange: Exchange, exactlyAt deadline: NIODeadline, closing server: NIOAsyncTestingChannel, saying why: String
        ) async throws {
            await loop.advanceTime(to: deadline - .milliseconds(1))
            #expect(exchange.isPending && server.isActive)
            await loop.advanceTime(to: deadline)
            let error = try await exchange.failure()
            #expect(error.code == .timedOut)
            #expect(error.message.contains(why))
            #expect(!server.isActive)
        }

        /// Shuts the transport down, lets the loop run what that handed it (a timer's cancellation
        /// queued from this thread: a closing test loop would drop it), then stops the loop.
        func finish() async {
            transport.shutdown()
            await loop.run()
            await loop.shutdownGracefully()
        }
    }

    /// One request's outcome, recorded the moment the transport reports it: right after the test
    /// turns the clock, ``isPending`` says whether the pool's or the connection's timer has ended it
    /// (a failed connect reaches it later, through the pool's task).
    final class Exchange: Sendable {
        let outcomes = Arrivals<Result<CollectedTransportResponse, TransportError>>()

        var isPending: Bool { outcomes.count == 0 }

        /// The status code and body, within 10 s.
        func response() async throws -> String {
            let response = try await outcomes.next().get()
            return "\(response.head.status.code) \(String(buffer: response.body))"
        }

        /// The error it failed with, within 10 s.
        func failure() async throws -> TransportError {
            switch try await outcomes.next() {
            case .failure(let error): return error
            case .success(let response): throw UnexpectedSuccess(status: response.head.status.code)
            }
        }

        struct UnexpectedSuccess: Error {
            let status: UInt
        }
    }

    @Test func theConnectTimeoutEndsAConnectExactlyOnTimeAndALateSocketIsClosed() async throws {
        let run = Run()
        let start = run.loop.now
        let exchange = run.start("/slow-to-connect", timeouts: .init(connect: .seconds(4)))
        let attempt = try await run.sockets.nextAttempt()
        // The connector is told what is left, so the bootstrap stops its own attempts then too.
        #expect(attempt.timeout == .seconds(4))
        await run.loop.advanceTime(to: start + .seconds(4))
        let error = try await exchange.failure()
        #expect(error.code == .timedOut)
        // The socket connects after the deadline: nothing waits for it, and it is closed, not pooled.
        let late = try await run.sockets.accept(attempt)
        try await withTimeout {
            while late.isActive && !Task.isCancelled { await run.loop.run() }
        }
        await run.finish()
    }

    @Test func aSocketConnectedJustInsideItsConnectTimeoutCarriesTheRequest() async throws {
        let run = Run()
        let start = run.loop.now
        let exchange = run.start("/just-in-time", timeouts: .init(connect: .seconds(4)))
        let attempt = try await run.sockets.nextAttempt()
        await run.loop.advanceTime(to: start + .seconds(4) - .milliseconds(1))
        let server = try await run.sockets.accept(attempt)
        #expect(try await server.readRequestHead().hasPrefix("GET /just-in-time "))
        // Connected, the request is bounded by its other limits, not the connect timeout.
        await run.loop.advanceTime(by: .seconds(10))
        try await server.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(try await exchange.response() == "200 ok")
        await run.finish()
    }

    @Test func theTotalTimeLimitEndsAnExchangeExactlyOnTime() async throws {
        let run = Run()
        let start = run.loop.now
        let exchange = run.start("/slow", timeouts: .init(total: .seconds(3)))
        let server = try await run.acceptNextConnection()
        #expect(try await server.readRequestHead().hasPrefix("GET /slow HTTP/1.1\r\n"))
        try await server.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
        try await run.expectTimedOut(exchange, exactlyAt: start + .seconds(3), closing: server, saying: "total time limit")
        await run.finish()
    }

    @Test func theIdleTimeoutCountsFromTheLastByteRead() async throws {
        let run = Run()
        let exchange = run.start("/trickle", timeouts: .init(idle: .seconds(5)))
        let server = try await run.acceptNextConnection()
        _ = try await server.readRequestHead()
        try await server.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
        // Bytes every 4 s keep it alive, well past 5 s from the start.
        await run.loop.advanceTime(by: .seconds(4))
        try await server.answer("678")
        await run.loop.advanceTime(by: .seconds(4))
        let lastByte = run.loop.now
        try await server.answer("9")
        try await run.expectTimedOut(exchange, exactlyAt: lastByte + .seconds(5), closing: server, saying: "idle interval")
        await run.finish()
    }

    @Test func aQueuedRequestFailsAtItsConnectTimeoutWhileTheRunningOneCarriesOn() async throws {
        let run = Run(maximumConnections: 1)
        let running = run.start("/first")
        let server = try await run.acceptNextConnection()
        _ = try await server.readRequestHead()
        let start = run.loop.now
        let queued = run.start("/second", timeouts: .init(connect: .seconds(2)))
        await run.loop.advanceTime(to: start + .seconds(2) - .milliseconds(1))
        #expect(queued.isPending)
        await run.loop.advanceTime(to: start + .seconds(2))
        #expect(try await queued.failure().code == .timedOut)
        // The wait was for the one connection the limit allows: no other was opened.
        #expect(run.sockets.attemptCount == 1)
        #expect(running.isPending && server.isActive)
        try await server.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(try await running.response() == "200 ok")
        await run.finish()
    }

    /// A cancel that comes after the exchange decided to wait for a connection and before the pool
    /// registered the wait finds nothing in the pool to end: the exchange's controller ends the wait
    /// once it is registered, so the request fails at once instead of waiting for a connection.
    @Test func aCancelThatOvertakesThePoolRegistrationEndsTheWait() async throws {
        let run = Run(beforeLease: { controller in controller.cancel(with: .cancelled) })
        let exchange = run.start("/overtaken")
        #expect(try await exchange.failure().code == .cancelled)
        await run.finish()
    }

    @Test func aReusedConnectionClosedBeforeAnsweringIsRetriedOnAFreshOne() async throws {
        let run = Run()
        let reused = try await run.connectionServingAFirstRequest()

        let second = run.start("/second")
        #expect(try await reused.readRequestHead().hasPrefix("GET /second "))
        // The server had closed it as the request went.
        try await reused.close()
        let fresh = try await run.acceptNextConnection()
        #expect(try await fresh.readRequestHead().hasPrefix("GET /second "))
        try await fresh.answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain")
        #expect(try await second.response() == "200 again")
        #expect(run.sockets.attemptCount == 2)
        await run.finish()
    }

    @Test func aPOSTWhoseBodyWentOnAReusedConnectionIsNotSentTwice() async throws {
        let run = Run()
        let reused = try await run.connectionServingAFirstRequest()

        let order = run.start("/orders", method: .POST, body: "one order")
        #expect(try await reused.readRequestHead().hasPrefix("POST /orders "))
        #expect(try await reused.readBody(count: 9) == "one order")
        try await reused.close()
        let error = try await order.failure()
        #expect(error.code == .networkConnectionLost)
        // The server may have taken the order: it is not sent again.
        #expect(run.sockets.attemptCount == 1)
        await run.finish()
    }
}

/// Connects the transport's TCP connections when the test says: each attempt waits until
/// ``accept(_:)`` gives it a connected `NIOAsyncTestingChannel` on the run's loop.
final class ScriptedSockets: Sendable {
    /// One connection the transport asked for.
    struct Attempt: Sendable {
        let index: Int
        let host: String
        let port: Int
        /// The time left, as given to the connector.
        let timeout: TimeAmount?
    }

    let loop: NIOAsyncTestingEventLoop
    private let pending = NIOLockedValueBox<[EventLoopPromise<SocketConnector.Connected>]>([])
    private let attempts = Arrivals<Attempt>()

    init(loop: NIOAsyncTestingEventLoop) {
        self.loop = loop
    }

    var connector: SocketConnector {
        SocketConnector { host, port, eventLoop, timeout in
            let promise = eventLoop.makePromise(of: SocketConnector.Connected.self)
            let index = self.pending.withLockedValue { pending in
                pending.append(promise)
                return pending.count - 1
            }
            self.attempts.record(Attempt(index: index, host: host, port: port, timeout: timeout))
            return promise.futureResult
        }
    }

    /// How many connections the transport has asked for.
    var attemptCount: Int { attempts.count }

    /// The next connection the transport asks for, within 10 s.
    func nextAttempt() async throws -> Attempt { try await attempts.next() }

    /// Connects `attempt`: the server's end of the connection.
    func accept(_ attempt: Attempt) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel(loop: loop)
        try await channel.connect(to: SocketAddress(ipAddress: "192.0.2.1", port: attempt.port)).get()
        pending.withLockedValue { $0[attempt.index] }.succeed(SocketConnector.Connected(channel: channel, lookupEnd: nil))
        return channel
    }
}

extension NIOAsyncTestingChannel {
    /// The next request head the client wrote, up to its blank line, within 10 s each write.
    func readRequestHead() async throws -> String {
        try await readWritten { $0.contains("\r\n\r\n") }
    }

    /// The next `count` body bytes the client wrote, within 10 s each write.
    func readBody(count: Int) async throws -> String {
        try await readWritten { $0.utf8.count >= count }
    }

    /// What the client wrote next, write by write, until `isWhole` says it is all there.
    private func readWritten(until isWhole: (String) -> Bool) async throws -> String {
        var text = ""
        while !isWhole(text) {
            let written = try await withTimeout { try await self.waitForOutboundWrite(as: IOData.self) }
            if case .byteBuffer(let buffer) = written { text += String(buffer: buffer) }
        }
        return text
    }

    /// Delivers `text` as the server's bytes.
    func answer(_ text: String) async throws {
        try await writeInbound(ByteBuffer(string: text))
    }
}
