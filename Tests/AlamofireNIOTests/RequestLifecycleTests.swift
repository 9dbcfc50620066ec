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

/// Races in a request's life, each reproduced the way a user meets it.
@Suite struct RequestLifecycleTests {
    /// As with `Progress(totalUnitCount: 0)`: a request made while a progress is current on the
    /// thread gives it its upload progress as the implicit child (the only one it takes).
    @Test func aCurrentProgressTakesTheUploadProgressAsItsChild() {
        let parent = Progress(totalUnitCount: 1)
        parent.becomeCurrent(withPendingUnitCount: 1)
        let request = keepAlive(Session(startRequestsImmediately: false)).request("http://127.0.0.1:1/")
        parent.resignCurrent()
        request.downloadProgress.totalUnitCount = 4
        request.downloadProgress.completedUnitCount = 4
        #expect(parent.fractionCompleted == 0)
        request.uploadProgress.totalUnitCount = 4
        request.uploadProgress.completedUnitCount = 2
        #expect(parent.fractionCompleted == 0.5)
        let unparented = keepAlive(Session(startRequestsImmediately: false)).request("http://127.0.0.1:1/")
        unparented.uploadProgress.totalUnitCount = 2
        unparented.uploadProgress.completedUnitCount = 2
        #expect(parent.fractionCompleted == 0.5)
        #expect(request.uploadProgress.totalUnitCount == 4 && unparented.downloadProgress.totalUnitCount == 0)
    }

    /// Holds a value set after the closure that reads it was made.
    final class Box<Value: Sendable>: Sendable {
        private let storage = Mutex<Value?>(nil)
        var value: Value? {
            get { storage.withLock { $0 } }
            set { storage.withLock { $0 = newValue } }
        }
    }

    /// A retrier whose answer the test gives, once it has been asked.
    final class HeldRetrier: RequestInterceptor {
        private let pending = Mutex<(@Sendable (RetryResult) -> Void)?>(nil)
        let asked = AsyncStream.makeStream(of: Void.self)

        func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void)
        {
            pending.withLock { $0 = completion }
            asked.continuation.yield()
        }

        func answer(_ result: RetryResult) {
            pending.withLock { $0 }?(result)
        }
    }

    /// A cancel from inside a validator comes between the validator's read of the outcome and the
    /// write of its failure: the cancellation must stay the request's error.
    @Test func aCancelDuringValidationIsNotOverwrittenByItsFailure() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let held = Box<DataRequest>()
            let request = session.request(server.url("/get")).validate { _, _, _ in
                held.value?.cancel()
                return .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 200)))
            }
            held.value = request
            let response = await request.serializingData().response
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(request.error?.isExplicitlyCancelledError == true)
            #expect(request.state == .cancelled)
        }
    }

    /// A retrier that answers after the request was cancelled: the request has finished, keeps its
    /// error, is not retried, and no `requestIsRetrying` follows `requestDidFinish`.
    @Test func aRetrierAnsweringAfterCancelIsIgnored() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = OrderRecorder()
            let monitor = ClosureEventMonitor(queue: testQueue)
            monitor.requestIsRetrying = { _ in events.append("retrying") }
            monitor.requestDidCancel = { _ in events.append("cancelled") }
            monitor.requestDidFinish = { _ in events.append("finished") }
            let retrier = HeldRetrier()
            let session = Session(interceptor: retrier, eventMonitors: [monitor])
            let request = session.request(server.url("/status/500")).validate()
            let task = request.serializingData()
            var asked = retrier.asked.stream.makeAsyncIterator()
            _ = await asked.next()
            request.cancel()
            let response = await task.response
            retrier.answer(.retry)
            // Let anything the late answer set off reach the monitor's queue. Twice: a batch of events
            // running on that queue when the first hop arrives hands the events raised meanwhile to a
            // new batch queued behind the hop; the second hop comes after that batch.
            for _ in 0..<2 {
                let settled: Void = try await completion { done in session.rootQueue.async { testQueue.async { done(()) } } }
                _ = settled
            }
            #expect(response.error?.responseCode == 500)
            #expect(request.error?.responseCode == 500)
            #expect(request.retryCount == 0)
            #expect(request.requests.count == 2)  // the initial and the adapted request, of one attempt
            #expect(events.values == ["cancelled", "finished"])
        }
    }

    /// A retry delay cut short by a cancel: the request finishes at once rather than after the delay,
    /// with the last attempt's error (Alamofire keeps an error the request already has).
    @Test func aCancelDuringARetryDelayFinishesAtOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let retrier = HeldRetrier()
            let session = Session(interceptor: retrier)
            let request = session.request(server.url("/status/503")).validate()
            let task = request.serializingData()
            var asked = retrier.asked.stream.makeAsyncIterator()
            _ = await asked.next()
            retrier.answer(.retryWithDelay(3600))
            // The answer is handled on the root queue; cancel after it, during the hour's delay.
            let handled: Void = try await completion { done in session.rootQueue.async { done(()) } }
            _ = handled
            request.cancel()
            let response = await task.response
            #expect(response.error?.responseCode == 503)
            #expect(request.state == .cancelled)
            #expect(request.retryCount == 0)
        }
    }
}
