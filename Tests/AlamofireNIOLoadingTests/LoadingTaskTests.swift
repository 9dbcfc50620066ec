import AFSynchronization
import AlamofireNIOTransport
import Foundation
import HTTPBinServer
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

@testable import AlamofireNIOLoading

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loading tasks against the bundled server: the delegate hears URLSession's moments, in order.
@Suite struct LoadingTaskTests {
    /// Records every event as a line, and lets a test choose the answers to the questions.
    final class RecordingDelegate: LoadingTaskDelegate {
        private struct State {
            var events: [String] = []
            var data = Data()
            var file: URL?
            var metrics: TaskMetrics?
            var completion: CheckedContinuation<URLError??, Never>?
            var completed: URLError??
            /// For each chunk of a streamed body, the event loop it was handed over on, if any.
            var chunksOnEventLoop: [ObjectIdentifier?] = []
        }

        private let state = Mutex(State())
        let followRedirects: Bool
        let disposition: LoadingResponseDisposition
        let newBodyStream: (@Sendable () -> InputStream?)?
        let takesStreamedBodyOnEventLoop: Bool
        /// Runs before each redirect is answered (a test turns its clock there).
        let beforeAnsweringRedirect: (@Sendable () async -> Void)?

        init(
            followRedirects: Bool = true, disposition: LoadingResponseDisposition = .allow,
            newBodyStream: (@Sendable () -> InputStream?)? = nil, takesStreamedBodyOnEventLoop: Bool = false,
            beforeAnsweringRedirect: (@Sendable () async -> Void)? = nil
        ) {
            self.beforeAnsweringRedirect = beforeAnsweringRedirect
            self.followRedirects = followRedirects
            self.disposition = disposition
            self.newBodyStream = newBodyStream
            self.takesStreamedBodyOnEventLoop = takesStreamedBodyOnEventLoop
        }

        var events: [String] { state.withLock { $0.events } }
        var data: Data { state.withLock { $0.data } }
        var file: URL? { state.withLock { $0.file } }
        var metrics: TaskMetrics? { state.withLock { $0.metrics } }
        var chunksOnEventLoop: [ObjectIdentifier?] { state.withLock { $0.chunksOnEventLoop } }

        private func record(_ event: String) { state.withLock { $0.events.append(event) } }

        /// The task did not complete within the time a test gives it.
        struct NeverCompleted: Error {}

        /// Waits for the task's completion, for at most 30 seconds; throws ``NeverCompleted`` after them
        /// (the wait's continuation is resumed then, so a task that never completes fails the test
        /// instead of hanging it).
        func completion() async throws -> URLError? {
            let outcome: URLError?? = await withCheckedContinuation { continuation in
                let done = state.withLock { state -> URLError?? in
                    if let completed = state.completed { return completed }
                    state.completion = continuation
                    return nil
                }
                if let done { return continuation.resume(returning: done) }
                DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
                    let waiting = self.state.withLock { state in
                        defer { state.completion = nil }
                        return state.completion
                    }
                    waiting?.resume(returning: .none)
                }
            }
            guard let outcome else { throw NeverCompleted() }
            return outcome
        }

        func loadingTask(
            _ task: LoadingTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            record("redirect \(response.statusCode) \(newRequest.httpMethod ?? "") \(newRequest.url?.path ?? "")")
            let answer = followRedirects ? newRequest : nil
            guard let beforeAnsweringRedirect else { return completionHandler(answer) }
            Task {
                await beforeAnsweringRedirect()
                completionHandler(answer)
            }
        }

        func loadingTaskNeedsNewBodyStream(_ task: LoadingTask, completionHandler: @escaping @Sendable (InputStream?) -> Void) {
            record("needNewBodyStream")
            completionHandler(newBodyStream?())
        }

        func loadingTask(
            _ task: LoadingTask, didReceive response: ReceivedResponse,
            completionHandler: @escaping @Sendable (LoadingResponseDisposition) -> Void
        ) {
            record("response \(response.statusCode)")
            completionHandler(disposition)
        }

        func loadingTask(_ task: LoadingTask, didReceive data: Data) {
            let onEventLoop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0 as AnyObject) }
            state.withLock { state in
                state.events.append("data")
                state.data.append(data)
                state.chunksOnEventLoop.append(onEventLoop)
            }
        }

        func loadingTaskTakesStreamedBodyOnEventLoop(_ task: LoadingTask) -> Bool { takesStreamedBodyOnEventLoop }

        func loadingTask(_ task: LoadingTask, didFinishDownloadingTo location: URL) {
            state.withLock { state in
                state.events.append("file")
                state.file = location
            }
        }

        func loadingTaskIsWaitingForConnectivity(_ task: LoadingTask) {
            record("waiting")
        }

        func loadingTask(_ task: LoadingTask, didFinishCollecting metrics: TaskMetrics) {
            state.withLock { state in
                state.events.append("metrics \(metrics.transactionMetrics.count)")
                state.metrics = metrics
            }
        }

        func loadingTask(_ task: LoadingTask, didCompleteWithError error: URLError?) {
            let continuation = state.withLock { state in
                state.events.append("complete \(error.map { "\($0.code.rawValue)" } ?? "ok")")
                state.completed = .some(error)
                defer { state.completion = nil }
                return state.completion
            }
            continuation?.resume(returning: .some(error))
        }
    }

    static func session() -> LoadingSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Session": "1"]
        return LoadingSession(transport: HTTPTransport(), configuration: configuration)
    }

    static func request(_ url: URL, method: String = "GET") -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        return request
    }

    /// A download task dropped unstarted (its request was cancelled as it was made) removes the partial
    /// file it was to continue, unless the user's resume data names it.
    @Test(arguments: [false, true])
    func aDownloadTaskDroppedUnstartedSettlesItsPartialFile(heldByUser: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("AlamofireNIO_\(UUID().uuidString).tmp")
        try Data(repeating: 1, count: 100).write(to: file)
        var resumption = DownloadResumption(
            request: URLRequest(url: URL(string: "http://127.0.0.1:1/file")!), file: file, offset: 100, entityTag: "\"v1\"",
            lastModified: nil, expectedTotalBytes: 1000)
        resumption.isHeldByUser = heldByUser
        let task = Self.session().makeTask(
            with: resumption.request, destination: .file(directory: directory), resuming: resumption, delegate: RecordingDelegate())
        task.discardUnstarted()
        #expect(FileManager.default.fileExists(atPath: file.path) == heldByUser)
    }

    @Test func aGetReportsResponseDataMetricsAndCompletionInOrder() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let task = Self.session().makeTask(with: Self.request(server.url("/get")), delegate: delegate)
            task.resume()
            #expect(try await delegate.completion() == nil)
            #expect(delegate.events == ["response 200", "data", "metrics 1", "complete ok"])
            let echo = try JSONSerialization.jsonObject(with: delegate.data) as? [String: Any]
            #expect((echo?["headers"] as? [String: String])?["X-Session"] == "1")
        }
    }

    /// A streamed body's chunks are handed over on the connection's event loop only when the delegate
    /// takes them there; either way every byte arrives, in order, and the task completes once.
    @Test(arguments: [false, true])
    func aStreamedBodyIsHandedOverOnTheEventLoopOnlyWhenTheDelegateTakesItThere(onEventLoop: Bool) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate(takesStreamedBodyOnEventLoop: onEventLoop)
            let url = server.url("/stream-bytes/1000000?seed=7&chunk_size=65536")
            Self.session().makeTask(with: Self.request(url), destination: .stream(keptWhole: false), delegate: delegate).resume()
            #expect(try await delegate.completion() == nil)
            var generator = SeededBytes(seed: 7)
            #expect(delegate.data == Data(generator.next(1_000_000)))
            // On one loop, the connection's, when taken there; else on none.
            let loops = delegate.chunksOnEventLoop
            #expect(!loops.isEmpty)
            #expect(Set(loops).count == 1)
            #expect((loops.first! != nil) == onEventLoop)
            #expect(delegate.events.last == "complete ok")
        }
    }

    /// Loads `url` in a session whose resource timeout of `seconds` counts on a hand-turned clock,
    /// turned by `turn` before each redirect is answered; the delegate records what happens.
    static func loadWithResourceTimeout(_ seconds: TimeInterval, turningItsClockBy turn: TimeAmount, _ url: URL) -> RecordingDelegate {
        let clock = NIOAsyncTestingEventLoop()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForResource = seconds
        let session = LoadingSession(transport: HTTPTransport(), configuration: configuration, clock: clock)
        let delegate = RecordingDelegate(beforeAnsweringRedirect: { await clock.advanceTime(by: turn) })
        session.makeTask(with: request(url), delegate: delegate).resume()
        return delegate
    }

    /// The resource timeout bounds the whole task, as URLSession's does, counted on the session's
    /// clock (turned here by 6 s at each redirect, of 10): the second hop gets what is left, and the
    /// third, due once it has passed, fails with `.timedOut` without reaching the server (and without
    /// a transaction of its own).
    @Test func theResourceTimeoutCountsOverEveryHop() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = Self.loadWithResourceTimeout(10, turningItsClockBy: .seconds(6), server.url("/redirect/2"))
            #expect(try await delegate.completion()?.code == .timedOut)
            #expect(
                delegate.events == [
                    "redirect 302 GET /relative-redirect/1", "redirect 302 GET /get", "metrics 2", "complete -1001",
                ])
            #expect(server.statistics.totalRequests == 2)
        }
    }

    /// A hop gets only what is left of the resource timeout: with 100 ms left of a minute (on the
    /// session's clock), a hop the server never answers ends as `.timedOut` in 100 ms. Given the whole
    /// minute, it would outlast the completion's 30 s wait and fail the test.
    @Test func aHopGetsWhatIsLeftOfTheResourceTimeout() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = Self.loadWithResourceTimeout(
                60, turningItsClockBy: .milliseconds(59_900), server.url("/redirect-to?url=/hold/never"))
            #expect(try await delegate.completion()?.code == .timedOut)
            #expect(delegate.events == ["redirect 302 GET /hold/never", "metrics 2", "complete -1001"])
            #expect(server.statistics.totalRequests == 2)
        }
    }

    @Test func redirectsAreAskedPerHopAndCountedInTheMetrics() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            Self.session().makeTask(with: Self.request(server.url("/redirect/2")), delegate: delegate).resume()
            #expect(try await delegate.completion() == nil)
            #expect(
                delegate.events == [
                    "redirect 302 GET /relative-redirect/1", "redirect 302 GET /get", "response 200", "data", "metrics 3", "complete ok",
                ])
            #expect(delegate.metrics?.redirectCount == 2)
        }
    }

    @Test(arguments: [false, true])
    func tooManyRedirectsFailWithTheLastRedirectAsTheResponse(toFile: Bool) async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let destination: LoadingTask.Destination = toFile ? .file(directory: FileManager.default.temporaryDirectory) : .memory
            let task = Self.session().makeTask(with: Self.request(server.url("/redirect/17")), destination: destination, delegate: delegate)
            task.resume()
            #expect(try await delegate.completion()?.code == .httpTooManyRedirects)
            // The last redirect is the task's response, but no delegate is asked about it.
            #expect(delegate.events.suffix(2) == ["metrics 17", "complete -1007"])
            #expect(!delegate.events.contains { $0.hasPrefix("response") })
            #expect((task.snapshot.response as? HTTPURLResponse)?.statusCode == 302)
            #expect(delegate.events.filter { $0.hasPrefix("redirect") }.count == 16)
            #expect(delegate.metrics?.redirectCount == 16)
            #expect(delegate.file == nil)
        }
    }

    @Test func aDeclinedRedirectIsTheResult() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate(followRedirects: false)
            Self.session().makeTask(with: Self.request(server.url("/redirect/1")), delegate: delegate).resume()
            #expect(try await delegate.completion() == nil)
            #expect(delegate.events == ["redirect 302 GET /get", "response 302", "metrics 1", "complete ok"])
        }
    }

    @Test func aDownloadIsWrittenToAFileAfterItsRedirect() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let directory = FileManager.default.temporaryDirectory
            let url = server.url("/redirect-to?url=/bytes/3000%3Fseed%3D7&status_code=307")
            Self.session().makeTask(with: Self.request(url), destination: .file(directory: directory), delegate: delegate).resume()
            #expect(try await delegate.completion() == nil)
            #expect(delegate.events == ["redirect 307 GET /bytes/3000", "response 200", "file", "metrics 2", "complete ok"])
            let file = try #require(delegate.file)
            defer { try? FileManager.default.removeItem(at: file) }
            var expected = SeededBytes(seed: 7)
            #expect(try Data(contentsOf: file) == Data(expected.next(3000)))
        }
    }

    @Test func aStreamBodyRepeatedByA307AsksForANewStream() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/redirect-to?url=/post&status_code=307")
            let body = Data("streamed".utf8)

            let exhausted = RecordingDelegate()
            Self.session().makeTask(with: Self.request(url, method: "POST"), body: .stream(InputStream(data: body)), delegate: exhausted)
                .resume()
            #expect(try await exhausted.completion()?.code == .requestBodyStreamExhausted)
            #expect(exhausted.events == ["redirect 307 POST /post", "needNewBodyStream", "metrics 1", "complete -1021"])

            let replaced = RecordingDelegate(newBodyStream: { InputStream(data: body) })
            Self.session().makeTask(with: Self.request(url, method: "POST"), body: .stream(InputStream(data: body)), delegate: replaced)
                .resume()
            #expect(try await replaced.completion() == nil)
            let echo = try JSONSerialization.jsonObject(with: replaced.data) as? [String: Any]
            #expect(echo?["data"] as? String == "streamed")
        }
    }

    @Test func aCancellingDispositionEndsTheTaskAsCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate(disposition: .cancel)
            Self.session().makeTask(with: Self.request(server.url("/bytes/10")), delegate: delegate).resume()
            #expect(try await delegate.completion()?.code == .cancelled)
            #expect(delegate.events == ["response 200", "metrics 1", "complete -999"])
        }
    }

    @Test func cancelDuringTheExchangeCompletesOnceAsCancelled() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let delegate = RecordingDelegate()
            let task = Self.session().makeTask(with: Self.request(server.url("/hold/never")), delegate: delegate)
            task.resume()
            task.cancel()
            task.cancel()
            #expect(try await delegate.completion()?.code == .cancelled)
            // Cancelled before any response: the exchange it stopped is the one transaction.
            #expect(delegate.events == ["metrics 1", "complete -999"])
            #expect(delegate.metrics?.transactionMetrics.first?.response == nil)
        }
    }

    @Test func aFailedConnectionCompletesWithURLSessionsCode() async throws {
        let delegate = RecordingDelegate()
        // Port 1 on loopback: nothing listens there.
        Self.session().makeTask(with: Self.request(URL(string: "http://127.0.0.1:1/")!), delegate: delegate).resume()
        #expect(try await delegate.completion()?.code == .cannotConnectToHost)
        // The refused connection is one transaction, with its start and no response, as URLSession reports it.
        #expect(delegate.events == ["metrics 1", "complete -1004"])
        let transaction = try #require(delegate.metrics?.transactionMetrics.first)
        #expect(transaction.response == nil && transaction.fetchStartDate != nil && transaction.resourceFetchType == .networkLoad)
        #expect(transaction.request.url?.absoluteString == "http://127.0.0.1:1/")
    }
}
