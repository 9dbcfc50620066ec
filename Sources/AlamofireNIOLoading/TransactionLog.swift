import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A task's transactions, in order (one per exchange, redirect, cached answer or local load), and
/// the exchange under way until it has its own. An exchange that ends early (refused, cancelled,
/// or stopped by a wait for connectivity) still counts, as URLSession reports a refused connection
/// or a cancelled download: once, with its start and the response it got, if any.
struct TransactionLog {
    private(set) var transactions: [TransactionMetrics] = []
    /// When the exchange under way started.
    private(set) var exchangeStart = Date()
    /// The response the exchange under way got.
    private var exchangeResponse: ReceivedResponse?
    /// Whether the exchange under way has its transaction yet.
    private var exchangeRecorded = true

    /// An exchange started at `date`: it has no response and no transaction yet.
    mutating func exchangeStarted(at date: Date) {
        exchangeStart = date
        exchangeResponse = nil
        exchangeRecorded = false
    }

    /// The exchange under way got `response` (kept for its transaction if it ends early).
    mutating func responseArrived(_ response: ReceivedResponse?) {
        exchangeResponse = response
    }

    /// Records a transaction; it is the exchange under way's, if one is.
    mutating func record(_ transaction: TransactionMetrics) {
        transactions.append(transaction)
        exchangeRecorded = true
    }

    /// Records the exchange under way, if it has no transaction yet: its request, its start, and
    /// the response it got, which ends it at `now`.
    mutating func recordUnfinishedExchange(request: URLRequest, now: Date) {
        guard !exchangeRecorded else { return }
        record(
            TransactionMetrics(
                request: request, response: exchangeResponse, fetchStart: exchangeStart, end: exchangeResponse.map { _ in now },
                fetchType: .networkLoad))
    }
}
