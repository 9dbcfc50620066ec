import ChildProcess
import Foundation
import HTTPBinServer
import Testing

/// One GiB through the transport in a process of its own (`transport-probe`), whose peak resident
/// memory must stay under 100 MB: bodies stream, they are never held.
/// Serialized: three gibibytes at once would starve the two cores the rest of the suite shares.
@Suite(.serialized) struct TransportMemoryTests {
    static let gibibyte = 1 << 30
    /// 100 MB; under AddressSanitizer (`Scripts/sanitize.sh address` sets `ASAN_OPTIONS`), whose
    /// shadow memory and own allocations add about 40 MB to any process, 150 MB.
    static let limitKilobytes = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil ? 100 * 1000 : 150 * 1000

    /// Runs the probe and returns its `key=value` report.
    func probe(_ arguments: String...) async throws -> [String: String] {
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let process = try ChildProcess(
            directory.appendingPathComponent("transport-probe").path, arguments, mergingErrors: false, endingWithParent: true)
        let (data, termination) = await process.outputAndTermination()
        var report: [String: String] = ["exit": String(termination.status)]
        for field in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let pair = field.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { report[String(pair[0])] = String(pair[1]) }
        }
        return report
    }

    @Test func oneGiBDownloadStaysUnder100MB() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let report = try await probe("download", server.url("/bytes/\(Self.gibibyte)?seed=3").absoluteString)
            #expect(report["exit"] == "0")
            #expect(report["status"] == "200")
            #expect(report["bytes"] == String(Self.gibibyte))
            let peak = try #require(report["peak_rss_kb"].flatMap(Int.init))
            #expect(peak < Self.limitKilobytes, "peak RSS \(peak) kB")
        }
    }

    @Test func oneGiBStreamedUploadStaysUnder100MB() async throws {
        try await HTTPBinServer.withServer { server async throws in
            let report = try await probe("upload", server.url("/upload").absoluteString, String(Self.gibibyte))
            #expect(report["exit"] == "0")
            #expect(report["response"]?.hasPrefix("{\"bytes\":\(Self.gibibyte),") == true)
            let peak = try #require(report["peak_rss_kb"].flatMap(Int.init))
            #expect(peak < Self.limitKilobytes, "peak RSS \(peak) kB")
        }
    }

    @Test func oneGiBFileUploadStaysUnder100MB() async throws {
        // A sparse file: a gibibyte of zeros that costs no disk.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sparse-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(Self.gibibyte))
        try handle.close()
        try await HTTPBinServer.withServer { server async throws in
            let report = try await probe("upload-file", server.url("/upload").absoluteString, file.path)
            #expect(report["exit"] == "0")
            // SHA-256 of 2^30 zero bytes.
            #expect(
                report["response"]
                    == "{\"bytes\":\(Self.gibibyte),\"sha256\":\"49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14\"}")
            let peak = try #require(report["peak_rss_kb"].flatMap(Int.init))
            #expect(peak < Self.limitKilobytes, "peak RSS \(peak) kB")
        }
    }
}
