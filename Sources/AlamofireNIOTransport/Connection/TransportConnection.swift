import NIOCore

/// A connection as the pool and the transport hold it, whatever protocol it speaks.
///
/// An HTTP/1.1 connection runs one exchange at a time on its own channel; an HTTP/2 connection runs
/// each exchange on a stream of its own, as many at once as the server allows. Either way an
/// exchange reports only through its own promises, and the connection tells the pool (its
/// ``ExchangeHandlerDelegate``) when an exchange no longer holds its place.
protocol TransportConnection: AnyObject, Sendable {
    /// The pool's id for the connection.
    var id: Int { get }
    /// The connection's channel (for HTTP/2, the parent of its streams).
    var channel: any Channel { get }
    /// Runs the exchange. Always queued on the event loop, even from it: the pool may hand the
    /// connection over while its handler is still finishing the last exchange.
    func start(_ exchange: ActiveExchange)
    /// Closes the connection; running exchanges fail.
    func close()
    /// Gives back a place the pool leased for an exchange that never started.
    func release()
}

extension TransportConnection {
    /// Cancels the exchange if it still runs on this connection: an HTTP/1.1 connection closes, an
    /// HTTP/2 stream is reset and its connection carries on. Queued after the exchange's start.
    func cancel(_ exchange: ActiveExchange, error: TransportError) {
        // A handler the exchange has not reached yet finds the cancellation in its controller when
        // the exchange starts.
        channel.eventLoop.execute { exchange.handler?.cancel(exchange, error: error) }
    }
}
