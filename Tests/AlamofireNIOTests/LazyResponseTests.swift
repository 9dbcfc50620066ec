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

/// The response is made into Foundation's `HTTPURLResponse` only when read, once: every reader
/// sees one object with the same fields as before.
@Suite struct LazyResponseTests {
    /// The request's response as it arrived, without making it.
    func received(_ request: Request) -> ReceivedResponse? {
        request.mutableState.withLock { $0.response }
    }

    @Test func aBodyHandedToASerializerNeverMakesTheResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            // Nothing is stored: a cache keeps Foundation's type.
            let configuration = URLSessionConfiguration.af.default
            configuration.urlCache = nil
            let session = Session(configuration: configuration)
            let request = session.request(server.url("/get"))
            let data = try await withTimeout { try await request.serializingData().value }
            #expect(!data.isEmpty)
            let decodable = session.request(server.url("/get"))
            let decoded = try await withTimeout { try await decodable.serializingDecodable(HTTPBinResponse.self).value }
            #expect(decoded.url == "http://127.0.0.1:\(server.port)/get")
            for request in [request, decodable] {
                let arrived = try #require(self.received(request))
                #expect(!arrived.hasMadeURLResponse)
                #expect(arrived.statusCode == 200)
            }
            // A response that may not be stored is not made for the cache either.
            let cached = keepAlive(Session()).request(server.url("/response-headers"), parameters: ["Cache-Control": "no-store"])
            _ = try await withTimeout { try await cached.serializingData().value }
            #expect(received(cached)?.hasMadeURLResponse == false)
            let stored = keepAlive(Session()).request(server.url("/get"))
            _ = try await withTimeout { try await stored.serializingData().value }
            #expect(received(stored)?.hasMadeURLResponse == true)
        }
    }

    @Test func everyReaderSeesOneResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let request = keepAlive(Session()).request(
                server.url("/response-headers"), parameters: ["X-Two": "b", "Content-Type": "text/plain"])
            let response = try await withTimeout { await request.serializingData().response }
            let http = try #require(response.response)
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "x-two") == "b")
            #expect(http.mimeType == "text/plain")
            #expect(request.response === http)
            #expect(response.map { $0.count }.response === http)
            #expect(response.metrics?.transactionMetrics.last?.response === http)
            #expect(request.task?.response === http)
        }
    }

    @Test func anEmptyBodyAsksTheResponseWhetherItMayBeEmpty() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let session = Session()
            let noContent = session.request(server.url("/status/204"))
            let empty = try await withTimeout { try await noContent.serializingData().value }
            #expect(empty.isEmpty)
            #expect(received(noContent)?.hasMadeURLResponse == true)
            // A 200 with an empty body may not be empty.
            let failed = try await withTimeout {
                await session.request(server.url("/status/200")).serializingDecodable(HTTPBinResponse.self).response
            }
            #expect(failed.error?.isResponseSerializationError == true)
        }
    }

    @Test func validationAndMonitorsReadTheResponse() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "tests.lazy-response.monitor"))
            let (statuses, seen) = AsyncStream<Int>.makeStream()
            monitor.dataTaskDidReceiveResponse = { _, _, response in seen.yield((response as? HTTPURLResponse)?.statusCode ?? 0) }
            let session = Session(eventMonitors: [monitor])
            let response = try await withTimeout { await session.request(server.url("/status/418")).validate().serializingData().response }
            #expect(response.error?.responseCode == 418)
            #expect(response.response?.statusCode == 418)
            #expect(try await withTimeout { await statuses.first { _ in true } } == 418)
        }
    }

    @Test func aMonitorIsOnlySentTheEventsItImplements() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let configuration = URLSessionConfiguration.af.default
            configuration.urlCache = nil
            let monitor = ThreeEventMonitor()
            let session = Session(configuration: configuration, eventMonitors: [monitor])
            var requests: [Request] = []
            for _ in 0..<3 {
                let request = session.request(server.url("/get"))
                _ = try await withTimeout { try await request.serializingData().value }
                requests.append(request)
                // The monitor's queue has run every event raised so far, and what its defaults recorded is read.
                await withCheckedContinuation { continuation in monitor.queue.async { continuation.resume() } }
            }
            // The first request's events ran the defaults, which record themselves; the
            // `didReceive response` the monitor leaves to them is not made for the later requests.
            #expect(received(requests[0])?.hasMadeURLResponse == true)
            #expect(received(requests[1])?.hasMadeURLResponse == false)
            #expect(received(requests[2])?.hasMadeURLResponse == false)
            let defaulted = DefaultedMonitorEvents.events(of: monitor)
            #expect(defaulted & MonitorEvent.dataTaskDidReceiveResponse.bit != 0)
            #expect(defaulted & MonitorEvent.requestDidCreateTask.bit != 0)
            for implemented in [MonitorEvent.requestDidResume, .requestDidCompleteTask, .requestDidFinish] {
                #expect(defaulted & implemented.bit == 0)
            }
            // The events it implements still arrive for every request, in order.
            let expected = requests.flatMap { ["resume \($0.id)", "complete \($0.id)", "finish \($0.id)"] }
            #expect(monitor.events.withLock { $0 } == expected)
        }
    }
}

/// A monitor implementing three events; the others are left to the protocol's empty defaults.
private final class ThreeEventMonitor: EventMonitor, Sendable {
    let queue = DispatchQueue(label: "tests.lazy-response.three-events")
    let events = Mutex<[String]>([])

    func requestDidResume(_ request: Request) { events.withLock { $0.append("resume \(request.id)") } }
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        events.withLock { $0.append("complete \(request.id)") }
    }
    func requestDidFinish(_ request: Request) { events.withLock { $0.append("finish \(request.id)") } }
}
