import NIOCore

/// One open HTTP/1.1 connection, as the pool and the transport hold it.
final class HTTP1Connection: Sendable {
    let id: Int
    let origin: Origin
    let channel: any Channel
    private let handler: NIOLoopBound<HTTP1ConnectionHandler>

    init(id: Int, origin: Origin, channel: any Channel, handler: HTTP1ConnectionHandler) {
        self.id = id
        self.origin = origin
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Runs the exchange; it reports through its promises. Always queued, even on the event loop:
    /// the pool may hand the connection over while its handler is still finishing the last exchange.
    func start(_ exchange: ActiveExchange) {
        channel.eventLoop.execute { self.handler.value.startExchange(exchange) }
    }

    /// Cancels the exchange if it still runs here; the connection closes.
    func cancel(_ exchange: ActiveExchange, error: TransportError) {
        channel.eventLoop.execute { self.handler.value.cancel(exchange, error: error) }
    }

    func close() {
        channel.close(promise: nil)
    }
}
