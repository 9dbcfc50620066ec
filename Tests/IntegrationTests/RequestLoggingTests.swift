import AFSynchronization
import AlamofireNIO
import Foundation
import HTTPBinServer
import Logging
import Synchronization
import Testing

/// Each request's logger: the session's or its own (`logging(to:)`), its lines with the request's
/// metadata, down to the transport's.
@Suite struct RequestLoggingTests {
    @Test func aRedirectedRequestsLinesCarryItsIdMethodAndRedactedURL() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let session = Session(logger: capture.logger("session"))
            let request = session.request(server.url("/redirect-to?url=/get&status_code=302"))
            _ = try await request.serializingData().value
            let lines = capture.lines(of: request)
            #expect(lines.map(\.message) == ["sending", "redirected", "finished"])
            #expect(lines.map(\.level) == [.trace, .debug, .trace])
            let url = "http://127.0.0.1:\(server.port)/redirect-to?url=REDACTED&status_code=REDACTED"
            for line in lines {
                #expect(line.metadata["http.request.method"] == "GET")
                #expect(line.metadata["url.full"] == "\(url)")
            }
            #expect(lines[1].metadata["http.response.status_code"] == "302")
            #expect(lines[1].metadata["url.redirect"] == "http://127.0.0.1:\(server.port)/get")
            #expect(lines[2].metadata["http.response.status_code"] == "200")
            #expect(lines[2].metadata["error.type"] == nil)
        }
    }

    @Test func aRetriedRequestLogsTheRetryAndEachAttempt() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let session = Session(interceptor: RetryPolicy(retryLimit: 2), logger: capture.logger("session"))
            let request = session.request(server.faultURL("/fail-once/\(UUID().uuidString)"))
            _ = try await request.serializingString().value
            let lines = capture.lines(of: request)
            #expect(lines.map(\.message) == ["sending", "retrying", "sending", "finished"])
            #expect(lines.map { $0.metadata["http.request.resend_count"] } == ["0", nil, "1", nil])
            #expect(lines[1].level == .debug)
            #expect(lines[1].metadata["error.type"] == "URLError.\(URLError.Code.networkConnectionLost.rawValue)")
            #expect(lines[1].metadata["retry.delay_s"] == "0.5")
        }
    }

    @Test func aRequestGivenALoggerLogsThereAndNotToItsSession() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let sessionCapture = LogCapture()
            let callCapture = LogCapture()
            let session = Session(logger: sessionCapture.logger("session"))
            var own = callCapture.logger("call")
            own[metadataKey: "handler.id"] = "h-7"
            let request = session.request(server.url("/get")).logging(to: own)
            _ = try await request.serializingData().value
            let lines = callCapture.lines(of: request)
            #expect(lines.map(\.message) == ["sending", "finished"])
            #expect(lines.allSatisfy { $0.metadata["handler.id"] == "h-7" })
            #expect(sessionCapture.lines(of: request).isEmpty)
            // Another request logs to the session.
            let other = session.request(server.url("/get"))
            _ = try await other.serializingData().value
            #expect(sessionCapture.lines(of: other).map(\.message) == ["sending", "finished"])
            #expect(request.logger.label == "call")
            #expect(request.logger[metadataKey: "request.id"] == "\(request.id)")
            #expect(request.logger[metadataKey: "url.full"] == "http://127.0.0.1:\(server.port)/get")
            #expect(other.logger.label == "session")
        }
    }

    @Test func theTaskLocalLoggerOfWithLoggerCanBeTheRequests() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let session = Session()
            let request = withLogger(capture.logger("task")) { _ in session.request(server.url("/get")).logging(to: Logger.current) }
            _ = try await request.serializingData().value
            #expect(capture.lines(of: request).map(\.message) == ["sending", "finished"])
        }
    }

    @Test func theTransportsLinesForAnExchangeCarryTheRequestsMetadata() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let session = Session(logger: capture.logger("session"))
            // The fault server answers the first request on a connection and closes on the second,
            // unanswered: the transport sends it again on a new connection and says so.
            _ = try await session.request(server.faultURL("/close-on-reuse")).serializingString().value
            let second = session.request(server.faultURL("/close-on-reuse"))
            #expect(try await second.serializingString().value == "ok")
            let retrying = capture.lines(of: second).filter { $0.message == "retrying" }
            #expect(retrying.count == 1)
            #expect(retrying.first?.level == .debug)
            #expect(retrying.first?.metadata["url.full"] == "http://127.0.0.1:\(server.faultPort)/close-on-reuse")
            #expect(retrying.first?.metadata["fresh"] == "true")
        }
    }
}
