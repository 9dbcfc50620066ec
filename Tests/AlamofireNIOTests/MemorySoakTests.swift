import Foundation
import HTTPBinServer
import Testing

/// Many small requests through a `Session` in a process of its own (`alamofire-probe`): resident
/// memory after the warm-up must not grow with the number of requests. A transport that left one
/// promise pending per exchange kept about 230 bytes per request, which shows here as megabytes.
/// Each test's child process measures itself alone, so the tests run side by side.
@Suite struct MemorySoakTests {
    static let requests = 25_000
    /// Over HTTP/2 (twice as slow per request in a debug build), fewer: a leak of 200 bytes per
    /// exchange still shows (checked: 2,976 kB of growth over the 10,000 measured, 5,736 kB over
    /// HTTP/1.1's 20,000), but one of less than about 150 bytes would not.
    static let requestsOverHTTP2 = 12_500
    /// Growth allowed over the four fifths measured: under the 2 MB (HTTP/2) and 4 MB (HTTP/1.1)
    /// that 200 bytes per request would add, well over what allocator noise moves.
    static let allowedGrowthKilobytes = 1_500

    @Test func smallRequestsKeepMemoryFlat() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let report = try await runProbe("soak", server.url("/bytes/64").absoluteString, String(Self.requests))
            try Self.expectFlat(report, overHTTP2: false)
        }
    }

    /// The same over HTTP/2: every request a stream of one long-lived connection, whose per-stream
    /// state must all be released.
    @Test func smallRequestsOverHTTP2KeepMemoryFlat() async throws {
        try await HTTPBinServer.withServer(.init(tls: true)) { server async throws in
            let authority = FileManager.default.temporaryDirectory.appendingPathComponent("soak-ca-\(UUID().uuidString).der")
            try Data(try #require(server.certificates).certificateAuthority.certificateDER).write(to: authority)
            defer { try? FileManager.default.removeItem(at: authority) }
            let url = try #require(server.tlsURL(.valid, "/bytes/64"))
            let report = try await runProbe("soak-tls", url.absoluteString, authority.path, String(Self.requestsOverHTTP2))
            try Self.expectFlat(report, overHTTP2: true)
        }
    }

    /// Checks a soak's report: every request succeeded and memory stayed flat after the warm-up.
    static func expectFlat(_ report: [String: String], overHTTP2: Bool) throws {
        #expect(report["exit"] == "0")
        #expect(report["requests"] == String(overHTTP2 ? Self.requestsOverHTTP2 : Self.requests))
        #expect(report["failures"] == "0")
        #expect(report["protocol"] == (overHTTP2 ? "h2" : "http/1.1"))
        let warm = try #require(report["rss_kb_warm"].flatMap(Int.init))
        let end = try #require(report["rss_kb_end"].flatMap(Int.init))
        #expect(warm > 0)
        #expect(end - warm < Self.allowedGrowthKilobytes, "resident memory grew from \(warm) kB to \(end) kB")
    }

    /// Sessions made and released one after another, each after one request: their connections
    /// (file descriptors), event-loop work, URLSessions and memory go with them.
    @Test func releasedSessionsReleaseWhatTheyHeld() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let report = try await runProbe("sessions", server.url("/bytes/64").absoluteString, "300")
            #expect(report["exit"] == "0")
            #expect(report["sessions"] == "300")
            #expect(report["failures"] == "0")
            let (fdsWarm, fdsEnd) = try (#require(report["fds_warm"].flatMap(Int.init)), #require(report["fds_end"].flatMap(Int.init)))
            // Dispatch makes a timer descriptor per clock the first time one is used (the probe's last wait);
            // a descriptor kept per session would add hundreds.
            #expect(fdsEnd <= fdsWarm + 2, "open file descriptors went from \(fdsWarm) to \(fdsEnd)")
            let threadsWarm = try #require(report["threads_warm"].flatMap(Int.init))
            let threadsEnd = try #require(report["threads_end"].flatMap(Int.init))
            // Dispatch may keep a few more idle workers; a thread per session would add hundreds.
            #expect(threadsEnd <= threadsWarm + 8, "threads went from \(threadsWarm) to \(threadsEnd)")
            let rssWarm = try #require(report["rss_kb_warm"].flatMap(Int.init))
            let rssEnd = try #require(report["rss_kb_end"].flatMap(Int.init))
            #expect(rssEnd - rssWarm < 4_000, "resident memory grew from \(rssWarm) kB to \(rssEnd) kB")
        }
    }

    /// Many requests in flight at once through one session: every one completes, and once the
    /// session is released its connections are closed.
    @Test func requestsInFlightAllCompleteAndTheirConnectionsClose() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let report = try await runProbe("inflight", server.url("/bytes/64").absoluteString, "2000")
            #expect(report["exit"] == "0")
            #expect(report["requests"] == "2000")
            #expect(report["failures"] == "0")
            let before = try #require(report["fds_before"].flatMap(Int.init))
            let peak = try #require(report["fds_peak"].flatMap(Int.init))
            let after = try #require(report["fds_after"].flatMap(Int.init))
            #expect(peak > before)
            #expect(after <= before + 2, "open file descriptors: \(before) before, \(after) after")
        }
    }

    /// A 1 GiB `streamRequest` consumed more slowly than loopback delivers it: back-pressure keeps the
    /// process's peak resident memory under 100 MB (without it the body would pile up in memory).
    /// The probe serves the stream itself, so the test process's event loops stay free for other tests.
    @Test func aSlowlyConsumedGigabyteStreamStaysUnder100MB() async throws {
        let total = 1 << 30
        let report = try await runProbe("stream", "/range/\(total)?chunk_size=65536")
        #expect(report["exit"] == "0")
        #expect(report["error"] == "none")
        #expect(report["bytes"] == String(total))
        let peak = try #require(report["rss_kb_peak"].flatMap(Int.init))
        #expect(peak > 0 && peak < 100_000, "peak resident memory \(peak) kB")
    }

    /// 512 MiB of WebSocket messages (1 MiB each) taken by an async consumer more slowly than
    /// loopback delivers them: the unconsumed messages hold the socket's reads, so the process's peak
    /// resident memory stays under 100 MB.
    @Test func aSlowlyConsumedHalfGigabyteOfWebSocketMessagesStaysUnder100MB() async throws {
        let report = try await runProbe("websocket-stream", "512", String(1 << 20))
        #expect(report["exit"] == "0")
        #expect(report["error"] == "none")
        #expect(report["messages"] == "512")
        #expect(report["bytes"] == String(512 << 20))
        let peak = try #require(report["rss_kb_peak"].flatMap(Int.init))
        #expect(peak > 0 && peak < 100_000, "peak resident memory \(peak) kB")
    }

    /// A server that announces a 4 GB body and sends 10 bytes: the `GET` fails as the connection
    /// lost, the `HEAD` succeeds, and neither makes the client set aside what was announced. The
    /// probe reports its peak address space, where a reservation shows even though its pages are
    /// never touched; an AlamofireNIO process's whole address space is well under 4 GB.
    @Test func anAnnouncedLengthIsNotReservedBeforeItsBytesArrive() async throws {
        let report = try await runProbe("lying-length")
        #expect(report["exit"] == "0")
        #expect(report["head"] == "200")
        #expect(report["get"] == String(URLError.Code.networkConnectionLost.rawValue))
        // A reservation of the announced 4 GB would add 4,000,000 kB; the rest of the exchange adds
        // little (measured: 0 kB on 2 cores) beyond the threads the warm-up request started.
        let growth = try #require(report["vm_kb_growth"].flatMap(Int.init))
        #expect(growth >= 0 && growth < 1_000_000, "address space growth \(growth) kB")
    }

    /// Runs `alamofire-probe` (built beside the tests) and returns its `key=value` report.
    func runProbe(_ arguments: String...) async throws -> [String: String] {
        let (status, output) = try await runProgram(probeURL.path, arguments, limit: 300, mergingErrors: false, endingWithParent: true)
        var report: [String: String] = ["exit": String(status)]
        for field in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let pair = field.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { report[String(pair[0])] = String(pair[1]) }
        }
        return report
    }
}
