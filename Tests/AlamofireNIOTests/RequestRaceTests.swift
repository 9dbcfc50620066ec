import Foundation
import HTTPBinServer
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests driven from several threads at once, and the corners of their life: events stay in the
/// order the request decided them, nothing is left behind, and every waiter ends.
@Suite struct RequestRaceTests {
    /// A cancel racing the first resume: each request's monitor hears its events in a possible
    /// order, the request ends cancelled or loaded, and the session lets every request go.
    @Test func cancelsRacingResumesKeepEventsInOrderAndLeaveNoRequestBehind() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session(startRequestsImmediately: false, eventMonitors: [])
            let requests = (0..<100).map { _ in
                let monitor = RecordingMonitor()
                return (session.request(server.url("/get")).eventMonitor(monitor), monitor)
            }
            DispatchQueue.concurrentPerform(iterations: requests.count * 2) { index in
                let request = requests[index / 2].0
                if index.isMultiple(of: 2) { request.resume() } else { request.cancel() }
            }
            for (request, monitor) in requests {
                let response = try await withTimeout { await request.serializingData().response }
                #expect(response.error == nil || response.error?.isExplicitlyCancelledError == true)
                #expect(request.state == (response.error == nil ? .finished : .cancelled))
                let events = await monitor.events
                func position(_ event: String) -> Int? { events.firstIndex(of: event) }
                if let cancel = position("didCancelTask") {
                    #expect(position("didCreateTask").map { $0 < cancel } == true, "\(events)")
                }
                if let resumed = position("didResumeTask"), let completed = events.firstIndex(where: { $0.hasPrefix("didCompleteTask") }) {
                    #expect(resumed < completed, "\(events)")
                }
                #expect(events.filter { $0 == "requestDidFinish" }.count == 1, "\(events)")
                #expect(request.tasks.count <= 1)
            }
            let remaining = try await completion { done in session.withAllRequests { done($0.count) } }
            #expect(remaining == 0)
        }
    }

    /// A validator chained once stays for every attempt: a retry a serializer asked for is
    /// validated too.
    @Test func aRetryASerializerAskedForIsValidated() async throws {
        struct Echo: Decodable, Sendable { let url: String }
        try await HTTPBinServer.withServer { server async throws in
            let attempts = Collected<String>()
            // The first attempt gets text (which fails to decode), the second a 500.
            let adapter = Adapter { request, state, completion in
                var adapted = request
                adapted.url = server.url(attempts.values.isEmpty ? "/robots.txt" : "/status/500")
                attempts.append(adapted.url!.path)
                completion(.success(adapted))
            }
            let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
            let request = AF.request(server.url("/get"), interceptor: Interceptor(adapters: [adapter], retriers: [retrier])).validate()
            let response = try await withTimeout { await request.serializingDecodable(Echo.self).response }
            #expect(attempts.values == ["/robots.txt", "/status/500"])
            #expect(response.response?.statusCode == 500)
            #expect(response.error?.responseCode == 500)
            #expect(response.error?.isResponseValidationError == true)
        }
    }

    /// Streams made after a request ended cancelled end at once.
    @Test func streamsOfACancelledRequestEnd() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let cancelled = AF.request(server.url("/hold/never")).cancel()
            _ = try await withTimeout { await cancelled.serializingData().response }
            let responses = try await withTimeout {
                var count = 0
                for await _ in cancelled.httpResponses() { count += 1 }
                for await _ in cancelled.downloadProgress() { count += 1 }
                return count
            }
            #expect(responses == 0)
        }
    }

    /// Modifiers chained after the first response handler still apply: set-up runs on the root
    /// queue after the statement, as in Alamofire. The root queue is held while the statement runs,
    /// so a preempted calling thread cannot let set-up overtake the statement (as it could, in
    /// Alamofire too, on a crowded machine).
    @Test func modifiersChainedAfterTheFirstHandlerApply() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let statuses = Collected<Int>()
            let rootQueue = DispatchQueue(label: "tests.held-root")
            let session = Session(rootQueue: rootQueue)
            rootQueue.suspend()
            let request = session.request(server.url("/get"))
                .response(queue: testQueue) { statuses.append($0.response?.statusCode ?? 0) }
                .adapt(
                    using: Adapter { request, _, completion in
                        var adapted = request
                        adapted.setValue("late", forHTTPHeaderField: "X-Adapted")
                        completion(.success(adapted))
                    }
                )
                .eventMonitor(monitor)
            rootQueue.resume()
            let echoed = try await withTimeout { try await request.serializingDecodable(HTTPBinResponse.self).value }
            #expect(echoed.headers["X-Adapted"] == "late")
            #expect(await monitor.events.prefix(3) == ["requestDidResume", "didCreateInitialURLRequest", "didAdaptInitialRequest"])
        }
    }

    /// Too many redirects: the last redirect is the response, and no `onHTTPResponse` handler is
    /// asked about it (URLSession never offers it).
    @Test func tooManyRedirectsAskNoResponseHandler() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let asked = Collected<Int>()
            let request = AF.request(server.url("/redirect/17")).onHTTPResponse { response in asked.append(response.statusCode) }
            let response = try await withTimeout { await request.serializingData().response }
            #expect((response.error?.underlyingError as? URLError)?.code == .httpTooManyRedirects)
            #expect(response.response?.statusCode == 302)
            #expect(asked.values.isEmpty)
        }
    }

    /// With a serialization queue of the user's own, the monitors still hear of the finish before
    /// the parse, and completions meant for that queue run on it after a retrier declined.
    @Test func aCustomSerializationQueueKeepsOrderAndItsCompletions() async throws {
        struct Missing: Decodable, Sendable { let missing: String }
        let key = DispatchSpecificKey<String>()
        let serializationQueue = DispatchQueue(label: "tests.serialization")
        serializationQueue.setSpecific(key: key, value: "serialization")
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(serializationQueue: serializationQueue, eventMonitors: [monitor])
            let retrier = Retrier { _, _, _, completion in completion(.doNotRetry) }
            let request = session.request(server.url("/get"), interceptor: retrier)
            let onQueue: Bool = try await completion { done in
                request.responseDecodable(of: Missing.self, queue: serializationQueue) { _ in
                    done(DispatchQueue.getSpecific(key: key) == "serialization")
                }
            }
            #expect(onQueue)
            let events = await monitor.events
            let finished = try #require(events.firstIndex(of: "requestDidFinish"))
            let parsed = try #require(events.firstIndex { $0.hasPrefix("didParseResponse") })
            #expect(finished < parsed)
        }
    }

    /// A download cancelled as its file is handed over moves nothing and leaves no file.
    @Test func aCancelledDownloadMovesNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("race-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destinationURL = directory.appendingPathComponent("file")
        let session = Session(startRequestsImmediately: false)
        let request = session.download("http://127.0.0.1:1/", to: { _, _ in (destinationURL, [.createIntermediateDirectories]) })
        request.cancel()
        let location = FileManager.default.temporaryDirectory.appendingPathComponent("race-\(UUID())")
        try Data("body".utf8).write(to: location)
        request.didFinishDownloading(
            using: session.loading.makeTask(with: URLRequest(url: location), delegate: SessionDelegate()), to: location,
            fileManager: .default)
        #expect(!FileManager.default.fileExists(atPath: location.path))
        #expect(!FileManager.default.fileExists(atPath: destinationURL.path))
        #expect(request.fileURL == nil)
    }

    /// An upload whose convertible makes a new file per attempt leaves none behind after a retry.
    @Test func aRetriedUploadRemovesEachAttemptsFile() async throws {
        final class FreshFile: UploadableConvertible, Sendable {
            let made = Collected<URL>()
            func createUploadable() throws -> UploadRequest.Uploadable {
                let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID())")
                try Data("payload".utf8).write(to: url)
                made.append(url)
                return .file(url, shouldRemove: true)
            }
        }
        try await HTTPBinServer.withServer { server async throws in
            let file = FreshFile()
            let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
            let convertible = ParameterlessUploadConvertible(
                request: try URLRequest(url: server.url("/status/500"), method: .post), uploadable: file)
            let request = AF.upload(convertible, interceptor: retrier).validate()
            let response = try await withTimeout { await request.serializingData().response }
            #expect(response.response?.statusCode == 500)
            // The last attempt's file goes once serialization has ended, which may come after the
            // handler above has run: wait for it.
            try await untilFinished(request)
            #expect(file.made.values.count == 2)
            #expect(file.made.values.allSatisfy { !FileManager.default.fileExists(atPath: $0.path) })
        }
    }
}
