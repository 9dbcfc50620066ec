import AFSynchronization
import AlamofireNIO
import HTTPBinServer
import TestWaits
import Testing

// As in a user's module: AlamofireNIO imported alone (it brings Foundation and FoundationNetworking,
// and its `URLSessionTaskMetrics`), without @testable. A SessionDelegate subclass overrides
// Alamofire's open URLSession methods as an Alamofire user writes them, sees every event, and
// decides through them.

/// Records each URLSession event, then lets `SessionDelegate` do Alamofire's work — except a
/// credential challenge, which it answers itself when given a credential.
private final class RecordingDelegate: SessionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    private let challengeCredential: URLCredential?
    let invalidated = AsyncStream<Void>.makeStream()

    init(challengeCredential: URLCredential? = nil) {
        self.challengeCredential = challengeCredential
        super.init()
    }

    var events: [String] { lock.withLock { recorded } }

    private func record(_ event: String) { lock.withLock { recorded.append(event) } }

    override func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        record("invalid")
        super.urlSession(session, didBecomeInvalidWithError: error)
        invalidated.continuation.finish()
    }

    override func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        record("challenge \(challenge.protectionSpace.authenticationMethod) \(challenge.previousFailureCount)")
        guard let challengeCredential, challenge.previousFailureCount == 0 else {
            return super.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        }
        completionHandler(.useCredential, challengeCredential)
    }

    override func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        record("redirect \(response.statusCode) \(request.url?.path ?? "")")
        super.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: completionHandler)
    }

    override func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        if totalBytesSent == totalBytesExpectedToSend { record("sent \(totalBytesSent)") }
        super.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        record("metrics \(metrics.redirectCount)")
        super.urlSession(session, task: task, didFinishCollecting: metrics)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        record("complete \(error == nil ? "ok" : "error")")
        super.urlSession(session, task: task, didCompleteWithError: error)
    }

    override func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        record("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        super.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Chunks vary: only that data came is recorded, once.
        if events.last != "data" { record("data") }
        let thread = currentThreadName()
        lock.withLock { dataThreads.append(thread) }
        super.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    /// The name of the thread each chunk was handed over on (SwiftNIO names its event loops `NIO-…`).
    var dataThreadNames: [String] { lock.withLock { dataThreads } }
    private var dataThreads: [String] = []

    /// Linux's name for the calling thread.
    private func currentThreadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    }

    override func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        record("cache")
        super.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse, completionHandler: completionHandler)
    }

    override func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        if totalBytesWritten == totalBytesExpectedToWrite { record("written \(totalBytesWritten)") }
        super.urlSession(
            session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite)
    }

    override func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        record("downloaded \(FileManager.default.fileExists(atPath: location.path))")
        super.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }
}

@Suite struct SessionDelegateSubclassTests {
    @Test func aSubclassSeesARedirectedRequestsEventsInOrderAndSuperDoesTheWork() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let session = Session(delegate: delegate)
            let response = await session.request(server.url("/redirect/1")).serializingDecodable(HTTPBinResponse.self).response
            #expect(response.value?.url.hasSuffix("/get") == true)
            #expect(response.metrics?.redirectCount == 1)
            // The default configuration has a cache, which is offered the response.
            #expect(delegate.events == ["redirect 302 /get", "response 200", "data", "cache", "metrics 1", "complete ok"])
            #expect(session.session.delegate === delegate)
        }
    }

    @Test func anOverriddenChallengeAnswerIsUsed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate(challengeCredential: URLCredential(user: "user", password: "passwd", persistence: .none))
            let session = Session(delegate: delegate)
            // The request has no credential of its own: only the override's answer can pass.
            let response = await session.request(server.url("/basic-auth/user/passwd")).validate().serializingData().response
            #expect(response.response?.statusCode == 200)
            #expect(delegate.events.first == "challenge \(NSURLAuthenticationMethodHTTPBasic) 0")
        }
    }

    @Test func withoutItsAnswerSuperFallsBackToTheRequestsCredential() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let session = Session(delegate: delegate)
            let response = await session.request(server.url("/basic-auth/user/passwd"))
                .authenticate(username: "user", password: "wrong").serializingData().response
            #expect(response.response?.statusCode == 401)
            // The wrong password is sent once; the second challenge is refused, and the 401 is the response.
            #expect(
                delegate.events.filter { $0.hasPrefix("challenge") } == [
                    "challenge \(NSURLAuthenticationMethodHTTPBasic) 0", "challenge \(NSURLAuthenticationMethodHTTPBasic) 1",
                ])
        }
    }

    @Test func uploadsDownloadsAndTheCacheGoThroughTheirMethods() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            let session = Session(configuration: configuration, delegate: delegate)

            let upload = await session.upload(Data(repeating: 7, count: 1000), to: server.url("/post")).serializingData().response
            #expect(upload.response?.statusCode == 200)
            #expect(delegate.events.contains("sent 1000"))

            let download = await session.download(server.url("/bytes/2048")).serializingDownloadedFileURL().response
            let file = try #require(download.value)
            #expect(try Data(contentsOf: file).count == 2048)
            #expect(delegate.events.contains("written 2048"))
            #expect(delegate.events.contains("downloaded true"))

            _ = await session.request(server.url("/cache/60")).serializingData().response
            #expect(delegate.events.contains("cache"))
        }
    }

    /// A stream's chunks reach an overriding subclass off the event loops: its code may block, as a
    /// URLSession delegate's may (the session's own delegate takes them on the event loop).
    @Test func anOverridingSubclassGetsAStreamsChunksOffTheEventLoops() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let session = Session(delegate: delegate)
            var received = 0
            for await stream in session.streamRequest(server.url("/stream-bytes/300000?chunk_size=16384")).streamTask().streamingData() {
                received += stream.value?.count ?? 0
            }
            #expect(received == 300_000)
            let names = delegate.dataThreadNames
            #expect(!names.isEmpty)
            #expect(names.allSatisfy { !$0.hasPrefix("NIO-") }, "\(Set(names))")
        }
    }

    @Test func releasingTheSessionTellsTheDelegateAndTheMonitors() async throws {
        let delegate = RecordingDelegate()
        let monitor = InvalidationCounter()
        do { _ = Session(delegate: delegate, eventMonitors: [monitor]) }
        try await withTimeout { for await _ in delegate.invalidated.stream {} }
        try await withTimeout { for await _ in monitor.invalidated.stream {} }
        #expect(delegate.events == ["invalid"])
        #expect(monitor.count == 1)
    }

    /// A Session given a URLSession whose delegate is not its SessionDelegate: its monitors still hear
    /// the invalidation, once.
    @Test func aURLSessionWithAnotherDelegateStillReachesTheMonitors() async throws {
        let monitor = InvalidationCounter()
        let rootQueue = DispatchQueue(label: "foreign.rootQueue")
        do {
            let urlSession = URLSession(configuration: .ephemeral)
            _ = Session(session: urlSession, delegate: SessionDelegate(), rootQueue: rootQueue, eventMonitors: [monitor])
        }
        try await withTimeout { for await _ in monitor.invalidated.stream {} }
        // Anything else would have reached the monitor's queue by the time this runs.
        try await withTimeout { await withCheckedContinuation { continuation in rootQueue.async { continuation.resume() } } }
        monitor.queue.sync {}
        #expect(monitor.count == 1)
    }
}

/// Counts the invalidations its monitor hears.
private final class InvalidationCounter: EventMonitor, @unchecked Sendable {
    // @unchecked: `heard` is touched on `queue` only.
    let queue = DispatchQueue(label: "invalidation-counter")
    let invalidated = AsyncStream<Void>.makeStream()
    private var heard = 0

    var count: Int { queue.sync { heard } }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        heard += 1
        invalidated.continuation.finish()
    }
}
