import AFSynchronization
import AlamofireNIO
import Foundation
import HTTPBinServer
import Logging
import Synchronization
import Testing

/// `LoggingEventMonitor`: one line per request, with its metadata.
@Suite struct LoggingEventMonitorTests {
    @Test func eachRequestIsOneDebugLineWithItsMetadata() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let monitor = LoggingEventMonitor(logger: capture.logger("test"))
            let session = Session(eventMonitors: [monitor])
            let request = session.request(server.url("/status/201"), parameters: ["q": "secret"])
            _ = await request.serializingData(emptyResponseCodes: [201]).response
            // The request ends once its serializers have run, which may come after the response.
            #expect(await capture.entries.waitUntil { $0.count == 1 })
            await drain(monitor.queue)
            let entries = capture.entries.value
            #expect(entries.count == 1)
            let entry = try #require(entries.first)
            let url = "http://127.0.0.1:\(server.port)/status/201?q=REDACTED"
            #expect(entry.level == .debug)
            #expect(entry.message.hasPrefix("GET \(url) 201 "))
            #expect(entry.message.hasSuffix(" ms"))
            #expect(entry.metadata["request.id"] == "\(request.id)")
            #expect(entry.metadata["http.request.method"] == "GET")
            #expect(entry.metadata["url.full"] == "\(url)")
            #expect(entry.metadata["http.response.status_code"] == "201")
            #expect(entry.metadata["duration_ms"] != nil)
            #expect(entry.metadata["error.type"] == nil)
        }
    }

    @Test func aMonitorAddedToOneRequestLogsIt() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let capture = LogCapture()
            let monitor = LoggingEventMonitor(logger: capture.logger("test"))
            let session = Session()
            let request = session.request(server.url("/get")).eventMonitor(monitor)
            _ = await request.serializingData().response
            #expect(await capture.entries.waitUntil { $0.count == 1 })
            #expect(capture.entries.value.first?.metadata["request.id"] == "\(request.id)")
        }
    }

    @Test func aFailureCarriesItsErrorAndNothingIsLoggedBelowTheLoggersLevel() async throws {
        let capture = LogCapture()
        let monitor = LoggingEventMonitor(logger: capture.logger("test"), level: .info)
        let session = Session(eventMonitors: [monitor])
        _ = await session.request("http://127.0.0.1:1/").serializingData().response
        #expect(await capture.entries.waitUntil { $0.count == 1 })
        let entry = try #require(capture.entries.value.first)
        #expect(entry.level == .info)
        #expect(entry.metadata["error.type"] == "URLError.-1004")
        #expect(entry.message.contains(" failed: "))

        var quiet = capture.logger("test")
        quiet.logLevel = .info
        let silent = LoggingEventMonitor(logger: quiet, level: .debug)
        let silentSession = Session(eventMonitors: [silent])
        _ = await silentSession.request("http://127.0.0.1:1/").serializingData().response
        await drain(silent.queue)
        #expect(capture.entries.value.count == 1)
    }
}
