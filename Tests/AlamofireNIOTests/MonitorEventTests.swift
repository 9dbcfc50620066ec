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

/// `MonitorEvent`, the empty defaults that record it and `CompositeEventMonitor`'s forwarding
/// methods are three lists kept in step by hand: each composite method must reach the default of
/// its own event, and record that event's bit alone.
@Suite struct MonitorEventTests {
    @Test func everyEventFitsInTheBitSet() {
        #expect(MonitorEvent.allCases.count <= 64)
        #expect(Set(MonitorEvent.allCases.map(\.bit)).count == MonitorEvent.allCases.count)
    }

    @Test func eachCompositeMethodRecordsItsOwnEventOnly() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let url = server.url("/get")
            let data = session.request(url)
            let dataResponse = try await withTimeout { await data.serializingData().response }
            let download = session.download(url)
            let downloadResponse = try await withTimeout { await download.serializingDownloadedFileURL().response }
            let stream = session.streamRequest(url, automaticallyCancelOnStreamError: false)
            let upload = session.upload(Data("body".utf8), to: server.url("/post"))
            _ = try await withTimeout { await upload.serializingData().response }
            let dataTask = try #require(data.task as? URLSessionDataTask)
            let downloadTask = try #require(download.task as? URLSessionDownloadTask)
            let urlRequest = try #require(data.request)
            let httpResponse = try #require(dataResponse.response)
            let metrics = try #require(dataResponse.metrics)
            let fileURL = try #require(downloadResponse.fileURL)
            let urlSession = session.session
            let error = AFError.explicitlyCancelled
            let space = URLProtectionSpace(
                host: "127.0.0.1", port: server.port, protocol: "http", realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            )
            let challenge = URLAuthenticationChallenge(
                protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil,
                sender: ChallengeSender())
            let cached = CachedURLResponse(response: httpResponse, data: Data())
            let valid = Request.ValidationResult.success(())
            let events: [(MonitorEvent, (CompositeEventMonitor) -> Void)] = [
                (.didBecomeInvalid, { $0.urlSession(urlSession, didBecomeInvalidWithError: nil) }),
                (.taskDidReceiveChallenge, { $0.urlSession(urlSession, task: dataTask, didReceive: challenge) }),
                (
                    .taskDidSendBodyData,
                    { $0.urlSession(urlSession, task: dataTask, didSendBodyData: 1, totalBytesSent: 1, totalBytesExpectedToSend: 1) }
                ),
                (.taskNeedsNewBodyStream, { $0.urlSession(urlSession, taskNeedsNewBodyStream: dataTask) }),
                (
                    .taskWillPerformHTTPRedirection,
                    { $0.urlSession(urlSession, task: dataTask, willPerformHTTPRedirection: httpResponse, newRequest: urlRequest) }
                ),
                (.taskDidFinishCollectingMetrics, { $0.urlSession(urlSession, task: dataTask, didFinishCollecting: metrics) }),
                (.taskDidComplete, { $0.urlSession(urlSession, task: dataTask, didCompleteWithError: nil) }),
                (.taskIsWaitingForConnectivity, { $0.urlSession(urlSession, taskIsWaitingForConnectivity: dataTask) }),
                (.dataTaskDidReceiveResponse, { $0.urlSession(urlSession, dataTask: dataTask, didReceive: httpResponse) }),
                (.dataTaskDidReceiveData, { $0.urlSession(urlSession, dataTask: dataTask, didReceive: Data()) }),
                (.dataTaskWillCacheResponse, { $0.urlSession(urlSession, dataTask: dataTask, willCacheResponse: cached) }),
                (
                    .downloadTaskDidResumeAtOffset,
                    { $0.urlSession(urlSession, downloadTask: downloadTask, didResumeAtOffset: 0, expectedTotalBytes: 1) }
                ),
                (
                    .downloadTaskDidWriteData,
                    {
                        $0.urlSession(
                            urlSession, downloadTask: downloadTask, didWriteData: 1, totalBytesWritten: 1, totalBytesExpectedToWrite: 1)
                    }
                ),
                (
                    .downloadTaskDidFinishDownloading,
                    { $0.urlSession(urlSession, downloadTask: downloadTask, didFinishDownloadingTo: fileURL) }
                ),
                (.requestDidCreateInitialURLRequest, { $0.request(data, didCreateInitialURLRequest: urlRequest) }),
                (.requestDidFailToCreateURLRequest, { $0.request(data, didFailToCreateURLRequestWithError: error) }),
                (.requestDidAdaptInitialRequest, { $0.request(data, didAdaptInitialRequest: urlRequest, to: urlRequest) }),
                (.requestDidFailToAdaptURLRequest, { $0.request(data, didFailToAdaptURLRequest: urlRequest, withError: error) }),
                (.requestDidCreateURLRequest, { $0.request(data, didCreateURLRequest: urlRequest) }),
                (.requestDidCreateTask, { $0.request(data, didCreateTask: dataTask) }),
                (.requestDidGatherMetrics, { $0.request(data, didGatherMetrics: metrics) }),
                (.requestDidFailTaskEarly, { $0.request(data, didFailTask: dataTask, earlyWithError: error) }),
                (.requestDidCompleteTask, { $0.request(data, didCompleteTask: dataTask, with: nil) }),
                (.requestIsRetrying, { $0.requestIsRetrying(data) }),
                (.requestDidFinish, { $0.requestDidFinish(data) }),
                (.requestDidResume, { $0.requestDidResume(data) }),
                (.requestDidResumeTask, { $0.request(data, didResumeTask: dataTask) }),
                (.requestDidSuspend, { $0.requestDidSuspend(data) }),
                (.requestDidSuspendTask, { $0.request(data, didSuspendTask: dataTask) }),
                (.requestDidCancel, { $0.requestDidCancel(data) }),
                (.requestDidCancelTask, { $0.request(data, didCancelTask: dataTask) }),
                (
                    .dataRequestDidValidate,
                    { $0.request(data, didValidateRequest: urlRequest, response: httpResponse, data: nil, withResult: valid) }
                ),
                (.dataRequestDidParseData, { $0.request(data, didParseResponse: dataResponse.map { Optional($0) }) }),
                (.dataRequestDidParseResponse, { $0.request(data, didParseResponse: dataResponse) }),
                (
                    .streamRequestDidValidate,
                    { $0.request(stream, didValidateRequest: urlRequest, response: httpResponse, withResult: valid) }
                ),
                (.streamRequestDidParseStream, { $0.request(stream, didParseStream: Result<Int, AFError>.success(1)) }),
                (.uploadRequestDidCreateUploadable, { $0.request(upload, didCreateUploadable: .data(Data())) }),
                (.uploadRequestDidFailToCreateUploadable, { $0.request(upload, didFailToCreateUploadableWithError: error) }),
                (.uploadRequestDidProvideInputStream, { $0.request(upload, didProvideInputStream: InputStream(data: Data())) }),
                (
                    .downloadRequestDidFinishDownloading,
                    { $0.request(download, didFinishDownloadingUsing: downloadTask, with: .success(fileURL)) }
                ),
                (.downloadRequestDidCreateDestinationURL, { $0.request(download, didCreateDestinationURL: fileURL) }),
                (
                    .downloadRequestDidValidate,
                    {
                        $0.request(download, didValidateRequest: urlRequest, response: httpResponse, fileURL: fileURL, withResult: valid)
                    }
                ),
                (.downloadRequestDidParseURL, { $0.request(download, didParseResponse: downloadResponse.map { Optional($0) }) }),
                (.downloadRequestDidParseResponse, { $0.request(download, didParseResponse: downloadResponse) }),
            ]
            #expect(events.map(\.0) == MonitorEvent.allCases)
            stream.cancel()

            // Forwards, a method raising an event already learned (an earlier one's) would be skipped
            // and record nothing; backwards, one raising a later one's likewise.
            try await learnEach(events, SilentMonitor<Forwards>())
            try await learnEach(events.reversed(), SilentMonitor<Backwards>())
        }
    }

    @Test func aMonitorAddedToARequestKeepsTheSessionMonitorsEventsInOrder() throws {
        let sessionMonitor = GatedMonitor()
        let sessionComposite = CompositeEventMonitor(monitors: [sessionMonitor])
        let requestComposite = sessionComposite.adding(SilentMonitor<Added>())
        let request = keepAlive(Session(startRequestsImmediately: false)).request("http://127.0.0.1:1/")
        // The first event holds the monitor's queue while the second waits behind it; the third is
        // raised through the request's composite meanwhile.
        sessionComposite.requestDidResume(request)
        #expect(sessionMonitor.entered.wait(timeout: .now() + 10) == .success)
        sessionComposite.requestDidSuspend(request)
        requestComposite.requestDidCancel(request)
        sessionMonitor.release.signal()
        // The events that waited go in a batch of their own, dispatched after the first: wait for the last.
        #expect(sessionMonitor.cancelled.wait(timeout: .now() + 10) == .success)
        #expect(sessionMonitor.events.withLock { $0 } == ["resume", "suspend", "cancel"])
    }

    /// Calls each composite method in turn, checking that the monitor's default records its event alone.
    private func learnEach<Tag>(_ events: [(MonitorEvent, (CompositeEventMonitor) -> Void)], _ monitor: SilentMonitor<Tag>) async throws {
        let composite = CompositeEventMonitor(monitors: [monitor])
        var recorded: UInt64 = 0
        for (event, call) in events {
            call(composite)
            // The monitor's queue has run the event.
            await withCheckedContinuation { continuation in monitor.queue.async { continuation.resume() } }
            let now = DefaultedMonitorEvents.events(of: monitor)
            #expect(now == recorded | event.bit, "\(event)")
            recorded = now
        }
        // Every event is known to be left to the defaults: no monitor of this type hears any.
        #expect(MonitorEvent.allCases.allSatisfy { !composite.hears($0) })
    }
}

private enum Forwards {}
private enum Backwards {}
private enum Added {}

/// A monitor that implements no event; each `Tag` is a type of its own.
private struct SilentMonitor<Tag>: EventMonitor {
    let queue = DispatchQueue(label: "tests.monitor-events.silent")
}

/// A monitor whose first `requestDidResume` waits for `release`, having signalled `entered`.
private final class GatedMonitor: EventMonitor, Sendable {
    let queue = DispatchQueue(label: "tests.monitor-events.gated")
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let events = Mutex<[String]>([])

    func requestDidResume(_ request: Request) {
        entered.signal()
        _ = release.wait(timeout: .now() + 10)
        events.withLock { $0.append("resume") }
    }
    func requestDidSuspend(_ request: Request) { events.withLock { $0.append("suspend") } }
    let cancelled = DispatchSemaphore(value: 0)
    func requestDidCancel(_ request: Request) {
        events.withLock { $0.append("cancel") }
        cancelled.signal()
    }
}
