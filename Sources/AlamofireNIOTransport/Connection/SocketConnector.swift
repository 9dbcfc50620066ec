import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Opens the TCP connections of a ``ConnectionFactory``: NIO's bootstrap racing the host's addresses
/// (Happy Eyeballs) in use, scripted channels in the tests' simulated transport runs. Either way the
/// connect timeout is enforced by ``connect(to:port:by:on:)``, on the connecting loop's clock.
struct SocketConnector: Sendable {
    /// A connected channel, and when the lookup of its host ended (nil: no lookup was timed).
    struct Connected: Sendable {
        let channel: any Channel
        let lookupEnd: NIODeadline?
    }

    /// Starts connecting to `host`:`port` on `eventLoop`; `timeout` is how long is left, for a
    /// connector that stops its own attempts then (the bootstrap does).
    let start: @Sendable (_ host: String, _ port: Int, _ eventLoop: any EventLoop, _ timeout: TimeAmount?) -> EventLoopFuture<Connected>

    /// NIO's `ClientBootstrap`, with Happy Eyeballs over `lookup` (so the lookup is timed on its own).
    static func bootstrap(lookup: @escaping @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]) -> SocketConnector {
        SocketConnector { host, port, eventLoop, timeout in
            let resolver = HappyEyeballsResolver(eventLoop: eventLoop, lookup: lookup)
            // TCP_NODELAY is ClientBootstrap's default (`.tcpOption(.tcp_nodelay)`). Not `.socketOption(.tcp_nodelay)`:
            // that is SOL_SOCKET's option 1, SO_DEBUG, which needs CAP_NET_ADMIN and fails every connect without it.
            var bootstrap = ClientBootstrap(group: eventLoop)
                .resolver(resolver)
                // Room for two file-body chunks: the next one is read from disk while the last drains.
                .channelOption(.writeBufferWaterMark, value: .init(low: FileBody.chunkSize, high: 2 * FileBody.chunkSize + 1))
                // Reads grow past NIO's 64 KiB while they fill their buffer, so a large body crosses to its
                // consumer in fewer, larger chunks (each a hand-over to another thread); small responses keep
                // small buffers. One read per cycle instead of NIO's four keeps what a cycle can hold, what a
                // channel's buffer pool keeps and what TLS or a decompressor hands on at once as they were
                // (4 x 64 KiB).
                .channelOption(
                    .recvAllocator,
                    value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: ConnectionFactory.largestRead)
                )
                .channelOption(.maxMessagesPerRead, value: 1)
            // The bootstrap's own timer (due with the caller's) ends its pending attempts and closes
            // their sockets; the caller's reports the timeout.
            if let timeout { bootstrap = bootstrap.connectTimeout(timeout) }
            return bootstrap.connect(host: host, port: port).map { Connected(channel: $0, lookupEnd: resolver.lookupEnd) }
        }
    }

    /// Connects to `host`:`port` on `eventLoop`, failing with `ChannelError.connectTimeout` when
    /// `deadline` passes first (a timer on `eventLoop`, so a test's loop turns it). A channel that
    /// connects after that is closed.
    func connect(to host: String, port: Int, by deadline: NIODeadline?, on eventLoop: any EventLoop) -> EventLoopFuture<Connected> {
        guard let deadline else { return start(host, port, eventLoop, nil) }
        let timeout = max(.nanoseconds(1), deadline - eventLoop.now)
        let connected = eventLoop.makePromise(of: Connected.self)
        // Both closures run on `eventLoop`: when the connect reports, the timer has either run or will not.
        let timedOut = NIOLoopBoundBox.makeBoxSendingValue(false, eventLoop: eventLoop)
        let timer = eventLoop.scheduleTask(deadline: deadline) {
            timedOut.value = true
            connected.fail(ChannelError.connectTimeout(timeout))
        }
        start(host, port, eventLoop, timeout).hop(to: eventLoop).whenComplete { outcome in
            timer.cancel()
            guard !timedOut.value else {
                if case .success(let late) = outcome { late.channel.close(promise: nil) }
                return
            }
            connected.completeWith(outcome)
        }
        return connected.futureResult
    }
}
