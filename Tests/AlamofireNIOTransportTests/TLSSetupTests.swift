import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import AlamofireNIOTransport

/// Adding TLS to a connected channel (`ConnectionFactory.addTLS`), on an `EmbeddedChannel`.
@Suite struct TLSSetupTests {
    /// Stands in for the TLS handler: the setup only places it before the observer.
    final class StandInHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
    }

    /// A channel closed before TLS is added takes no handler: the setup throws and fails the
    /// observer's promise, which was left unfulfilled before (a debug build traps on that when the
    /// observer is released).
    @Test func aChannelClosedFirstFailsTheSetupAndItsPromise() throws {
        let channel = EmbeddedChannel()
        _ = try channel.finish()
        #expect(throws: ChannelError.ioOnClosedChannel) {
            _ = try ConnectionFactory.addTLS(StandInHandler(), to: channel, errorAfterHandshake: NIOLockedValueBox(nil))
        }
    }

    /// A channel not active once the handlers are in fails the setup as a lost connection; the
    /// handshake's future fails as well once they are removed.
    @Test func anInactiveChannelFailsTheSetupAsALostConnection() throws {
        let channel = EmbeddedChannel()
        #expect(!channel.isActive)
        #expect(throws: TransportError.self) {
            _ = try ConnectionFactory.addTLS(StandInHandler(), to: channel, errorAfterHandshake: NIOLockedValueBox(nil))
        }
        _ = try? channel.finish()
    }

    /// On an active channel the handlers go in, TLS before the observer, and the handshake's
    /// future waits for the handshake.
    @Test func anActiveChannelGetsBothHandlersAndAPendingHandshake() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let handshake = try ConnectionFactory.addTLS(StandInHandler(), to: channel, errorAfterHandshake: NIOLockedValueBox(nil))
        let settled = NIOLockedValueBox(false)
        handshake.whenComplete { _ in settled.withLockedValue { $0 = true } }
        #expect(!settled.withLockedValue { $0 })
        _ = try channel.pipeline.syncOperations.handler(type: StandInHandler.self)
        _ = try channel.finish()
        #expect(settled.withLockedValue { $0 })
    }
}
