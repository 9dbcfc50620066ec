import AFSynchronization
import AlamofireNIO
import HTTPBinServer
import Testing

// This file imports AlamofireNIO alone (no Foundation, no FoundationNetworking), as code written for
// Alamofire does: the metrics types are spelled as in Alamofire and mean AlamofireNIO's values.

/// An event monitor written for Alamofire: its metrics method is the protocol's witness.
private final class MetricsRecorder: EventMonitor, @unchecked Sendable {
    let queue = DispatchQueue(label: "metrics-recorder")
    private let lock = NSLock()
    private var gathered: [URLSessionTaskMetrics] = []

    func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics) {
        lock.withLock { gathered.append(metrics) }
    }

    var metrics: [URLSessionTaskMetrics] { lock.withLock { gathered } }
}

@Suite struct MetricsNamesTests {
    @Test func alamofiresMetricsTypeNamesCompileAndCarryTheMetrics() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let recorder = MetricsRecorder()
            let closureQueue = DispatchQueue(label: "closures")
            let closures = ClosureEventMonitor(queue: closureQueue)
            let fromClosure = NSLock()
            nonisolated(unsafe) var closureMetrics: [URLSessionTaskMetrics] = []
            let closure: (Request, URLSessionTaskMetrics) -> Void = { _, metrics in fromClosure.withLock { closureMetrics.append(metrics) }
            }
            closures.requestDidGatherMetrics = closure
            let session = Session(eventMonitors: [recorder, closures])
            let request = session.request(server.url("/redirect/1"))
            let response = await request.serializingData().response
            let metrics: URLSessionTaskMetrics? = response.metrics
            let all: [URLSessionTaskMetrics] = request.allMetrics
            let transactions: [URLSessionTaskTransactionMetrics] = try #require(metrics).transactionMetrics
            #expect(transactions.count == 2)
            #expect(transactions.allSatisfy { $0.resourceFetchType == .networkLoad })
            let fetchType: URLSessionTaskMetrics.ResourceFetchType? = transactions.first?.resourceFetchType
            #expect(fetchType == .networkLoad)
            #expect(all.count == 1)
            #expect(metrics?.redirectCount == 1)
            // Monitors hear of metrics before the response is handed out; their queues are drained here.
            recorder.queue.sync {}
            #expect(recorder.metrics.count == 1)
            #expect(recorder.metrics.first?.transactionMetrics.count == 2)
            closureQueue.sync {}
            #expect(fromClosure.withLock { closureMetrics.count } == 1)
        }
    }
}
