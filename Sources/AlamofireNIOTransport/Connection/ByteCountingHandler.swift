import NIOCore

/// Counts the plaintext bytes a connection receives, below the HTTP codec, for wire byte metrics.
final class ByteCountingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private(set) var received: Int64 = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += Int64(unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }
}
