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

/// Whether an exchange that failed before any response byte goes again: what the exchange knows
/// of the failure and of its request, and the rule, as a value.
///
/// A stream the server refused goes again whatever its method, when its body can be sent again. A
/// carrier that closed or failed goes again only when it was a reused connection (it may have been
/// closing as the request went), the body can be sent again, and either the method is idempotent
/// or no body byte was handed on. The server's refusal of the client's certificate, its broken
/// HTTP/2 and the transport's own verdicts (a body of the wrong length, a cancellation) are final.
struct EarlyExchangeFailure: Equatable {
    /// What ended the exchange, most telling first (as ``ExchangeHandler`` classifies it).
    enum Cause: Equatable {
        /// RST_STREAM REFUSED_STREAM, or a stream above a GOAWAY's last stream id.
        case refusedStream(RetryableExchangeError.Reason)
        /// A TLS alert refusing the client's certificate after the handshake (TLS 1.3).
        case certificateRefused
        /// The server broke HTTP/2.
        case protocolViolation
        /// The carrier closed before responding.
        case closed
        /// The transport's own verdict.
        case transportVerdict
        /// Any other error of the carrier.
        case carrierError
    }

    enum Verdict: Equatable {
        case fail
        case retry(RetryableExchangeError.Reason, onFreshConnection: Bool)
    }

    var cause: Cause
    /// Whether the request body can be sent again: none, bytes, a file, a replayable stream, or a
    /// stream whose producer never ran (one that ran may have read bytes it never sent).
    var bodyIsReplayable: Bool
    /// Whether the carrier was a reused connection (``ActiveExchange/mayRetryOnFreshConnection``).
    var onReusedConnection: Bool
    var methodIsIdempotent: Bool
    /// Whether any body byte was handed to the channel (some may have reached the server).
    var bodyHandedOn: Bool
    /// Whether the carrier is an HTTP/2 stream: the retry then goes on a new stream, not a fresh
    /// connection (a dead connection takes no stream, a live one serves it).
    var carriesOneExchange: Bool

    var verdict: Verdict {
        switch cause {
        case .refusedStream(let reason):
            // RFC 9113 §8.7: the server did not process it, so any method may go again.
            return bodyIsReplayable ? .retry(reason, onFreshConnection: false) : .fail
        case .certificateRefused, .protocolViolation, .transportVerdict:
            return .fail
        case .closed, .carrierError:
            guard onReusedConnection, bodyIsReplayable, methodIsIdempotent || !bodyHandedOn else { return .fail }
            return .retry(.staleConnection, onFreshConnection: !carriesOneExchange)
        }
    }
}
