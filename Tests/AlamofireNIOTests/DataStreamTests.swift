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

/// `DataStreamRequest` as Alamofire documents it: every handler and serializer, the four ways to
/// cancel, validation, the async streams, `asInputStream`, and back-pressure.
@Suite struct DataStreamTests {
    static let queue = DispatchQueue(label: "tests.streams")

    struct Line: Decodable, Sendable, Equatable {
        let id: Int
        let url: String
    }

    struct Thrown: Error {}

    /// Adds a handler with `add` and returns every event it got, once the completion came.
    static func events<Success: Sendable, Failure: Error>(
        seconds: Int = 30, _ add: @escaping @Sendable (@escaping DataStreamRequest.Handler<Success, Failure>) -> Void
    ) async throws -> [DataStreamRequest.Stream<Success, Failure>] {
        try await withTimeout(seconds: seconds) {
            await withCheckedContinuation { continuation in
                let collected = Collected<DataStreamRequest.Stream<Success, Failure>>()
                add { stream in
                    collected.append(stream)
                    if stream.completion != nil { continuation.resume(returning: collected.values) }
                }
            }
        }
    }

    @Test func dataArrivesInOrderThenOneCompletion() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/stream-bytes/300000?seed=7&chunk_size=10000")
            let expected = try await keepAlive(Session()).request(url).serializingData().value
            let events = try await Self.events { handler in
                keepAlive(Session()).streamRequest(url).responseStream(on: Self.queue, stream: handler)
            }
            #expect(events.dropLast().allSatisfy { $0.completion == nil && $0.value != nil })
            #expect(Data(events.compactMap(\.value).joined()) == expected)
            let completion = try #require(events.last?.completion)
            #expect(completion.response?.statusCode == 200)
            #expect(completion.error == nil)
            #expect(completion.request?.url == url)
            #expect(completion.metrics?.transactionMetrics.count == 1)
        }
    }

    @Test func stringsAndDecodables() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let strings = try await Self.events { handler in
                keepAlive(Session()).streamRequest(server.url("/stream/3")).responseStreamString(on: Self.queue, stream: handler)
            }
            let lines = strings.compactMap(\.value).joined().split(separator: "\n")
            #expect(try lines.map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)).id } == [0, 1, 2])
            let decoded = try await Self.events { handler in
                keepAlive(Session()).streamRequest(server.url("/stream/1")).responseStreamDecodable(
                    of: Line.self, on: Self.queue, stream: handler)
            }
            #expect(decoded.compactMap(\.value) == [Line(id: 0, url: server.url("/stream/1").absoluteString)])
            #expect(decoded.last?.completion?.error == nil)
        }
    }

    @Test func aSerializerFailureIsAnEventUnlessItCancels() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/bytes/64?seed=1")
            let kept = try await Self.events { handler in
                keepAlive(Session()).streamRequest(url).responseStreamDecodable(of: Line.self, on: Self.queue, stream: handler)
            }
            let failure = try #require(kept.first?.error)
            guard case .responseSerializationFailed(.decodingFailed) = failure else { throw failure }
            #expect(kept.last?.completion?.error == nil)
            let cancelled = try await Self.events { handler in
                keepAlive(Session()).streamRequest(url, automaticallyCancelOnStreamError: true)
                    .responseStreamDecodable(of: Line.self, on: Self.queue, stream: handler)
            }
            #expect(cancelled.first?.error?.isResponseSerializationError == true)
            #expect(cancelled.last?.completion?.error?.isExplicitlyCancelledError == true)
        }
    }

    @Test func aThrowingHandlerFailsAndCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await Self.events(seconds: 15) { (handler: @escaping DataStreamRequest.Handler<Data, Never>) in
                keepAlive(Session()).streamRequest(server.url("/range/20?chunk_size=1&hold=rest&hold_at=5")).responseStream(on: Self.queue)
                { stream in
                    try handler(stream)
                    if stream.value != nil { throw Thrown() }
                }
            }
            // Chunks already handed over before the cancel took effect are still delivered, as in
            // Alamofire; the held rest of the body is not waited for.
            #expect((1...5).contains(events.filter { $0.value != nil }.count))
            let error = try #require(events.last?.completion?.error)
            guard case .responseSerializationFailed(.customSerializationFailed(let thrown)) = error else { throw error }
            #expect(thrown is Thrown)
        }
    }

    @Test func cancellingFromTheHandlerAndFromOutside() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/range/20?chunk_size=1&hold=rest&hold_at=5")
            let fromHandler = try await Self.events(seconds: 15) { (handler: @escaping DataStreamRequest.Handler<Data, Never>) in
                keepAlive(Session()).streamRequest(url).responseStream(on: Self.queue) { stream in
                    try handler(stream)
                    if stream.value != nil { stream.cancel() }
                }
            }
            #expect(fromHandler.last?.completion?.error?.isExplicitlyCancelledError == true)
            let request = Mutex<DataStreamRequest?>(nil)
            let fromOutside = try await Self.events(seconds: 15) { (handler: @escaping DataStreamRequest.Handler<Data, Never>) in
                let made = keepAlive(Session()).streamRequest(url).responseStream(on: Self.queue) { stream in
                    try handler(stream)
                    if stream.value != nil { DispatchQueue.global().async { request.withLock { $0 }?.cancel() } }
                }
                request.withLock { $0 = made }
            }
            #expect(fromOutside.last?.completion?.error?.isExplicitlyCancelledError == true)
            #expect(request.withLock { $0 }?.isCancelled == true)
        }
    }

    @Test func validationRunsOnceTheStreamHasEnded() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            let failed = try await Self.events { handler in
                session.streamRequest(server.url("/status/404")).validate().responseStream(on: Self.queue, stream: handler)
            }
            let error = try #require(failed.last?.completion?.error)
            guard case .responseValidationFailed(.unacceptableStatusCode(404)) = error else { throw error }
            let passed = try await Self.events { handler in
                session.streamRequest(server.url("/stream-bytes/1000")).validate(statusCode: [200])
                    .validate(contentType: ["application/octet-stream"]).responseStream(on: Self.queue, stream: handler)
            }
            #expect(passed.last?.completion?.error == nil)
            // The 404's status check fails, so its content-type check is skipped, as in Alamofire.
            #expect(await monitor.events.filter { $0 == "didValidateStream" }.count == 3)
        }
    }

    /// Alamofire's order for a validated stream: URLSession's events as the body arrives, then the
    /// validators once the task has completed.
    @Test func theEventsOfAValidatedStream() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = RecordingMonitor()
            let session = Session(eventMonitors: [monitor])
            _ = try await Self.events { handler in
                session.streamRequest(server.url("/stream-bytes/1000")).validate().responseStream(on: Self.queue, stream: handler)
            }
            #expect(
                await monitor.events
                    == EventSequenceTests.setUp + EventSequenceTests.loaded()
                    + ["didValidateStream", "didValidateStream", "didCompleteTask ok", "requestDidFinish"])
        }
    }

    @Test func asyncStreamsOfDataStringsAndDecodables() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // Chunks are yielded on the thread that reads them. Out of order, or after the completion
            // (which finishes the stream, so a later chunk would be dropped), the data would differ.
            let url = server.url("/stream-bytes/2000000?seed=5")
            let expected = try await keepAlive(Session()).request(url).serializingData().value
            let data = try await withTimeout {
                var data = Data()
                var completions = 0
                for await stream in keepAlive(Session()).streamRequest(url).streamTask().streamingData() {
                    if let chunk = stream.value { data.append(chunk) }
                    if stream.completion != nil { completions += 1 }
                }
                return (data, completions)
            }
            #expect(expected.count == 2_000_000)
            #expect(data.0 == expected && data.1 == 1)
            let lines = try await withTimeout {
                var values: [Line] = []
                for await stream in keepAlive(Session()).streamRequest(server.url("/stream/1")).streamTask().streamingDecodables(Line.self)
                {
                    if let value = stream.value { values.append(value) }
                }
                return values
            }
            #expect(lines.map(\.id) == [0])
            let text = try await withTimeout {
                var text = ""
                for await stream in keepAlive(Session()).streamRequest(server.url("/stream/2")).streamTask().streamingStrings() {
                    text += stream.value ?? ""
                }
                return text
            }
            #expect(text.split(separator: "\n").count == 2)
        }
    }

    @Test func leavingAnAsyncStreamOrCancellingItsTaskCancelsTheRequest() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/range/20?chunk_size=1&hold=rest&hold_at=5")
            let left = keepAlive(Session()).streamRequest(url)
            try await withTimeout(seconds: 15) {
                for await stream in left.streamTask().streamingData() where stream.value != nil { break }
            }
            try await untilFinished(left)
            #expect(left.isCancelled && left.error?.isExplicitlyCancelledError == true)

            let fromTask = keepAlive(Session()).streamRequest(url)
            let started = AsyncStream<Void>.makeStream()
            let task = Task {
                for await stream in fromTask.streamTask().streamingData() where stream.value != nil { started.continuation.yield() }
            }
            for await _ in started.stream { break }
            task.cancel()
            try await untilFinished(fromTask)
            #expect(fromTask.isCancelled)

            // Without automatic cancellation the request goes on.
            let kept = keepAlive(Session()).streamRequest(server.url("/stream-bytes/5000"))
            try await withTimeout {
                for await stream in kept.streamTask().streamingData(automaticallyCancelling: false) where stream.value != nil { break }
            }
            try await untilFinished(kept)
            #expect(!kept.isCancelled && kept.error == nil)
        }
    }

    @Test func anInputStreamReadsTheWholeBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/stream-bytes/200000?seed=3&chunk_size=7000")
            let expected = try await keepAlive(Session()).request(url).serializingData().value
            let stream = try #require(keepAlive(Session()).streamRequest(url).asInputStream(bufferSize: 4096))
            let shared = UncheckedSendable(stream)
            let read = try await withTimeout {
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        let stream = shared.value
                        stream.open()
                        var data = Data()
                        var buffer = [UInt8](repeating: 0, count: 3000)
                        while true {
                            let count = stream.read(&buffer, maxLength: buffer.count)
                            if count <= 0 { break }
                            data.append(buffer, count: count)
                        }
                        stream.close()
                        continuation.resume(returning: UncheckedSendable(data))
                    }
                }
            }
            #expect(read.value == expected)
            #expect(stream.streamStatus == .closed)
        }
    }

    @Test func anInputStreamOfAFailedRequestEndsWithItsError() async throws {
        let stream = try #require(keepAlive(Session()).streamRequest("http://127.0.0.1:1/nothing").asInputStream())
        let shared = UncheckedSendable(stream)
        let count = try await withTimeout {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    let stream = shared.value
                    stream.open()
                    var buffer = [UInt8](repeating: 0, count: 16)
                    continuation.resume(returning: stream.read(&buffer, maxLength: 16))
                }
            }
        }
        #expect(count == -1)
        #expect(stream.streamStatus == .error)
        #expect((stream.streamError as? AFError)?.isSessionTaskError == true)
    }

    /// A handler that falls behind stops the reads: the loading task waits with at most about
    /// `maximumBufferedBytes` handed over, far from the whole body, then goes on once it catches up.
    @Test func aSlowHandlerHoldsTheSocketBack() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let total = 32 << 20
            let gate = DispatchSemaphore(value: 0)
            // A failed wait must not leave the handler holding the suite's queue.
            defer { gate.signal() }
            let received = Mutex(0)
            // Every chunk handed to the request, as Alamofire's monitors see it.
            let monitorQueue = DispatchQueue(label: "DataStreamTests.monitor")
            let loaded = Mutex(0)
            let monitor = ClosureEventMonitor(queue: monitorQueue)
            monitor.dataTaskDidReceiveData = { _, _, data in loaded.withLock { $0 += data.count } }
            let request = keepAlive(Session(eventMonitors: [monitor]))
                .streamRequest(server.url("/stream-bytes/\(total)?chunk_size=65536"))
            let completion = Task {
                try await Self.events { handler in
                    request.responseStream(on: Self.queue) { stream in
                        if let chunk = stream.value {
                            if received.withLock({ $0 }) == 0 { _ = gate.wait(timeout: .now() + 30) }
                            received.withLock { $0 += chunk.count }
                        }
                        try handler(stream)
                    }
                }
            }
            let awaitingDemand = OneTimeSignal()
            request.whenAwaitingDemand { awaitingDemand.fire() }
            try await withTimeout { try await awaitingDemand.wait() }
            #expect(request.isAwaitingDemand)
            // What the transport took from the socket (counted as it comes off the channel; a
            // stream's `downloadProgress` does not move, as in Alamofire).
            let readWhileStuck = request.task?.countOfBytesReceived ?? -1
            #expect(readWhileStuck > 0 && readWhileStuck < 8 << 20, "\(readWhileStuck) bytes read while the handler was stuck")
            gate.signal()
            let events = try await completion.value
            #expect(events.last?.completion?.error == nil)
            #expect(received.withLock { $0 } == total)
            #expect(request.task?.countOfBytesReceived == Int64(total))
            // Twice: a batch of events running when the first is queued re-dispatches what arrived
            // meanwhile behind it.
            monitorQueue.sync {}
            #expect(monitorQueue.sync { loaded.withLock { $0 } } == total)
            #expect(request.downloadProgress.completedUnitCount == 0 && request.downloadProgress.totalUnitCount == 0)
        }
    }

    /// Each iteration of one async stream gets every chunk, as Alamofire registers a handler per iteration.
    @Test func twoIterationsOfOneStreamEachGetTheWholeBody() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let url = server.url("/stream-bytes/50000?seed=9")
            let expected = try await keepAlive(Session()).request(url).serializingData().value
            let request = keepAlive(Session(startRequestsImmediately: false)).streamRequest(url)
            let stream = request.streamTask().streamingData()
            let (a, b) = try await withTimeout {
                var first = stream.makeAsyncIterator()
                var second = stream.makeAsyncIterator()
                request.resume()
                var a = Data()
                while let event = await first.next() { a.append(event.value ?? Data()) }
                var b = Data()
                while let event = await second.next() { b.append(event.value ?? Data()) }
                return (a, b)
            }
            #expect(a == expected)
            #expect(b == expected)
        }
    }

    /// An `InputStream` asked for once the request is over ends at once instead of blocking its reader.
    @Test func anInputStreamAskedForAfterTheEndEndsAtOnce() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session()).streamRequest(server.url("/stream-bytes/100"))
            _ = try await Self.events { handler in request.responseStream(on: Self.queue, stream: handler) }
            try await untilFinished(request)
            let stream = UncheckedSendable(try #require(request.asInputStream()))
            let count = try await withTimeout(seconds: 5) {
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        stream.value.open()
                        var buffer = [UInt8](repeating: 0, count: 16)
                        continuation.resume(returning: stream.value.read(&buffer, maxLength: 16))
                    }
                }
            }
            #expect(count == 0)
        }
    }

    /// A handler that throws replaces the request's error with its own, as Alamofire's `capturingError`
    /// does: here the decoding failure, not the cancellation it caused.
    @Test func aThrowingHandlersErrorReplacesTheCancellation() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let events = try await Self.events { (handler: @escaping DataStreamRequest.Handler<Line, AFError>) in
                keepAlive(Session()).streamRequest(server.url("/bytes/64?seed=1"), automaticallyCancelOnStreamError: true)
                    .responseStreamDecodable(of: Line.self, on: Self.queue) { stream in
                        try handler(stream)
                        if let error = stream.error { throw error }
                    }
            }
            let error = try #require(events.last?.completion?.error)
            guard case .responseSerializationFailed(.decodingFailed) = error else { throw error }
        }
    }
}
