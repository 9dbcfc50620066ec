import NIOCore
import NIOHTTP2

/// Counts what a channel carrying exchanges has received, for the byte metrics.
protocol ReceivedByteCounter: AnyObject {
    /// Bytes received so far.
    var received: Int64 { get }
    /// Whether heads are in the count (HTTP/1.1 bytes on the wire) or only bodies (HTTP/2 DATA).
    var countsHeads: Bool { get }
}

/// Counts the plaintext bytes a connection receives, below the HTTP codec, for wire byte metrics.
final class ByteCountingHandler: ChannelInboundHandler, RemovableChannelHandler, ReceivedByteCounter {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private(set) var received: Int64 = 0
    var countsHeads: Bool { true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += Int64(unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }
}

/// Counts the DATA bytes an HTTP/2 stream receives, above NIOHTTP2 and below its HTTP/1 translation
/// (header blocks are compressed for the whole connection, so no stream owns their bytes).
final class StreamByteCountingHandler: ChannelInboundHandler, RemovableChannelHandler, ReceivedByteCounter {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    private(set) var received: Int64 = 0
    var countsHeads: Bool { false }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .data(let payload) = unwrapInboundIn(data) { received += Int64(payload.data.readableBytes) }
        context.fireChannelRead(data)
    }
}
