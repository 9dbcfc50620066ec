import NIOCore

/// One open HTTP/1.1 connection: one exchange at a time on its channel.
final class HTTP1Connection: TransportConnection {
    let id: Int
    let origin: Origin
    let channel: any Channel
    private let handler: NIOLoopBound<ExchangeHandler>

    init(id: Int, origin: Origin, channel: any Channel, handler: ExchangeHandler) {
        self.id = id
        self.origin = origin
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    func start(_ exchange: ActiveExchange) {
        channel.eventLoop.execute { self.handler.value.startExchange(exchange) }
    }

    func close() {
        channel.close(promise: nil)
    }

    /// Closed unused: the pool forgets it when its socket has closed.
    func release() {
        close()
    }
}
