// When a failed exchange goes again: the error that says it may, and the rule for how often.

/// A failure after which the request may safely go again: on a reused connection before any
/// response byte (on a new connection for HTTP/1.1, a new stream for HTTP/2), or a request the
/// server did not process (an HTTP/2 stream refused with RST_STREAM REFUSED_STREAM, left above a
/// GOAWAY's last stream id, or never opened), which goes again whatever its method. How often is
/// ``ExchangeRetryBudget``'s rule.
struct RetryableExchangeError: Error {
    /// Why the request may go again.
    enum Reason: Sendable, Equatable {
        /// A reused connection failed before answering: it may have been closing as the request went.
        case staleConnection
        /// The server did not process the request: it was left above a GOAWAY's last stream id, or
        /// its stream never opened. `connectionAnswered` says whether the connection that refused it
        /// had answered (or, by its GOAWAY, promised to answer) any stream.
        case unprocessed(connectionAnswered: Bool)
        /// The server refused the stream with RST_STREAM REFUSED_STREAM on a connection that stays
        /// open: an overloaded server shedding load, asked again a few times only.
        case refusedStream
    }

    /// What the caller gets if the retry is not made.
    let error: TransportError
    /// Whether the retry must not reuse a pooled connection.
    let onFreshConnection: Bool
    let reason: Reason

    init(_ error: TransportError, onFreshConnection: Bool, reason: Reason = .staleConnection) {
        self.error = error
        self.onFreshConnection = onFreshConnection
        self.reason = reason
    }
}

/// How many times a request goes again after ``RetryableExchangeError``s. After a stale connection,
/// once. After a GOAWAY left it unprocessed, for as long as the connections refusing it make
/// progress (answer other streams: an HTTP/2 server rotating its connections every N streams, as
/// nginx's `keepalive_requests` does, refuses the streams above each GOAWAY's last id, RFC 9113
/// §6.8), up to ``unprocessedRetries`` in all; a server answering nothing, refusing
/// ``refusalsWithoutAnswer`` times in a row, ends it sooner. A stream refused with REFUSED_STREAM
/// on a connection that stays open goes again ``refusedStreamRetries`` times, whatever the
/// connection answered: a server may refuse one request and answer others for ever. The request's
/// own deadline bounds all of it.
struct ExchangeRetryBudget: Sendable, Equatable {
    /// Retries after stale connections.
    static let staleRetries = 1
    /// Retries after consecutive refusals by connections that answered nothing.
    static let refusalsWithoutAnswer = 3
    /// Retries after GOAWAYs, whatever the connections answered: each needs a new connection, and
    /// a hostile server could otherwise claim progress (a GOAWAY's last stream id) for ever. 200
    /// concurrent requests to a server rotating every 10 streams need far fewer.
    static let unprocessedRetries = 64
    /// Retries after REFUSED_STREAM.
    static let refusedStreamRetries = 3

    private(set) var staleRetriesMade = 0
    private(set) var refusalsWithoutAnswerInARow = 0
    private(set) var unprocessedRetriesMade = 0
    private(set) var refusedStreamRetriesMade = 0

    /// The budget after a retry for `reason`, or nil when the failure is final.
    func retrying(after reason: RetryableExchangeError.Reason) -> ExchangeRetryBudget? {
        var next = self
        switch reason {
        case .staleConnection:
            guard staleRetriesMade < Self.staleRetries else { return nil }
            next.staleRetriesMade += 1
        case .unprocessed(let connectionAnswered):
            guard unprocessedRetriesMade < Self.unprocessedRetries else { return nil }
            if connectionAnswered {
                next.refusalsWithoutAnswerInARow = 0
            } else {
                guard refusalsWithoutAnswerInARow < Self.refusalsWithoutAnswer else { return nil }
                next.refusalsWithoutAnswerInARow += 1
            }
            next.unprocessedRetriesMade += 1
        case .refusedStream:
            guard refusedStreamRetriesMade < Self.refusedStreamRetries else { return nil }
            next.refusedStreamRetriesMade += 1
        }
        return next
    }
}
