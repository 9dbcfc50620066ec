#if Metrics
import AlamofireNIO
import AlamofireNIOMetrics
import Foundation
import HTTPBinServer
import Metrics
import MetricsTestKit
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RequestMetrics` with swift-metrics' test kit: the values after known traffic.
@Suite struct MetricsTests {
    static func dimensions(_ method: String, port: Int) -> [(String, String)] {
        [("http.request.method", method), ("url.scheme", "http"), ("server.address", "127.0.0.1")]
    }

    @Test func knownTrafficGivesExactValues() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let metrics = TestMetrics()
            let monitor = RequestMetrics(factory: metrics)
            let configuration = URLSessionConfiguration.af.default
            configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            let session = Session(
                configuration: configuration,
                interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01),
                eventMonitors: [monitor])

            let get = try await session.request(server.url("/get")).serializingData().value
            _ = try await session.request(server.url("/redirect/1")).serializingData().value
            _ = try await session.upload(Data(repeating: 7, count: 100), to: server.url("/post")).serializingData().value
            _ = await session.request(server.url("/status/503")).validate().serializingData().response
            _ = try await session.request(server.url("/cache/60")).serializingData().value
            _ = try await session.request(server.url("/cache/60")).serializingData().value
            await drain(monitor.queue)

            let get2xx = Self.dimensions("GET", port: server.port) + [("http.response.status_class", "2xx")]
            // A request ends once its serializers have run, which may come after its response.
            let ended = { (try? metrics.expectMeter("http.client.active_requests", Self.dimensions("GET", port: server.port)))?.lastValue }
            _ = try await waitUntil {
                (try? metrics.expectTimer("http.client.request.duration", get2xx))?.values.count == 4 && ended() == 0
            }
            #expect(try metrics.expectTimer("http.client.request.duration", get2xx).values.count == 4)
            let failed = Self.dimensions("GET", port: server.port) + [("http.response.status_class", "5xx"), ("error.type", "503")]
            #expect(try metrics.expectTimer("http.client.request.duration", failed).values.count == 1)
            let post = Self.dimensions("POST", port: server.port)
            #expect(
                try metrics.expectTimer("http.client.request.duration", post + [("http.response.status_class", "2xx")]).values.count == 1)

            let active = try metrics.expectMeter("http.client.active_requests", Self.dimensions("GET", port: server.port))
            #expect(active.lastValue == 0)
            #expect(active.values.max() == 1)
            let received = try metrics.expectRecorder("http.client.response.body.size", Self.dimensions("GET", port: server.port))
            #expect(received.values.first == Double(get.count))
            #expect(try metrics.expectRecorder("http.client.request.body.size", post).values == [100])
            #expect(try metrics.expectCounter("alamofire.client.redirects", Self.dimensions("GET", port: server.port)).totalValue == 1)
            #expect(try metrics.expectCounter("alamofire.client.retries", Self.dimensions("GET", port: server.port)).totalValue == 1)
            #expect(try metrics.expectCounter("alamofire.client.cache.hits", Self.dimensions("GET", port: server.port)).totalValue == 1)
            let connections = try metrics.expectTimer(
                "alamofire.client.connection.establishment.duration", [("url.scheme", "http"), ("server.address", "127.0.0.1")])
            #expect(connections.values.count == 1, "one connection, reused for every request")
        }
    }

    @Test func openConnectionsAreCountedPerOriginAsActiveAndIdle() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let metrics = TestMetrics()
            let session = Session(eventMonitors: [RequestMetrics(factory: metrics)])
            // Two at once need two HTTP/1.1 connections; both stay open, idle, once answered.
            // Released on every path: a failed wait would otherwise leave both requests held.
            defer { server.release("pair") }
            async let first = session.request(server.url("/hold/pair")).serializingData().value
            async let second = session.request(server.url("/hold/pair")).serializingData().value
            try await server.waitUntil { $0.heldRequests["pair"] == 2 }
            server.release("pair")
            _ = try await (first, second)
            let origin = [("url.scheme", "http"), ("server.address", "127.0.0.1"), ("server.port", "\(server.port)")]
            let active = try metrics.expectMeter("http.client.open_connections", [("http.connection.state", "active")] + origin)
            let idle = try metrics.expectMeter("http.client.open_connections", [("http.connection.state", "idle")] + origin)
            // The last report may come just after the responses are handed over.
            #expect(try await waitUntil { idle.lastValue == 2 })
            #expect(active.values.max() == 2)
            #expect(active.lastValue == 0)
            // A third request takes an idle connection: one active, one idle, none opened.
            let (activeBefore, idleBefore) = (active.values.count, idle.values.count)
            _ = try await session.request(server.url("/get")).serializingData().value
            #expect(try await waitUntil { idle.values.count == idleBefore + 2 })
            #expect(Array(active.values.dropFirst(activeBefore)) == [1, 0])
            #expect(Array(idle.values.dropFirst(idleBefore)) == [1, 2])
        }
    }

    @Test func aFailedRequestIsTimedWithItsErrorType() async throws {
        let metrics = TestMetrics()
        let monitor = RequestMetrics(factory: metrics)
        let session = Session(eventMonitors: [monitor])
        _ = await session.request("http://127.0.0.1:1/").serializingData().response
        let dimensions = [
            ("http.request.method", "GET"), ("url.scheme", "http"), ("server.address", "127.0.0.1"), ("http.response.status_class", "none"),
            ("error.type", "URLError.-1004"),
        ]
        // The request ends once its serializers have run, which may come after its response.
        _ = try await waitUntil { (try? metrics.expectTimer("http.client.request.duration", dimensions)) != nil }
        #expect(try metrics.expectTimer("http.client.request.duration", dimensions).values.count == 1)
    }
}
#endif
