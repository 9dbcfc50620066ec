import ChildProcess
import Foundation
import HTTPBinServer
import NIOHTTP1
import Testing

/// Runs the `httpbin-server` executable in a process of its own, so its memory can be measured
/// apart from the test process. It ends with the tests, should they crash (its lifeline).
final class ServerProcess {
    let process: ChildProcess
    let baseURL: URL

    /// - Parameter capturingErrors: whether its standard error goes to `process.errors` instead of the tests' own.
    init(capturingErrors: Bool = false) async throws {
        // The test bundle and the executable are built into the same directory.
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let process = try ChildProcess(
            directory.appendingPathComponent("httpbin-server").path, ["--port", "0"], mergingErrors: false,
            capturingErrors: capturingErrors, endingWithParent: true)
        self.process = process
        let line = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var bytes: [UInt8] = []
                while let byte = try? process.output.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
                    bytes.append(byte)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        guard line.hasPrefix("http "), let url = URL(string: String(line.dropFirst(5))) else {
            process.signal(SIGTERM)
            process.waitUntilExit()
            throw TestClientError.unexpectedPart("server printed \(line)")
        }
        baseURL = url
    }

    /// The most resident memory the process has had, from /proc.
    var peakResidentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    func stop() {
        process.signal(SIGTERM)
        process.waitUntilExit()
    }
}

@Suite struct ServerLifelineTests {
    @Test func theServerEndsWhenTheProcessThatStartedItLetsGo() async throws {
        let process = try await ServerProcess(capturingErrors: true).process
        // Killed after 30 s if the lifeline did not end it: the test then fails instead of waiting.
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { process.signal(SIGKILL) }
        process.releaseLifeline()
        let (_, errors, termination) = await process.outputErrorsAndTermination()
        #expect(termination == .exited(1))
        #expect(String(decoding: errors, as: UTF8.self) == "httpbin-server: the process that started this one has ended\n")
    }
}

@Suite struct LargeTransferTests {
    static let gibibyte = 1 << 30

    @Test func oneGiBDownloadAndUploadKeepServerMemoryFlat() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let baseline = server.peakResidentBytes
        try await TestConnection.with(server.baseURL) { connection in
            let download = try await connection.send(.GET, "/bytes/\(Self.gibibyte)?seed=11", keepBody: false)
            #expect(download.status == 200)
            #expect(download.bodyCount == Self.gibibyte)

            let upload = try await connection.send(.POST, "/upload", body: .generated(count: Self.gibibyte, seed: 12))
            #expect(upload.status == 200)
            #expect(upload.json["bytes"] as? Int == Self.gibibyte)
        }
        let peak = server.peakResidentBytes
        // Both bodies stream through in 64 KiB pieces: the server's peak grows by a few MB, not by 1 GiB.
        #expect(baseline > 0)
        #expect(peak - baseline < 64 * 1024 * 1024, "server peak RSS grew from \(baseline) to \(peak) bytes")
    }
}
