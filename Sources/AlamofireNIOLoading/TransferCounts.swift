/// A task's byte counts for the exchange under way, as `URLSessionTask` reports them
/// (`countOfBytesSent`, `countOfBytesExpectedToSend`, `countOfBytesReceived`,
/// `countOfBytesExpectedToReceive`). The transport reports running totals; each report returns
/// what it adds, for the delegate's per-report count.
struct TransferCounts: Equatable {
    private(set) var sent: Int64 = 0
    /// 0 until the body's length is known, as URLSession reports it.
    private(set) var expectedToSend: Int64 = 0
    private(set) var received: Int64 = 0
    /// -1 (`NSURLSessionTransferSizeUnknown`) until the response's length is known.
    private(set) var expectedToReceive: Int64 = -1

    /// `total` body bytes sent, of `expected`: the bytes this report adds.
    mutating func sent(total: Int64, expected: Int64?) -> Int64 {
        defer {
            sent = total
            expectedToSend = expected ?? 0
        }
        return total - sent
    }

    /// `total` body bytes received, of `expected` if known: the bytes this report adds.
    mutating func received(total: Int64, expected: Int64?) -> Int64 {
        defer {
            received = total
            if let expected { expectedToReceive = expected }
        }
        return total - received
    }

    /// A download continues a file that already holds `offset` bytes.
    mutating func resumed(at offset: Int64) {
        received = offset
    }

    /// A new exchange starts (a redirect's, a retry's): nothing of it is sent or received yet, and
    /// its response's length is unknown. The body's length stays.
    mutating func exchangeStarted() {
        sent = 0
        received = 0
        expectedToReceive = -1
    }
}
