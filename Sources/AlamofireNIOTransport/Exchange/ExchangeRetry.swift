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
        /// The server did not process the request; `connectionAnswered` says whether the connection
        /// that refused it had answered (or, by its GOAWAY, promised to answer) any stream.
        case unprocessed(connectionAnswered: Bool)
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
/// once. After a refusal, for as long as the connections refusing it make progress (answer other
/// streams: an HTTP/2 server rotating its connections every N streams, as nginx's
/// `keepalive_requests` does, refuses the streams above each GOAWAY's last id, RFC 9113 §6.8);
/// only a server answering nothing, refusing ``refusalsWithoutAnswer`` times in a row, ends it.
/// The request's own deadline bounds all of it.
struct ExchangeRetryBudget: Sendable, Equatable {
    /// Retries after stale connections.
    static let staleRetries = 1
    /// Retries after consecutive refusals by connections that answered nothing.
    static let refusalsWithoutAnswer = 3

    private(set) var staleRetriesMade = 0
    private(set) var refusalsWithoutAnswerInARow = 0

    /// The budget after a retry for `reason`, or nil when the failure is final.
    func retrying(after reason: RetryableExchangeError.Reason) -> ExchangeRetryBudget? {
        var next = self
        switch reason {
        case .staleConnection:
            guard staleRetriesMade < Self.staleRetries else { return nil }
            next.staleRetriesMade += 1
        case .unprocessed(connectionAnswered: true):
            next.refusalsWithoutAnswerInARow = 0
        case .unprocessed(connectionAnswered: false):
            guard refusalsWithoutAnswerInARow < Self.refusalsWithoutAnswer else { return nil }
            next.refusalsWithoutAnswerInARow += 1
        }
        return next
    }
}
