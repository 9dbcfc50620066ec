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

/// The exact events an `EventMonitor` hears, in Alamofire's order, for each kind of request: the
/// request's own events (set up lazily, so the resume comes first) interleaved with the URLSession
/// delegate's, which the loading layer raises at the moments URLSession would call it.
@Suite struct EventSequenceTests {
    /// The events of a successful load of a body, from the task's resume to its completion. A GET's
    /// 200 is offered to the session's cache (`URLCache.shared`) before the task completes.
    static func loaded(status: Int = 200, body: Bool = true, transactions: Int = 1, get: Bool = true) -> [String] {
        ["dataTaskDidReceiveResponse \(status)"] + (body ? ["dataTaskDidReceiveData"] : [])
            + (status == 200 && get ? ["dataTaskWillCacheResponse"] : [])
            + ["taskDidFinishCollecting \(transactions)", "didGatherMetrics", "taskDidComplete ok"]
    }

    static let setUp = ["requestDidResume", "didCreateInitialURLRequest", "didCreateURLRequest", "didCreateTask", "didResumeTask"]

    @Test func aValidatedDataRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            _ = try await withTimeout { await session.request(server.url("/get")).validate().serializingData().response }
            let validated = ["didValidateRequest", "didValidateRequest", "didCompleteTask ok"]
            #expect(await monitor.events == Self.setUp + Self.loaded() + validated + ["requestDidFinish", "didParseResponse<Data>"])
        }
    }

    @Test func aRedirectedRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            _ = try await withTimeout { await session.request(server.url("/redirect/1")).serializingData().response }
            #expect(
                await monitor.events
                    == Self.setUp + ["taskWillPerformHTTPRedirection 302"] + Self.loaded(transactions: 2)
                    + ["didCompleteTask ok", "requestDidFinish", "didParseResponse<Data>"])
        }
    }

    /// The first attempt is adapted to a 500 that validation rejects and the retrier retries; the
    /// second is adapted to a success.
    @Test func anAdaptedThenRetriedRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let attempts = Mutex(0)
            let adapter = Adapter { urlRequest, _, completion in
                var adapted = urlRequest
                let attempt = attempts.withLock { count in
                    defer { count += 1 }
                    return count
                }
                adapted.url = server.url(attempt == 0 ? "/status/500" : "/get")
                completion(.success(adapted))
            }
            let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
            let session = Session(interceptor: Interceptor(adapter: adapter, retrier: retrier), eventMonitors: [monitor])
            let response = try await withTimeout {
                await session.request(server.url("/anything")).validate(statusCode: 200..<300).serializingData().response
            }
            #expect(response.response?.statusCode == 200)
            let attempt = ["didCreateInitialURLRequest", "didAdaptInitialRequest", "didCreateURLRequest", "didCreateTask", "didResumeTask"]
            let expected =
                ["requestDidResume"] + attempt + Self.loaded(status: 500, body: false) + ["didValidateRequest", "didCompleteTask ok"]
                + ["requestIsRetrying"] + attempt + Self.loaded() + ["didValidateRequest", "didCompleteTask ok"]
                + ["requestDidFinish", "didParseResponse<Data>"]
            #expect(await monitor.events == expected)
        }
    }

    /// Cancelled once the body has begun: the cancel's events, then the task's end as cancelled,
    /// its one transaction carrying the response.
    @Test func aRequestCancelledMidBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            let request = session.request(server.url("/range/8?hold=rest&hold_at=4"))
            // The server sends the head and four bytes, then holds the rest: the cancel comes once
            // both have reached the request's handlers.
            let headArrived = OneTimeSignal()
            let bodyBegan = OneTimeSignal()
            request.onHTTPResponse(on: testQueue) { _ in headArrived.fire() }
            request.downloadProgress(queue: testQueue) { progress in
                if progress.completedUnitCount > 0 { bodyBegan.fire() }
            }
            // The serializer starts the request (Alamofire resumes it with its first response handler).
            let serialized = request.serializingData()
            try await withTimeout {
                try await headArrived.wait()
                try await bodyBegan.wait()
            }
            request.cancel()
            let response = try await withTimeout { await serialized.response }
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(response.response?.statusCode == 200)
            #expect((response.metrics?.transactionMetrics.first?.response as? HTTPURLResponse)?.statusCode == 200)
            let events = await monitor.events.filter { $0 != "dataTaskDidReceiveData" }
            #expect(
                events
                    == Self.setUp + [
                        "dataTaskDidReceiveResponse 200", "requestDidCancel", "didCancelTask", "taskDidFinishCollecting 1",
                        "didGatherMetrics", "taskDidComplete -999", "didCompleteTask error", "requestDidFinish", "didParseResponse<Data>",
                    ])
        }
    }

    @Test func aDownloadToADestination() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString)/bytes")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            let response = try await withTimeout {
                await session.download(server.url("/bytes/2000"), to: { _, _ in (file, [.createIntermediateDirectories]) })
                    .serializingDownloadedFileURL().response
            }
            #expect(response.fileURL == file)
            #expect(
                await monitor.events
                    == Self.setUp + [
                        "downloadTaskDidWriteData", "downloadTaskDidFinishDownloading", "didCreateDestinationURL",
                        "didFinishDownloadingUsing",
                        "taskDidFinishCollecting 1", "didGatherMetrics", "taskDidComplete ok", "didCompleteTask ok", "requestDidFinish",
                        "didParseDownloadResponse<URL>",
                    ])
        }
    }

    @Test func anUploadOfData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            _ = try await withTimeout {
                await session.upload(Data(repeating: 7, count: 10_000), to: server.url("/post")).serializingData().response
            }
            #expect(
                await monitor.events
                    == [
                        "requestDidResume", "didCreateInitialURLRequest", "didCreateUploadable", "didCreateURLRequest", "didCreateTask",
                        "didResumeTask",
                    ]
                    + ["taskDidSendBodyData"] + Self.loaded(get: false) + [
                        "didCompleteTask ok", "requestDidFinish", "didParseResponse<Data>",
                    ])
        }
    }

    /// A streamed upload's task asks for its stream as it starts, as URLSession's does.
    @Test func anUploadOfAStream() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            let request = session.upload(InputStream(data: Data(repeating: 1, count: 5000)), to: server.url("/post"))
            _ = try await withTimeout { await request.serializingData().response }
            let events = await monitor.events
            #expect(
                events
                    == [
                        "requestDidResume", "didCreateInitialURLRequest", "didCreateUploadable", "didCreateURLRequest", "didCreateTask",
                        "didResumeTask",
                    ]
                    + ["taskNeedNewBodyStream", "didProvideInputStream", "taskDidSendBodyData"] + Self.loaded(get: false)
                    + ["didCompleteTask ok", "requestDidFinish", "didParseResponse<Data>"])
        }
    }

    /// Setting up eagerly (Alamofire before 5.11) makes the task before the resume; a suspended
    /// request's task waits suspended.
    @Test func anEagerRequestMakesItsTaskBeforeItIsResumed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
            let request = session.request(server.url("/get"))
            // Set up on the root queue, as in Alamofire.
            session.rootQueue.sync {}
            let task = try #require(request.task)
            #expect(task.state == .suspended)
            request.suspend()
            request.resume()
            _ = try await withTimeout { await request.serializingData().response }
            #expect(task.state == .completed)
            #expect(
                await monitor.events
                    == ["didCreateInitialURLRequest", "didCreateURLRequest", "didCreateTask", "requestDidSuspend", "didSuspendTask"]
                    + ["requestDidResume", "didResumeTask"] + Self.loaded() + [
                        "didCompleteTask ok", "requestDidFinish", "didParseResponse<Data>",
                    ])
        }
    }

    /// A monitor added to one request hears that request's events and none of the URLSession's.
    @Test func aRequestsOwnMonitorHearsOnlyRequestEvents() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let own = RecordingMonitor()
            let session = Session(eventMonitors: [])
            _ = try await withTimeout { await session.request(server.url("/get")).eventMonitor(own).serializingData().response }
            #expect(
                await own.events == Self.setUp + ["didGatherMetrics", "didCompleteTask ok", "requestDidFinish", "didParseResponse<Data>"])
        }
    }

    /// `AlamofireNotifications`, the default monitor, posts Alamofire's notifications with the request.
    @Test func theDefaultMonitorPostsAlamofiresNotifications() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let names = [
                Request.didResumeNotification, Request.didResumeTaskNotification, Request.didCompleteTaskNotification,
                Request.didFinishNotification,
            ]
            let posted = Mutex<[(String, UUID?)]>([])
            let observers = names.map { name in
                NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { notification in
                    posted.withLock { $0.append((notification.name.rawValue, notification.request?.id)) }
                }
            }
            defer { observers.forEach(NotificationCenter.default.removeObserver) }
            let request = session.request(server.url("/get"))
            _ = try await withTimeout { await request.serializingData().response }
            // A session posts each at its event, the last (finish) before the request's clean-up,
            // which may come after the response.
            try await untilFinished(request)
            let mine = posted.withLock { $0 }.filter { $0.1 == request.id }.map(\.0)
            #expect(mine == names.map(\.rawValue))
        }
    }

    /// How a request ends in ``aRequestIsFreedAfterItsNotifications(_:)``.
    enum NotifiedPath: String, CaseIterable, CustomTestStringConvertible {
        case plain
        /// A serializer fails after the first finish and the retrier starts a second attempt.
        case retriedAfterFinish
        /// A serializer cancels the request: `didCancelNotification` is posted while it finishes.
        case cancelledWhileSerializing
        /// Suspended before its first resume (no session holds it), then dropped.
        case suspendedBeforeResume

        var testDescription: String { rawValue }
    }

    /// The notifications' `userInfo` holds the request, so the request keeps it only while it is
    /// under way and lets it go at `didFinishNotification`: whichever way a request ends, it is
    /// freed once nothing else holds it.
    @Test(arguments: NotifiedPath.allCases)
    func aRequestIsFreedAfterItsNotifications(_ path: NotifiedPath) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(startRequestsImmediately: path != .suspendedBeforeResume)
            weak var released: DataRequest?
            do {
                let request = session.request(server.url("/get"), interceptor: RetryOnce())
                released = request
                switch path {
                case .plain:
                    let response = try await withTimeout { await request.serializingData().response }
                    #expect(response.response?.statusCode == 200 && response.error == nil)
                case .retriedAfterFinish:
                    // A JSON object does not decode as an `Int`.
                    let response = try await withTimeout { await request.serializingDecodable(Int.self).response }
                    #expect(request.retryCount == 1 && response.error != nil)
                case .cancelledWhileSerializing:
                    let canceller = CancellingSerializer(request: request)
                    let response = try await withTimeout { await request.serializingResponse(using: canceller).response }
                    #expect(response.response?.statusCode == 200)
                    #expect(request.isCancelled)
                case .suspendedBeforeResume:
                    request.suspend()
                    #expect(request.isSuspended)
                }
                if path != .suspendedBeforeResume { try await untilFinished(request) }
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while released != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(released == nil, "the request is still held")
        }
    }
}

/// Cancels its request as it serializes the response (the request is then finishing).
private struct CancellingSerializer: DataResponseSerializerProtocol {
    /// Weak: the serializer is kept by the request it cancels.
    private let box: WeakRequest

    init(request: Request) { box = WeakRequest(request) }

    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        box.request?.cancel()
        return data ?? Data()
    }

    private final class WeakRequest: Sendable {
        weak let request: Request?
        init(_ request: Request) { self.request = request }
    }
}

/// Retries a request's first failure, at once, and no other.
private final class RetryOnce: RequestInterceptor, Sendable {
    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(request.retryCount == 0 ? .retry : .doNotRetry)
    }
}
