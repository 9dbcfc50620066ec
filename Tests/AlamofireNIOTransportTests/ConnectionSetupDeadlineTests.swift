import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import TestWaits
import Testing

@testable import AlamofireNIOTransport

/// Opening a connection is bounded by its deadline at each step after the connect (a proxy tunnel,
/// the TLS handshake, an HTTP/2 server's first SETTINGS): the channel's event loop closes it when
/// the deadline passes. Here that loop is a test's, whose time only the test turns, so the bound is
/// checked at its exact instant, without waiting.
@Suite struct ConnectionSetupDeadlineTests {
    static func makeFactory(on loop: NIOAsyncTestingEventLoop) -> ConnectionFactory {
        ConnectionFactory(eventLoopGroup: loop, tls: .init(), decompressionRatio: nil, logger: Logger(label: "test"))
    }

    /// Turns the loop's clock to `deadline`, then lets it run until `channel` has closed: a timer
    /// armed after the clock had passed its instant fires on the next run.
    static func passDeadline(
        _ loop: NIOAsyncTestingEventLoop, _ deadline: NIODeadline, closing channel: NIOAsyncTestingChannel
    ) async throws {
        await loop.advanceTime(to: deadline)
        try await withTimeout {
            while channel.isActive {
                await loop.run()
                await Task.yield()
            }
        }
    }

    /// Checks that `step`, whose timer is armed, leaves `channel` open just before `deadline`, fails
    /// as `.timedOut` once it passes with the channel closed, then stops the loop.
    static func expectTimedOutExactlyAt<Result: Sendable>(
        _ deadline: NIODeadline, _ step: Task<Result, any Error>, _ loop: NIOAsyncTestingEventLoop, _ channel: NIOAsyncTestingChannel
    ) async throws {
        await loop.advanceTime(to: deadline - .milliseconds(1))
        #expect(channel.isActive)
        try await passDeadline(loop, deadline, closing: channel)
        let error = await #expect(throws: TransportError.self) { try await withTimeout { try await step.value } }
        #expect(error?.code == .timedOut)
        #expect(!channel.isActive)
        await loop.shutdownGracefully()
    }

    static func connectedChannel(on loop: NIOAsyncTestingEventLoop) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel(loop: loop)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        return channel
    }

    @Test func aTLSHandshakeTheServerNeverAnswersEndsExactlyAtItsDeadline() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let channel = try await Self.connectedChannel(on: loop)
        let factory = Self.makeFactory(on: loop)
        let origin = try Origin(url: URL(string: "https://example.test/")!)
        let deadline = loop.now + .seconds(10)
        let handshake = Task {
            try await factory.handshake(on: channel, origin: origin, deadline: deadline, errorAfterHandshake: NIOLockedValueBox(nil))
        }
        // The client's hello went out; no answer comes.
        let hello = try await withTimeout { try await channel.waitForOutboundWrite(as: ByteBuffer.self) }
        #expect(hello.readableBytes > 0)
        try await Self.expectTimedOutExactlyAt(deadline, handshake, loop, channel)
    }

    @Test func aStepThatEndsBeforeItsDeadlineLeavesTheChannelOpen() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let channel = try await Self.connectedChannel(on: loop)
        let factory = Self.makeFactory(on: loop)
        let answer = loop.makePromise(of: Int.self)
        let deadline = loop.now + .seconds(10)
        let step = Task { try await factory.withDeadline(deadline, on: channel) { try await answer.futureResult.get() } }
        await loop.advanceTime(by: .seconds(5))
        answer.succeed(100)
        #expect(try await withTimeout { try await step.value } == 100)
        // The timer went with the step: the deadline passing later closes nothing.
        await loop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        try await channel.close()
        await loop.shutdownGracefully()
    }

    @Test func aStepStillWaitingAtItsDeadlineFailsAsTimedOut() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let channel = try await Self.connectedChannel(on: loop)
        let factory = Self.makeFactory(on: loop)
        // Like the wait for an HTTP/2 server's SETTINGS: a promise the channel's close fails.
        let settings = loop.makePromise(of: Int.self)
        channel.closeFuture.whenComplete { _ in settings.fail(ChannelError.ioOnClosedChannel) }
        let deadline = loop.now + .seconds(10)
        // The step's body runs once its timer is armed: the check just before the deadline then
        // tests the timer, not a step that has not begun.
        let started = AsyncStream.makeStream(of: Void.self)
        let step = Task {
            try await factory.withDeadline(deadline, on: channel) {
                started.continuation.finish()
                return try await settings.futureResult.get()
            }
        }
        try await withTimeout { for await _ in started.stream {} }
        try await Self.expectTimedOutExactlyAt(deadline, step, loop, channel)
    }
}
