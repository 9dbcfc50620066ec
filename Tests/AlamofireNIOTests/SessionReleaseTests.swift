import AFSynchronization
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Releasing a Session, as in Alamofire: its unfinished requests finish with
/// `.sessionDeinitialized`, its monitors hear the invalidation, and nothing keeps it alive.
@Suite struct SessionReleaseTests {
    final class InvalidationMonitor: EventMonitor, Sendable {
        let queue = DispatchQueue(label: "invalidation-monitor")
        let invalidations = Mutex(0)
        /// Yields at each invalidation.
        let invalidated = AsyncStream<Void>.makeStream()

        func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
            invalidations.withLock { $0 += 1 }
            invalidated.continuation.yield()
        }
    }

    /// As in Alamofire: the underlying URLSession's delegate is the Session's SessionDelegate (a
    /// URLSession task, data and download delegate) and its delegate queue runs on the root queue.
    @Test func theUnderlyingURLSessionHasTheSessionsDelegateAndQueue() {
        let session = Session()
        #expect(session.session.delegate === session.delegate)
        #expect(session.session.delegateQueue.underlyingQueue === session.rootQueue)
        #expect(session.session.delegateQueue.maxConcurrentOperationCount == 1)
        let delegate: any URLSessionDelegate = session.delegate
        #expect(
            delegate is any URLSessionTaskDelegate && delegate is any URLSessionDataDelegate && delegate is any URLSessionDownloadDelegate)
    }

    @Test func aRequestMadeFromASessionNobodyKeepsFailsAsSessionDeinitialized() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout { await Session().request(server.url("/get")).serializingData().response }
            guard case .sessionDeinitialized? = response.error else {
                Issue.record("\(String(describing: response.error))")
                return
            }
        }
    }

    @Test func releasingASessionFinishesEveryUnfinishedRequestAndInvalidatesIt() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = InvalidationMonitor()
            weak var released: Session?
            let completions = Mutex<[AFError?]>([])
            let allDone = AsyncStream<Void>.makeStream()
            var requests: [DataRequest] = []
            do {
                let session = Session(startRequestsImmediately: false, eventMonitors: [monitor])
                released = session
                let record: @Sendable (AFDataResponse<Data>) -> Void = { response in
                    let count = completions.withLock {
                        $0.append(response.error)
                        return $0.count
                    }
                    if count == 101 { allDone.continuation.finish() }
                }
                for _ in 0..<100 { requests.append(session.request(server.url("/get")).responseData(completionHandler: record)) }
                // One running: held by the server, so that it is under way when the session goes.
                requests.append(session.request(server.url("/hold/running")).responseData(completionHandler: record).resume())
                try await server.waitUntil { $0.heldRequests["running"] == 1 }
            }
            #expect(released == nil)
            try await withTimeout { for await _ in allDone.stream {} }
            let errors = completions.withLock { $0 }
            #expect(errors.count == 101)
            #expect(errors.allSatisfy { $0?.isSessionDeinitializedError == true })
            // URLSession tells its delegate on the delegate queue, which tells the monitors.
            try await withTimeout {
                for await _ in monitor.invalidated.stream { break }
            }
            monitor.queue.sync {}
            #expect(monitor.invalidations.withLock { $0 } == 1)
            #expect(requests.count == 101)
        }
    }
}
