/// A task's byte counts for the exchange under way, as `URLSessionTask` reports them
/// (`countOfBytesSent`, `countOfBytesExpectedToSend`, `countOfBytesReceived`,
/// `countOfBytesExpectedToReceive`). The transport reports running totals; each report returns
/// what it adds, for the delegate's per-report count. A streamed body's received bytes are held back
/// until their data has been handed over (URLSession reports a response, then data, then progress).
struct TransferCounts: Equatable {
    private(set) var sent: Int64 = 0
    /// 0 until the body's length is known, as URLSession reports it.
    private(set) var expectedToSend: Int64 = 0
    private(set) var received: Int64 = 0
    /// -1 (`NSURLSessionTransferSizeUnknown`) until the response's length is known.
    private(set) var expectedToReceive: Int64 = -1
    /// How much of ``received`` the delegate has been told of.
    private var receivedReported: Int64 = 0
    /// Whether bytes came that were held back from the delegate (their data was not handed over yet).
    private var receivedHeld = false

    /// `total` body bytes sent, of `expected`: the bytes this report adds.
    mutating func sent(total: Int64, expected: Int64?) -> Int64 {
        defer {
            sent = total
            expectedToSend = expected ?? 0
        }
        return total - sent
    }

    /// `total` body bytes received, of `expected` if known: the bytes to tell the delegate of now,
    /// or nil when `reporting` is false (the bytes then wait for ``releaseHeldReceived(upTo:)``).
    mutating func received(total: Int64, expected: Int64?, reporting: Bool = true) -> Int64? {
        received = total
        if let expected { expectedToReceive = expected }
        receivedHeld = !reporting
        guard reporting else { return nil }
        defer { receivedReported = total }
        return total - receivedReported
    }

    /// The report held back, to tell the delegate of now, counting at most `delivered` bytes (the
    /// data handed over so far: the delegate is told of bytes after their data, as URLSession tells
    /// it): nil when there is nothing new to report.
    mutating func releaseHeldReceived(upTo delivered: Int64 = .max) -> ReceivedReport? {
        guard receivedHeld else { return nil }
        let total = min(received, delivered)
        receivedHeld = total < received
        // A held report of no new bytes is made once the hold ends (an empty body's one report).
        guard total > receivedReported || !receivedHeld else { return nil }
        defer { receivedReported = total }
        return ReceivedReport(
            added: total - receivedReported, total: total, expected: expectedToReceive < 0 ? nil : expectedToReceive)
    }

    /// A download continues a file that already holds `offset` bytes.
    mutating func resumed(at offset: Int64) {
        received = offset
        receivedReported = offset
    }

    /// A new exchange starts (a redirect's, a retry's): nothing of it is sent or received yet, and
    /// its response's length is unknown. The body's length stays.
    mutating func exchangeStarted() {
        sent = 0
        received = 0
        receivedReported = 0
        receivedHeld = false
        expectedToReceive = -1
    }
}

/// Received body bytes as the delegate is told of them: what a report adds, the running total, and
/// the body's length when known.
struct ReceivedReport: Equatable, Sendable {
    let added: Int64
    let total: Int64
    let expected: Int64?
}
