import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

@testable import AlamofireNIO

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire 5.12's request lifecycle API, used as Alamofire's users use it.
@Suite struct LifecycleParityTests {
    // MARK: Starting

    @Test func shouldAutomaticallyResumeOverridesTheSession() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let manual = keepAlive(Session()).request(server.url("/get"), shouldAutomaticallyResume: false)
            let task = manual.serializingData()
            #expect(manual.state == .initialized)
            #expect(manual.task == nil && manual.requests.isEmpty)  // lazy: nothing is set up before the resume
            manual.resume()
            #expect(try await withTimeout { await task.response }.response?.statusCode == 200)

            let automatic = keepAlive(Session(startRequestsImmediately: false)).request(server.url("/get"), shouldAutomaticallyResume: true)
            #expect(try await withTimeout { await automatic.serializingData().response }.response?.statusCode == 200)
        }
    }

    /// Resumes and suspends from many threads at once: the request is loaded once and finishes once.
    @Test func racingResumesAndSuspendsLoadOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session(startRequestsImmediately: false)).request(server.url("/get"))
            let completions = Collected<Int>()
            request.response(queue: testQueue) { completions.append($0.response?.statusCode ?? 0) }
            DispatchQueue.concurrentPerform(iterations: 200) { index in
                if index.isMultiple(of: 2) { request.resume() } else { request.suspend() }
            }
            request.resume()
            _ = try await withTimeout { await request.serializingData().response }
            let drained: Void = try await completion { done in testQueue.async { done(()) } }
            _ = drained
            #expect(completions.values == [200])
            #expect(request.tasks.count == 1)
            #expect(request.task?.state == .completed)
        }
    }

    // MARK: Per-request interceptors

    @Test func aRequestsInterceptorsRunAfterTheSessions() async throws {
        try await HTTPBinServer.withServer { server async throws in
            func tagging(_ tag: String) -> Adapter {
                Adapter { urlRequest, _, completion in
                    var urlRequest = urlRequest
                    let existing = urlRequest.value(forHTTPHeaderField: "X-Order").map { $0 + "," } ?? ""
                    urlRequest.setValue(existing + tag, forHTTPHeaderField: "X-Order")
                    completion(.success(urlRequest))
                }
            }
            let retries = Collected<String>()
            let session = Session(interceptor: tagging("session"))
            let request = session.request(server.url("/status/503"))
                .adapt(using: tagging("adapter"))
                .interceptor(tagging("interceptor"))
                .retry(
                    using: Retrier { request, _, _, completion in
                        retries.append("retrier")
                        completion(request.retryCount == 0 ? .retry : .doNotRetry)
                    }
                )
                .validate()
            let response = try await withTimeout { await request.serializingData().response }
            #expect(response.error?.responseCode == 503)
            #expect(request.retryCount == 1)
            #expect(request.lastRequest?.value(forHTTPHeaderField: "X-Order") == "session,adapter,interceptor")
            // Asked after each failed load, then once more by the serializer (as Alamofire asks).
            #expect(retries.values == ["retrier", "retrier", "retrier"])
        }
    }

    @Test func bodyDataInAGETMadeByAnAdapterIsRefused() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let adapter = Adapter { urlRequest, _, completion in
                var urlRequest = urlRequest
                urlRequest.httpBody = Data("body".utf8)
                completion(.success(urlRequest))
            }
            let response = try await withTimeout { await AF.request(server.url("/get"), interceptor: adapter).serializingData().response }
            guard case .requestAdaptationFailed(let error) = response.error,
                case .urlRequestValidationFailed(.bodyDataInGETRequest(let body)) = error as? AFError
            else { throw Unexpected(response.error) }
            #expect(body == Data("body".utf8))
        }
    }

    @Test func aSerializerFailureAsksTheRetriers() async throws {
        struct Missing: Decodable, Sendable { let missing: String }
        try await HTTPBinServer.withServer { server async throws in
            let seen = Collected<Bool>()
            let retrier = Retrier { request, _, error, completion in
                seen.append(error.asAFError?.isResponseSerializationError == true)
                completion(request.retryCount == 0 ? .retry : .doNotRetry)
            }
            let request = AF.request(server.url("/get"), interceptor: retrier)
            let response = try await withTimeout { await request.serializingDecodable(Missing.self).response }
            #expect(response.error?.isResponseSerializationError == true)
            #expect(request.retryCount == 1)
            #expect(request.tasks.count == 2)
            #expect(seen.values == [true, true])
        }
    }

    // MARK: Tasks and handlers

    @Test func tasksMirrorTheirLoads() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let created = Collected<Int>()
            let urlRequests = Collected<String>()
            let request = AF.request(server.url("/redirect/1"))
                .onURLSessionTaskCreation(on: testQueue) { created.append($0.taskIdentifier) }
                .onURLRequestCreation(on: testQueue) { urlRequests.append($0.url?.path ?? "") }
            _ = try await withTimeout { await request.serializingData().response }
            let drained: Void = try await completion { done in testQueue.async { done(()) } }
            _ = drained
            let task = try #require(request.task as? URLSessionDataTask)
            #expect(created.values == [task.taskIdentifier])
            #expect(urlRequests.values == ["/redirect/1"])
            #expect(task.state == .completed)
            #expect(task.originalRequest?.url?.path == "/redirect/1")
            #expect(task.currentRequest?.url?.path == "/get")
            #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
            #expect(task.countOfBytesReceived == Int64(request.data?.count ?? -1))
            #expect(task.error == nil)
            #expect(request.performedRequests.map { $0.url?.path } == ["/get"])
            #expect(request.description == "GET \(server.url("/get").absoluteString) (200)")
            #expect(!(request.task is URLSessionUploadTask))
            let upload = AF.upload(Data("x".utf8), to: server.url("/post"))
            _ = try await withTimeout { await upload.serializingData().response }
            #expect(upload.task is URLSessionUploadTask)
            #expect(try #require(upload.task).taskIdentifier > 0)
        }
    }

    /// URLSession hands a data task its response before any of its data, and Alamofire counts its
    /// progress as it appends the data. With an `onHTTPResponse` handler the body streams in after
    /// the head, and every `downloadProgress` handler sees the response and at least the data it
    /// counts. (Without one, the body is collected with its head, and progress comes before both.)
    @Test func withAResponseHandlerProgressComesAfterTheResponseAndItsData() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let seen = Collected<String>()
            let request = AF.request(server.url("/range/300000?chunk_size=1000")).onHTTPResponse(on: testQueue) { _ in }
            request.downloadProgress(queue: testQueue) { progress in
                let data = request.data?.count ?? 0
                seen.append("\(request.response?.statusCode ?? 0) \(progress.totalUnitCount) \(Int64(data) >= progress.completedUnitCount)")
            }
            let response = try await withTimeout { await request.serializingData().response }
            #expect(response.data?.count == 300_000)
            #expect(!seen.values.isEmpty)
            #expect(Set(seen.values) == ["200 300000 true"])
            #expect(request.downloadProgress.completedUnitCount == 300_000)
        }
    }

    /// A redirect the redirect handler declines is the response, its body the data, whether the body
    /// is collected or (with an `onHTTPResponse` handler) streamed.
    @Test func aDeclinedRedirectsBodyIsTheDataWithAResponseHandlerToo() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/redirect-to?url=/get&status_code=302&body=moved")
            let collected = try await withTimeout {
                await AF.request(url).redirect(using: .doNotFollow).serializingData().response
            }
            let statuses = Collected<Int>()
            let streamed = try await withTimeout {
                await AF.request(url).redirect(using: .doNotFollow).onHTTPResponse(on: testQueue) { statuses.append($0.statusCode) }
                    .serializingData().response
            }
            #expect(collected.response?.statusCode == 302)
            #expect(streamed.response?.statusCode == 302)
            #expect(statuses.values == [302])
            #expect(collected.data == Data("moved".utf8))
            #expect(streamed.data == collected.data)
            #expect(streamed.error == nil)
        }
    }

    /// `.cancel` stops the body: a response whose body is held after its first byte ends at once.
    @Test func onHTTPResponseCancelStopsTheBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let statuses = Collected<Int>()
            let request = AF.request(server.url("/range/8?hold=rest&hold_at=1")).onHTTPResponse(on: testQueue) { response, decide in
                statuses.append(response.statusCode)
                decide(.cancel)
            }
            let response = try await withTimeout { await request.serializingData().response }
            // The body was not read to its end (the server holds all but its first byte).
            #expect((request.task?.countOfBytesReceived ?? 8) < 8)
            #expect(statuses.values == [200])
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(request.state == .cancelled)
            #expect(response.data == nil)
        }
    }

    @Test func asyncResponseHandlersAndStreams() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let heard = Collected<Int>()
            let allowed = AF.request(server.url("/get")).onHTTPResponse { response async in heard.append(response.statusCode) }
            #expect(try await withTimeout { await allowed.serializingData().response }.value?.isEmpty == false)
            #expect(heard.values == [200])

            let refused = AF.request(server.url("/get")).onHTTPResponse { _ async -> Request.ResponseDisposition in .cancel }
            #expect(try await withTimeout { await refused.serializingData().response }.error?.isExplicitlyCancelledError == true)

            let streamed = AF.request(server.url("/bytes/2000"))
            // A stream's handler registers when its iterator is made: all before the request starts
            // (with its serializer); each buffers what comes and ends once the request has finished.
            let (gotStatuses, gotPaths, gotCommands, gotFractions, gotTasks) = try await withTimeout {
                var responses = streamed.httpResponses().makeAsyncIterator()
                var urlRequests = streamed.urlRequests().makeAsyncIterator()
                var curls = streamed.cURLDescriptions().makeAsyncIterator()
                var progress = streamed.downloadProgress().makeAsyncIterator()
                var tasks = streamed.urlSessionTasks().makeAsyncIterator()
                _ = await streamed.serializingData().response
                var (statuses, paths, commands, fractions, taskCount) = ([Int](), [String](), [String](), [Double](), 0)
                while let response = await responses.next() { statuses.append(response.statusCode) }
                while let request = await urlRequests.next() { paths.append(request.url?.path ?? "") }
                while let command = await curls.next() { commands.append(command) }
                while let fraction = await progress.next() { fractions.append(fraction.fractionCompleted) }
                while await tasks.next() != nil { taskCount += 1 }
                return (statuses, paths, commands, fractions, taskCount)
            }
            #expect(gotStatuses == [200])
            #expect(gotPaths == ["/bytes/2000"])
            #expect(gotCommands.count == 1 && gotCommands.first?.hasPrefix("$ curl -v") == true)
            #expect(gotFractions.last == 1)
            #expect(gotTasks == 1)
        }
    }

    // MARK: Cancelling

    @Test func cancelAllRequestsCancelsWhatRuns() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let request = session.request(server.url("/hold/never"))
            let task = request.serializingData()
            try await untilTaskCreated(request)
            let seen: Set<Request> = try await completion { done in session.withAllRequests { done($0) } }
            #expect(seen == [request])
            let cancelled: Void = try await completion { done in session.cancelAllRequests(completingOnQueue: testQueue) { done(()) } }
            _ = cancelled
            #expect(try await withTimeout { await task.response }.error?.isExplicitlyCancelledError == true)
        }
    }

    /// The async APIs cancel the request with the awaiting task (5.12's default), in a task group too.
    @Test func cancellingTheAwaitingTaskCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = AF.request(server.url("/hold/never"))
            let awaiting = Task { await request.serializingData().response }
            try await untilTaskCreated(request)
            awaiting.cancel()
            #expect(try await withTimeout { await awaiting.value }.error?.isExplicitlyCancelledError == true)

            let second = AF.request(server.url("/hold/never"))
            let errors = await withTaskGroup(of: AFError?.self) { group in
                group.addTask { await second.serializingString().response.error }
                try? await untilTaskCreated(second)
                group.cancelAll()
                return await group.reduce(into: [AFError?]()) { $0.append($1) }
            }
            #expect(errors.count == 1 && errors[0]?.isExplicitlyCancelledError == true)
        }
    }

    // MARK: Redirect handlers

    @Test func redirectHandlersDecideEachHop() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let declined = try await withTimeout {
                await keepAlive(Session(redirectHandler: .doNotFollow)).request(server.url("/redirect/2")).serializingData().response
            }
            #expect(declined.response?.statusCode == 302)

            let hops = Collected<Int>()
            let modifying = Redirector.modify { _, request, response in
                hops.append(response.statusCode)
                var request = request
                request.setValue("yes", forHTTPHeaderField: "X-Redirected")
                return request
            }
            let session = Session(redirectHandler: .doNotFollow)
            let followed = try await withTimeout {
                await session.request(server.url("/redirect/2")).redirect(using: modifying).serializingDecodable(HTTPBinResponse.self)
                    .response
            }
            #expect(followed.value?.headers["X-Redirected"] == "yes")
            #expect(hops.values == [302, 302])
        }
    }

    // MARK: Local resources and failures

    @Test func fileAndDataURLsLoadAsURLSessionLoadsThem() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("local-\(UUID().uuidString).json")
        try Data(#"{"a":1}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let data = try await withTimeout { await AF.request(file).serializingData().response }
        #expect(data.value == Data(#"{"a":1}"#.utf8))
        #expect(data.response == nil)  // a plain URLResponse, which is not an HTTPURLResponse
        #expect(data.metrics?.transactionMetrics.map(\.resourceFetchType) == [.unknown])
        #expect(data.metrics?.transactionMetrics.first?.response?.mimeType == "application/json")

        let download = try await withTimeout { await AF.download(file).serializingData().response }
        #expect(download.value == Data(#"{"a":1}"#.utf8))
        if let url = download.fileURL { try? FileManager.default.removeItem(at: url) }

        let inline = try await withTimeout { await AF.request("data:text/plain;base64,SGVsbG8=").serializingString().response }
        #expect(inline.value == "Hello")
        let escaped = try await withTimeout { await AF.request("data:,a%20b").serializingString().response }
        #expect(escaped.value == "a b")

        let missing = try await withTimeout {
            await AF.request(file.appendingPathExtension("missing")).serializingData().response
        }
        #expect((missing.error?.underlyingError as? URLError)?.code == .fileDoesNotExist)
    }

    @Test func aRefusedConnectionHasMetricsWithOneTransaction() async throws {
        let response = try await withTimeout { await AF.request("http://127.0.0.1:1/").serializingData().response }
        #expect((response.error?.underlyingError as? URLError)?.code == .cannotConnectToHost)
        let metrics = try #require(response.metrics)
        #expect(metrics.transactionMetrics.count == 1)
        #expect(metrics.transactionMetrics.first?.response == nil)
        #expect(metrics.transactionMetrics.first?.fetchStartDate != nil)
    }

    // MARK: Values

    @Test func validationListsAcceptableTypesSorted() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let response = try await withTimeout {
                await AF.request(server.url("/json")).validate(contentType: ["text/plain", "application/xml", "image/png"])
                    .serializingData().response
            }
            #expect(response.error?.acceptableContentTypes == ["application/xml", "image/png", "text/plain"])
        }
    }

    @Test func interceptorFormsAndRetryResults() async throws {
        let adapter: Adapter = .adapter { request, _, completion in completion(.success(request)) }
        let retrier: Retrier = .retrier { _, _, _, completion in completion(.retryWithDelay(2)) }
        let fromClosures: Interceptor = .interceptor(
            adapter: { request, _, completion in completion(.success(request)) }, retrier: { _, _, _, c in c(.doNotRetry) })
        let fromValues: Interceptor = .interceptor(adapter: adapter, retrier: retrier)
        let combined = Interceptor(adapters: [adapter], retriers: [retrier], interceptors: [fromClosures])
        #expect(fromClosures.adapters.count == 1 && fromValues.retriers.count == 1)
        #expect(combined.adapters.count == 2 && combined.retriers.count == 2)
        #expect(RetryResult.retryWithDelay(2).delay == 2 && RetryResult.retry.retryRequired && !RetryResult.doNotRetry.retryRequired)
        #expect(RetryResult.doNotRetryWithError(URLError(.badURL)).error is URLError)
        #expect(AFError.explicitlyCancelled.downloadResumeData == nil)
        #expect((AFError.explicitlyCancelled as any Error).asAFError(orFailWith: "an AFError").isExplicitlyCancelledError)
        #expect(HTTPHeader.websocketProtocol("chat") == HTTPHeader(name: "Sec-WebSocket-Protocol", value: "chat"))
        let encoder = URLEncodedFormEncoder()
        encoder.allowedCharacters = .alphanumerics
        #expect(try encoder.encode(["k": "a-b"]) as String == "k=a%2Db")
        #expect(Empty.value == Empty())
    }

    struct Unexpected: Error {
        let error: AFError?
        init(_ error: AFError?) { self.error = error }
    }
}
