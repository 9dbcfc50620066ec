#if Combine
import AFSynchronization
import AlamofireNIO
import AlamofireNIOCombine
import Foundation
import HTTPBinServer
import Synchronization
import TestWaits
import Testing

#if canImport(Combine)
import Combine
#else
@preconcurrency import OpenCombine
#endif

/// Alamofire's Combine publishers, through OpenCombine on Linux: values, completion, cancellation.
@Suite struct CombineTests {
    /// Collects what a publisher sends.
    final class Recorder<Input: Sendable, Failure: Error>: Subscriber, Sendable {
        struct Received: Sendable {
            var values: [Input] = []
            var completion: Subscribers.Completion<Failure>?
        }

        var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }
        let received = Watched(Received())
        let subscription = Mutex<(any Subscription)?>(nil)
        let initialDemand: Subscribers.Demand

        init(initialDemand: Subscribers.Demand = .unlimited) {
            self.initialDemand = initialDemand
        }

        func receive(subscription: any Subscription) {
            self.subscription.withLock { $0 = subscription }
            subscription.request(initialDemand)
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            received.change { $0.values.append(input) }
            return .none
        }

        func receive(completion: Subscribers.Completion<Failure>) {
            received.change { $0.completion = completion }
        }

        var values: [Input] { received.value.values }
        var isComplete: Bool { received.value.completion != nil }

        /// Waits for the completion, for at most 10 s.
        func completion() async throws -> Subscribers.Completion<Failure>? {
            _ = await received.waitUntil { $0.completion != nil }
            return received.value.completion
        }
    }

    struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable { let author: String }
        let slideshow: Show
    }

    @Test func dataRequestPublishersPublishOneResponseThenFinish() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let decodable = Recorder<DataResponse<Slideshow, AFError>, Never>()
            session.request(server.url("/json")).publishDecodable(type: Slideshow.self, queue: .global()).subscribe(decodable)
            #expect(finished(try await decodable.completion()))
            #expect(decodable.values.count == 1)
            #expect(try decodable.values.first?.result.get().slideshow.author == "Yours Truly")

            let string = Recorder<DataResponse<String, AFError>, Never>()
            session.request(server.url("/robots.txt")).publishString(queue: .global()).subscribe(string)
            _ = try await string.completion()
            #expect(string.values.map(\.value) == ["User-agent: *\nDisallow: /deny\n"])

            let data = Recorder<DataResponse<Data, AFError>, Never>()
            session.request(server.url("/bytes/16?seed=3")).publishData(queue: .global()).subscribe(data)
            _ = try await data.completion()
            #expect(data.values.first?.value?.count == 16)

            let unserialized = Recorder<DataResponse<Data?, AFError>, Never>()
            session.request(server.url("/status/204")).publishUnserialized(queue: .global()).subscribe(unserialized)
            _ = try await unserialized.completion()
            #expect(unserialized.values.first?.response?.statusCode == 204)
        }
    }

    @Test func valueAndResultUnwrapTheResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let value = Recorder<String, AFError>()
            session.request(server.url("/status/404")).validate().publishString(queue: .global()).value().subscribe(value)
            guard case .failure(let error) = try await value.completion() else {
                Issue.record("a 404 did not fail")
                return
            }
            #expect(error.responseCode == 404)
            #expect(value.values.isEmpty)

            let result = Recorder<Result<String, AFError>, Never>()
            session.request(server.url("/robots.txt")).publishString(queue: .global()).result().subscribe(result)
            _ = try await result.completion()
            #expect(try result.values.first?.get() == "User-agent: *\nDisallow: /deny\n")
        }
    }

    @Test func cancellingTheSubscriptionCancelsTheRequestAndDropsItsResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let queue = DispatchQueue(label: "combine.responses")
            let request = session.request(server.url("/hold/never"))
            let recorder = Recorder<DataResponse<Data, AFError>, Never>()
            request.publishData(queue: queue).subscribe(recorder)
            recorder.subscription.withLock { $0 }?.cancel()
            // A handler added after the publisher's, on the same queue, runs after it.
            let later = try await completion(within: 30) { done in request.response(queue: queue) { done($0) } }
            #expect(later.error?.isExplicitlyCancelledError == true)
            #expect(recorder.values.isEmpty)
            #expect(!recorder.isComplete)
        }
    }

    @Test func downloadPublishersPublishTheFile() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let url = Recorder<DownloadResponse<URL, AFError>, Never>()
            session.download(server.url("/bytes/64?seed=1")).publishURL(queue: .global()).subscribe(url)
            _ = try await url.completion()
            let file = try #require(url.values.first?.value)
            #expect(try Data(contentsOf: file).count == 64)

            let decodable = Recorder<Slideshow, AFError>()
            session.download(server.url("/json")).publishDecodable(type: Slideshow.self, queue: .global()).value().subscribe(decodable)
            #expect(finished(try await decodable.completion()))
            #expect(decodable.values.map(\.slideshow.author) == ["Yours Truly"])
        }
    }

    @Test func aStreamPublisherRespectsDemand() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let request = session.streamRequest(server.url("/stream/3"))
            let recorder = Recorder<DataStreamRequest.Stream<String, AFError>, Never>(initialDemand: .max(1))
            request.publishString(queue: .global()).subscribe(recorder)
            #expect(try await waitUntil { request.isFinished })
            #expect(await recorder.received.waitUntil { $0.values.count == 1 })
            // The rest waited for demand.
            #expect(recorder.values.count == 1)
            #expect(!recorder.isComplete)
            recorder.subscription.withLock { $0 }?.request(.unlimited)
            #expect(finished(try await recorder.completion()))
            let chunks = recorder.values.compactMap { stream -> String? in
                if case .stream(.success(let text)) = stream.event { return text }
                return nil
            }
            #expect(chunks.joined().split(separator: "\n").count == 3)
            guard case .complete(let completion) = recorder.values.last?.event else {
                Issue.record("the last value is not the completion")
                return
            }
            #expect(completion.error == nil)
        }
    }

    @Test func aFinishedStreamPublisherLetsItsRequestGo() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let recorder = Recorder<DataStreamRequest.Stream<Data, AFError>, Never>()
            weak var released: DataStreamRequest?
            do {
                let request = session.streamRequest(server.url("/stream/2"))
                released = request
                request.publishData(queue: .global()).subscribe(recorder)
            }
            #expect(finished(try await recorder.completion()))
            #expect(try await waitUntil { released == nil }, "the request is freed once its stream has completed")
        }
    }

    @Test func aStreamsValuesFailWithItsError() async throws {
        let session = Session()
        let recorder = Recorder<Data, AFError>()
        session.streamRequest("http://127.0.0.1:1/").publishData(queue: .global()).value().subscribe(recorder)
        guard case .failure(let error) = try await recorder.completion() else {
            Issue.record("a refused stream did not fail")
            return
        }
        #expect(error.isSessionTaskError)
    }
}

/// Whether a publisher finished without an error.
func finished<Failure: Error>(_ completion: Subscribers.Completion<Failure>?) -> Bool {
    if case .finished = completion { return true }
    return false
}
#endif
