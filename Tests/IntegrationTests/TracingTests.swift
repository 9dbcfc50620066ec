#if Tracing
import AlamofireNIO
import AlamofireNIOTracing
import Foundation
import HTTPBinServer
import InMemoryTracing
import Testing
import Tracing

/// `RequestTracer` with swift-distributed-tracing's in-memory tracer: exact spans for a plain, a
/// redirected, a retried and a failed request.
@Suite struct TracingTests {
    /// A session traced into a tracer of its own.
    struct Traced {
        let tracer = InMemoryTracer()
        let monitor: RequestTracer
        let session: Session

        init(retryPolicy: RetryPolicy? = nil, trusting roots: [SecCertificate] = []) {
            monitor = RequestTracer(tracer: tracer)
            session = Session(
                interceptor: Interceptor(adapters: [monitor], retriers: retryPolicy.map { [$0] } ?? []), eventMonitors: [monitor],
                additionalTrustRoots: roots)
        }

        /// The finished spans once `count` have finished.
        func finishedSpans(_ count: Int) async throws -> [FinishedInMemorySpan] {
            await drain(monitor.queue)
            #expect(try await waitUntil { tracer.finishedSpans.count >= count })
            return tracer.finishedSpans
        }
    }

    @Test func aPlainRequestIsOneClientSpanWithTheConventionsAttributes() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let traced = Traced()
            let echoed = try await traced.tracer.withSpan("parent") { _ in
                try await traced.session.request(server.url("/get"), parameters: ["token": "secret"]).validate()
                    .serializingDecodable(Echo.self).value
            }
            let spans = try await traced.finishedSpans(2)
            let span = try #require(spans.first { $0.operationName == "GET" })
            let parent = try #require(spans.first { $0.operationName == "parent" })
            #expect(span.kind == .client)
            #expect(span.parentSpanID == parent.spanID)
            #expect(span.traceID == parent.traceID)
            #expect(
                span.attributes
                    == SpanAttributes([
                        "http.request.method": .string("GET"), "url.full": .string("http://127.0.0.1:\(server.port)/get?token=REDACTED"),
                        "url.scheme": .string("http"), "server.address": .string("127.0.0.1"), "server.port": .int64(Int64(server.port)),
                        "network.protocol.name": .string("http"), "network.protocol.version": .string("1.1"),
                        "http.response.status_code": .int64(200),
                    ]))
            #expect(span.events.isEmpty)
            #expect(span.status == nil)
            // The context went out in the request's headers, with the tracer's propagation.
            #expect(echoed.headers["In-Memory-Trace-Id"] == span.traceID)
            #expect(echoed.headers["In-Memory-Span-Id"] == span.spanID)
        }
    }

    /// Over HTTPS, where the server's ALPN offers HTTP/2 first: the span says version 2.
    @Test func anHTTP2RequestSaysItsProtocolVersion() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let authority = try #require(server.certificates).certificateAuthority
            let traced = Traced(trusting: [try SecCertificate(derEncoded: Data(authority.certificateDER))])
            let url = try #require(server.tlsURL(.valid, "/get"))
            _ = try await traced.session.request(url).validate().serializingData().value
            let span = try #require(try await traced.finishedSpans(1).first)
            let (host, port) = (try #require(url.host), try #require(url.port))
            #expect(
                span.attributes
                    == SpanAttributes([
                        "http.request.method": .string("GET"), "url.full": .string(url.absoluteString), "url.scheme": .string("https"),
                        "server.address": .string(host), "server.port": .int64(Int64(port)), "network.protocol.name": .string("http"),
                        "network.protocol.version": .string("2"), "http.response.status_code": .int64(200),
                    ]))
        }
    }

    @Test func redirectsAreEventsOfTheOneSpan() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let traced = Traced()
            _ = try await traced.session.request(server.url("/redirect/2")).serializingData().value
            let span = try #require(try await traced.finishedSpans(1).first)
            #expect(span.events.map(\.name) == ["http.redirect", "http.redirect"])
            #expect(
                span.events.map { $0.attributes.get("url.full") } == [
                    .string("http://127.0.0.1:\(server.port)/relative-redirect/1"), .string("http://127.0.0.1:\(server.port)/get"),
                ])
            #expect(span.events.map { $0.attributes.get("http.response.status_code") } == [.int64(302), .int64(302)])
            #expect(span.attributes.get("http.response.status_code") == .int64(200))
        }
    }

    @Test func aRetriedRequestCountsItsResendsAndEndsWithTheErrorStatus() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let traced = Traced(retryPolicy: RetryPolicy(retryLimit: 1, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01))
            let response = await traced.session.request(server.url("/status/503")).validate().serializingData().response
            #expect(response.response?.statusCode == 503)
            let span = try #require(try await traced.finishedSpans(1).first)
            #expect(span.events.map(\.name) == ["http.retry"])
            #expect(span.events.first?.attributes.get("http.request.resend_count") == .int64(1))
            #expect(span.attributes.get("http.request.resend_count") == .int64(1))
            #expect(span.attributes.get("http.response.status_code") == .int64(503))
            #expect(span.attributes.get("error.type") == .string("503"))
            #expect(span.status?.code == .error)
        }
    }

    @Test func aRequestItsSerializerRetriesIsStillOneSpan() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let tracer = InMemoryTracer()
            let monitor = RequestTracer(tracer: tracer)
            // Retries once whatever failed: here the decoding, after the request finished.
            let once = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
            let session = Session(interceptor: Interceptor(adapters: [monitor], retriers: [once]), eventMonitors: [monitor])
            let response = await session.request(server.url("/json")).serializingDecodable(Echo.self).response
            #expect(response.error?.isResponseSerializationError == true)
            await drain(monitor.queue)
            #expect(try await waitUntil { tracer.finishedSpans.count == 1 })
            // Ended once, after the retry: its span has the retry's event.
            let spans = tracer.finishedSpans
            #expect(spans.first?.events.map(\.name) == ["http.retry"])
            #expect(spans.first?.attributes.get("http.request.resend_count") == .int64(1))
            // The exchanges succeeded: a decoding failure is the response's, not the request's.
            #expect(spans.first?.attributes.get("error.type") == nil)
            #expect(spans.first?.status == nil)
        }
    }

    @Test func aRequestSuspendedBeforeItStartedIsTracedWhenResumed() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let traced = Traced()
            let request = traced.session.request(server.url("/get"))
            request.suspend()
            request.resume()
            _ = await request.serializingData().response
            let span = try #require(try await traced.finishedSpans(1).first)
            #expect(span.operationName == "GET")
            #expect(span.attributes.get("http.response.status_code") == .int64(200))
        }
    }

    @Test func aFailedRequestRecordsItsErrorType() async throws {
        let traced = Traced()
        let response = await traced.session.request("http://127.0.0.1:1/refused").serializingData().response
        #expect(response.error != nil)
        let span = try #require(try await traced.finishedSpans(1).first)
        #expect(span.attributes.get("error.type") == .string("URLError.-1004"))
        #expect(span.attributes.get("http.response.status_code") == nil)
        #expect(span.attributes.get("server.port") == .int64(1))
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
    }

    @Test func aURLThatCannotBeMadeEndsItsSpanNamedHTTP() async throws {
        let traced = Traced()
        let response = await traced.session.request("http://[::1").serializingData().response
        #expect(response.error?.isInvalidURLError == true)
        let span = try #require(try await traced.finishedSpans(1).first)
        #expect(span.operationName == "HTTP")
        #expect(span.attributes.get("error.type") == .string("invalidURL"))
    }
}

/// httpbin's echo: its headers.
struct Echo: Decodable, Sendable {
    let headers: [String: String]
}
#endif
